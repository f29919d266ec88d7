//! Tests of the images module with real tools: normalization and lookup, the table's
//! invariants, and real builds of the quick images (pause with gcc, a static binary) through the
//! cache. The Debian builds take minutes; they run by hand (`--ignored`).

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::*;

#[test]
fn normalize_makes_references_explicit() {
    let cases = [
        ("nginx", "docker.io/library/nginx:latest"),
        ("nginx:1.27", "docker.io/library/nginx:1.27"),
        ("library/nginx", "docker.io/library/nginx:latest"),
        ("docker.io/nginx", "docker.io/library/nginx:latest"),
        (
            "index.docker.io/library/busybox:1.28",
            "docker.io/library/busybox:1.28",
        ),
        ("curlimages/curl:8.16.0", "docker.io/curlimages/curl:8.16.0"),
        (
            "registry.k8s.io/pause:3.10.1",
            "registry.k8s.io/pause:3.10.1",
        ),
        (
            "registry.k8s.io/coredns/coredns:v1.15.0",
            "registry.k8s.io/coredns/coredns:v1.15.0",
        ),
        ("localhost:5000/app", "localhost:5000/app:latest"),
        ("localhost/app:v1", "localhost/app:v1"),
        (" busybox ", "docker.io/library/busybox:latest"),
        ("nginx@sha256:abc", "docker.io/library/nginx@sha256:abc"),
        (
            "nginx:1.27@sha256:abc",
            "docker.io/library/nginx:1.27@sha256:abc",
        ),
    ];
    for (given, expected) in cases {
        assert_eq!(normalize(given), expected, "normalize({given:?})");
    }
}

#[test]
fn lookup_finds_rows_by_any_spelling() {
    let name = |r: &str| lookup(r).map(Row::name);
    assert_eq!(name("nginx"), Some("docker.io/library/nginx:latest"));
    assert_eq!(name("nginx:stable"), Some("docker.io/library/nginx:latest"));
    assert_eq!(
        name("busybox:1.28"),
        Some("docker.io/library/busybox:latest")
    );
    assert_eq!(
        name("curlimages/curl:8.16.0"),
        Some("docker.io/curlimages/curl:8.16.0")
    );
    assert_eq!(
        name("curlimages/curl"),
        Some("docker.io/curlimages/curl:8.16.0")
    );
    assert_eq!(
        name("registry.k8s.io/pause:3.10.1"),
        Some("registry.k8s.io/pause:3.10.1")
    );
    assert_eq!(name("pause:3.10.1"), None);
    assert_eq!(name("nginx:1.25"), None);
    // The sample images Istio's samples name, and the httpbin go-httpbin stands in for.
    assert_eq!(
        name("docker.io/fortio/fortio:latest_release"),
        Some("docker.io/fortio/fortio:latest_release")
    );
    assert_eq!(
        name("mccutchen/go-httpbin:v2.15.0"),
        Some("docker.io/mccutchen/go-httpbin:v2.15.0")
    );
    assert_eq!(
        name("kennethreitz/httpbin"),
        Some("docker.io/kennethreitz/httpbin:latest")
    );
}

#[test]
fn no_recipe_names_the_table_and_what_it_serves() {
    let err = resolve(["nginx", "redis:7"])
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("\"redis:7\""), "{err}");
    assert!(err.contains("src/images/table.rs"), "{err}");
    assert!(err.contains("docker.io/library/busybox:1.28"), "{err}");
    let rows = resolve(["nginx", "nginx:1.27", "busybox"]).expect("both served");
    assert_eq!(rows.len(), 2);
}

#[test]
fn istios_images_are_served_under_the_tag_of_any_istio_version_and_tagged_with_the_cells() {
    let pilot = lookup("docker.io/istio/pilot:1.31-dev.eed52ebb").expect("pilot is served");
    assert!(pilot.per_istio_version());
    assert_eq!(
        lookup("istio/proxyv2:1.30.2").map(Row::name),
        Some("docker.io/istio/proxyv2:{istio}")
    );
    assert_eq!(
        lookup("gcr.io/istio-testing/app").map(Row::name),
        Some("gcr.io/istio-testing/app:latest")
    );
    // A tag is one path component: no repository below pilot is served.
    assert!(lookup("docker.io/istio/pilot:x/y").is_none());
    assert_eq!(
        pilot.references_for(Some("1.31-dev.eed52ebb")),
        Some(vec!["docker.io/istio/pilot:1.31-dev.eed52ebb".to_owned()])
    );
    assert_eq!(pilot.references_for(None), None);
    let app = lookup("docker.io/istio/app:1.30-dev.9739e10e").expect("app");
    assert!(
        app.references_for(Some("1.30-dev.9739e10e"))
            .expect("tagged")
            .contains(&"docker.io/istio/app:1.30-dev.9739e10e".to_owned())
    );
    // What upstream Envoy needs from istiod is the pilot image's default environment.
    for env in [
        "PILOT_ENABLE_METADATA_EXCHANGE=false",
        "PILOT_ENABLE_ALPN_FILTER=false",
    ] {
        assert!(pilot.config.env.contains(&env), "{env}");
    }
    assert!(common().iter().all(|r| !r.per_istio_version()));
    // Istio's three images, and the samples' built from each version's samples/.
    assert_eq!(per_istio_version().len(), 12);
    // Bookinfo's images as its bookinfo.yaml names them; reviews' versions differ only in their
    // environment, as the sample's build arguments make them.
    for (reference, env) in [
        (
            "examples-bookinfo-reviews-v1:1.20.3",
            "ENABLE_RATINGS=false",
        ),
        ("examples-bookinfo-reviews-v2:1.20.3", "STAR_COLOR=black"),
        ("examples-bookinfo-reviews-v3:1.20.3", "STAR_COLOR=red"),
    ] {
        let row = lookup(&format!("registry.istio.io/release/{reference}")).expect("served");
        assert!(row.per_istio_version(), "{reference}");
        assert!(row.config.env.contains(&env), "{reference}: {env}");
        assert!(lookup(&format!("istio/{reference}")).is_some_and(|r| std::ptr::eq(r, row)));
    }
    let hello = lookup("registry.istio.io/release/examples-helloworld-v2:1.0").expect("served");
    assert!(hello.per_istio_version());
    assert_eq!(
        hello.references_for(Some("1.31-dev.eed52ebb")),
        Some(vec![
            "registry.istio.io/release/examples-helloworld-v2:1.0".to_owned()
        ])
    );
    assert!(served().contains("docker.io/istio/pilot:<Istio version>"));
}

#[test]
fn table_references_are_normalized_and_unique() {
    let mut seen = std::collections::BTreeSet::new();
    for row in table() {
        assert!(!row.references.is_empty());
        assert!(
            !row.contents.is_empty(),
            "{} says what it contains",
            row.name()
        );
        for reference in row.references {
            let example = reference.replace(ISTIO_TAG, "1.31-dev.eed52ebb");
            assert_eq!(normalize(&example), example);
            assert!(seen.insert(*reference), "{reference} is in two rows");
        }
    }
}

/// Entries of a tar by name: (mode, bytes or link target).
type Entries = BTreeMap<String, (u32, Vec<u8>)>;

/// Every entry of a tar.
fn entries(archive: &Path) -> Entries {
    let mut files = BTreeMap::new();
    let mut tar = tar::Archive::new(std::fs::File::open(archive).expect("open archive"));
    for entry in tar.entries().expect("entries") {
        let mut entry = entry.expect("entry");
        let name = entry.path().expect("path").to_string_lossy().into_owned();
        let mode = entry.header().mode().expect("mode");
        let mut bytes = Vec::new();
        if let Ok(Some(target)) = entry.link_name() {
            bytes = target.to_string_lossy().into_owned().into_bytes();
        }
        entry.read_to_end(&mut bytes).expect("read entry");
        files.insert(name, (mode, bytes));
    }
    files
}

/// The config JSON and the single layer's entries of a one-layer image archive.
fn single_layer_image(archive: &Path, dir: &Path) -> (Value, Value, Entries) {
    let files = entries(archive);
    let manifest: Value = serde_json::from_slice(&files["manifest.json"].1).expect("manifest");
    let config_name = manifest[0]["Config"].as_str().expect("Config");
    let config: Value = serde_json::from_slice(&files[config_name].1).expect("config");
    let layer_name = manifest[0]["Layers"][0].as_str().expect("one layer");
    let layer = dir.join("layer.tar");
    std::fs::write(&layer, &files[layer_name].1).expect("write layer");
    (manifest, config, entries(&layer))
}

fn have(program: &str) -> bool {
    std::process::Command::new(program)
        .arg("--version")
        .output()
        .is_ok()
}

fn kubernetes_module() -> Result<PathBuf, String> {
    let out = std::process::Command::new("go")
        .args(["env", "GOMODCACHE"])
        .output()
        .map_err(|e| format!("no `go` to find the module cache ({e})"))?;
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
        .join("k8s.io/kubernetes@v1.35.4");
    if dir.join("build/pause/linux/pause.c").is_file() {
        Ok(dir)
    } else {
        Err(format!(
            "{} has no build/pause/linux/pause.c",
            dir.display()
        ))
    }
}

#[tokio::test]
async fn pause_builds_with_gcc_and_the_second_call_is_a_cache_hit() {
    if !have("gcc") {
        eprintln!("skipped: no gcc on PATH to compile pause.c");
        return;
    }
    let module = match kubernetes_module() {
        Ok(module) => module,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    let cache = tempfile::tempdir().expect("tempdir");
    let sources = Sources {
        pause_source: module.join("build/pause/linux/pause.c"),
        binaries: Default::default(),
        istio: None,
        kind_node: None,
    };
    let row = lookup("registry.k8s.io/pause:3.10.1").expect("pause row");
    let first = ensure(cache.path(), &sources, &[row, row])
        .await
        .expect("build pause");
    assert_eq!(first.len(), 1);
    let built = &first[0];
    assert_eq!(built.reference, ["registry.k8s.io/pause:3.10.1"]);
    assert!(built.contents.contains("gcc"), "{}", built.contents);

    let (manifest, config, layer) = single_layer_image(&built.archive, cache.path());
    assert_eq!(manifest[0]["RepoTags"][0], "registry.k8s.io/pause:3.10.1");
    assert_eq!(config["config"]["Entrypoint"][0], "/pause");
    assert_eq!(config["config"]["User"], "65535:65535");
    let (mode, binary) = &layer["pause"];
    assert_eq!(mode & 0o777, 0o755);
    let pause = cache.path().join("pause");
    std::fs::write(&pause, binary).expect("write pause");
    std::fs::set_permissions(&pause, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let version = std::process::Command::new(&pause)
        .arg("-v")
        .output()
        .expect("run pause -v");
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        "pause.c v3.10.1"
    );

    let modified = std::fs::metadata(&built.archive)
        .and_then(|m| m.modified())
        .expect("mtime");
    let second = ensure(cache.path(), &sources, &[row])
        .await
        .expect("cache hit");
    assert_eq!(second, first);
    let again = std::fs::metadata(&built.archive)
        .and_then(|m| m.modified())
        .expect("mtime");
    assert_eq!(modified, again, "the second call rebuilt the archive");
    let leftovers: Vec<_> = std::fs::read_dir(cache.path().join("images"))
        .expect("list cache")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "scratch left behind: {leftovers:?}");
}

#[tokio::test]
async fn a_static_binary_is_keyed_by_its_bytes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let coredns = dir.path().join("coredns");
    let sources = Sources {
        pause_source: dir.path().join("absent"),
        binaries: [(SourceBinary::Coredns, coredns.clone())].into(),
        istio: None,
        kind_node: None,
    };
    let row = lookup("registry.k8s.io/coredns/coredns:v1.15.0").expect("coredns row");
    let err = ensure(dir.path(), &sources, &[row])
        .await
        .err()
        .map(|e| e.to_string());
    let err = err.unwrap_or_default();
    assert!(
        err.contains("the coredns binary") && err.contains("does not exist"),
        "{err}"
    );

    std::fs::write(&coredns, b"first build").expect("write");
    let first = ensure(dir.path(), &sources, &[row]).await.expect("first");
    let (_, config, layer) = single_layer_image(&first[0].archive, dir.path());
    assert_eq!(layer["coredns"].1, b"first build");
    assert_eq!(config["config"]["Entrypoint"][0], "/coredns");

    std::fs::write(&coredns, b"second build").expect("write");
    // Two builders of the same key at once: the lock makes one build and the other read it.
    let rows = [row];
    let (second, again) = tokio::join!(
        ensure(dir.path(), &sources, &rows),
        ensure(dir.path(), &sources, &rows)
    );
    let (second, again) = (second.expect("second"), again.expect("again"));
    assert_eq!(second, again);
    assert_ne!(first[0].archive, second[0].archive);
    assert_ne!(first[0].digest, second[0].digest);
}

#[tokio::test]
async fn a_samples_image_is_keyed_by_the_samples_it_reads_and_needs_an_istio_version() {
    let dir = tempfile::tempdir().expect("tempdir");
    let row = lookup("registry.istio.io/release/examples-helloworld-v1:1.0").expect("row");
    let no_istio = Sources {
        pause_source: dir.path().join("absent"),
        binaries: Default::default(),
        istio: None,
        kind_node: None,
    };
    let err = super::input::input(row, &no_istio)
        .await
        .err()
        .map(|e| e.to_string());
    assert!(
        err.as_deref().unwrap_or_default().contains("helloworld"),
        "{err:?}"
    );
    let samples = dir.path().join("samples");
    std::fs::create_dir_all(samples.join("helloworld/src")).expect("mkdir");
    std::fs::create_dir_all(samples.join("curl")).expect("mkdir");
    std::fs::write(samples.join("helloworld/src/app.py"), "v1").expect("write");
    let sources = |samples: &Path| Sources {
        istio: Some(IstioSources {
            tag: "1.31-dev.x".into(),
            pilot_discovery: PathBuf::new(),
            pilot_agent: PathBuf::new(),
            bootstrap: PathBuf::new(),
            envoy: PathBuf::new(),
            echo_server: PathBuf::new(),
            echo_client: PathBuf::new(),
            samples: samples.to_owned(),
        }),
        kind_node: None,
        ..no_istio.clone()
    };
    async fn key(row: &Row, s: &Sources) -> String {
        let input = super::input::input(row, s).await.expect("input");
        super::input::key(row, &input)
    }
    let first = key(row, &sources(&samples)).await;
    // A file the recipe does not read leaves the key as it is; one it reads changes it.
    std::fs::write(samples.join("curl/curl.yaml"), "x").expect("write");
    assert_eq!(key(row, &sources(&samples)).await, first);
    std::fs::write(samples.join("helloworld/src/app.py"), "v2").expect("write");
    assert_ne!(key(row, &sources(&samples)).await, first);
}

#[tokio::test]
async fn a_static_image_has_its_directories_and_the_binary_where_the_official_one_has_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fortio = dir.path().join("fortio");
    std::fs::write(&fortio, b"fortio build").expect("write");
    let sources = Sources {
        pause_source: dir.path().join("absent"),
        binaries: [(SourceBinary::Fortio, fortio)].into(),
        istio: None,
        kind_node: None,
    };
    let row = lookup("fortio/fortio:latest_release").expect("fortio row");
    let built = ensure(dir.path(), &sources, &[row]).await.expect("built");
    let (_, config, layer) = single_layer_image(&built[0].archive, dir.path());
    assert_eq!(layer["usr/bin/fortio"].1, b"fortio build");
    assert_eq!(layer["usr/bin/fortio"].0 & 0o777, 0o755);
    for empty in ["etc/fortio/", "var/lib/fortio/"] {
        assert!(layer.contains_key(empty), "{empty} in {:?}", layer.keys());
    }
    assert_eq!(config["config"]["Entrypoint"][0], "/usr/bin/fortio");
    assert_eq!(config["config"]["Cmd"][0], "server");
    assert_eq!(config["config"]["WorkingDir"], "/var/lib/fortio");
    // A sample binary the toolchain did not hand over is named as missing.
    let httpbin = lookup("kennethreitz/httpbin").expect("httpbin row");
    let err = ensure(dir.path(), &sources, &[httpbin])
        .await
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("the go-httpbin binary"), "{err}");
}

/// Builds the Debian images for real (minutes, needs the mirror), and pause when the
/// Kubernetes module is in Go's module cache:
/// `cargo test --lib images::tests::debian_images_by_hand -- --ignored --nocapture`, with
/// `LABCHECK_IMAGES_CACHE` naming the cache directory and optionally `LABCHECK_COREDNS` a
/// coredns binary to package too.
#[tokio::test]
#[ignore = "builds Debian rootfses with mmdebstrap: minutes"]
async fn debian_images_by_hand() {
    let cache = std::env::var_os("LABCHECK_IMAGES_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("labcheck-images-by-hand"));
    let sources = Sources {
        pause_source: kubernetes_module()
            .map(|m| m.join("build/pause/linux/pause.c"))
            .unwrap_or_default(),
        binaries: [(
            SourceBinary::Coredns,
            std::env::var_os("LABCHECK_COREDNS")
                .map(PathBuf::from)
                .unwrap_or_default(),
        )]
        .into(),
        istio: None,
        kind_node: None,
    };
    let mut references = vec!["busybox", "nginx", "curlimages/curl:8.16.0"];
    if sources.pause_source.is_file() {
        references.push("registry.k8s.io/pause:3.10.1");
    }
    if sources.binaries[&SourceBinary::Coredns].is_file() {
        references.push("registry.k8s.io/coredns/coredns:v1.15.0");
    }
    let rows = resolve(references).expect("rows");
    let built = ensure(&cache, &sources, &rows).await;
    for built in built.unwrap_or_else(|e| panic!("{e}")) {
        let meta = built.archive.with_file_name("meta.json");
        let meta: Value =
            serde_json::from_str(&std::fs::read_to_string(meta).expect("meta")).expect("json");
        eprintln!(
            "{}\n  {}\n  {:.1}s, {} bytes, {}\n  {}",
            built.reference.join(" "),
            built.archive.display(),
            meta["build_seconds"].as_f64().unwrap_or_default(),
            meta["size"],
            built.digest,
            built.contents
        );
    }
}

#[test]
fn a_kind_clusters_images_are_tagged_with_the_configs_versions() {
    let text = include_str!("../../istio-versions.toml");
    let versions = crate::toolchain::Versions::parse(text, Path::new("istio-versions.toml"))
        .expect("the config parses");
    let rows = super::group(super::Group::ControlPlane);
    assert_eq!(
        rows.len(),
        5,
        "apiserver, controllers, scheduler, proxy, etcd"
    );
    for row in rows {
        let reference = row.references[0];
        let wanted = if reference.contains("/etcd:") {
            format!("{}-0", versions.etcd().trim_start_matches('v'))
        } else {
            versions.kubernetes().to_owned()
        };
        assert!(reference.ends_with(&format!(":{wanted}")), "{reference}");
    }
    assert_eq!(
        super::KIND_NODE,
        format!("labcheck.local/kind-node:{}", versions.kubernetes())
    );
    let node = super::group(super::Group::KindNode);
    assert_eq!(node.len(), 1);
    assert!(
        super::common()
            .iter()
            .all(|r| r.group() == super::Group::Common)
    );
}
