//! Carrying out a [`Recipe`] on its resolved [`Input`]: turning it into layer tarballs in a
//! scratch directory — gcc for pause, a copy for static binaries; the
//! Debian recipes (busybox's `.deb`, `mmdebstrap`) are in `debian`.

use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};
use tokio::process::Command;

use super::archive::{self, Layer};
use super::cache::Cache;
use super::debian::{busybox, debian};
use super::input::{BUILD_FORMAT, Input};
use super::kindnode;
use super::layer::LayerWriter;
use super::run::{quote, run};
use super::table::{Base, File, ISTIO_BASE, IstioPart, KUBE_BASE, Recipe, Row, SAMPLES};
use super::{ImageError, io_err};

/// For commands that take seconds.
pub const SHORT: Duration = Duration::from_secs(120);
/// For a compiler's first build (Go's standard library into an empty build cache).
const LONG: Duration = Duration::from_secs(600);

/// What a build produced: layers bottom first, and the versions it found.
pub struct Product {
    pub layers: Vec<Layer>,
    pub details: String,
}

/// Builds the layers of `row` in `work`, an empty scratch directory (a shared base layer goes
/// into `cache`).
pub async fn build(
    row: &Row,
    input: &Input,
    work: &Path,
    cache: &Cache,
) -> Result<Product, ImageError> {
    let image = row.name();
    match (&row.recipe, input) {
        (Recipe::Pause { version }, Input::File { path, .. }) => {
            pause(image, version, path, work).await
        }
        (
            Recipe::Static {
                path: inside, dirs, ..
            },
            Input::File { path, sha256 },
        ) => static_file(image, (path, sha256), inside, dirs, work).await,
        (Recipe::Busybox { package, files }, Input::HostApt { .. }) => {
            busybox(image, package, files, work).await
        }
        (
            Recipe::Debian {
                suite,
                packages,
                files,
                hook,
            },
            Input::Mirror { mirror },
        ) => debian(image, (suite, mirror), packages, files, hook, work).await,
        (
            Recipe::Sample {
                suite,
                packages,
                files,
                hook,
                ..
            },
            Input::Sample {
                mirror,
                samples,
                sha256,
            },
        ) => {
            let rootfs = Rootfs {
                suite,
                packages,
                files,
                hook,
            };
            sample(row, rootfs, (mirror, samples, sha256), cache).await
        }
        (Recipe::SampleGo { source, path }, Input::SampleSource { samples, sha256 }) => {
            sample_go(image, (samples, sha256), source, path, work).await
        }
        (Recipe::Istio { part }, Input::Istio { mirror, tag, files }) => {
            istio(image, *part, (mirror, tag, files), work, cache).await
        }
        (
            Recipe::Kubernetes { binary },
            Input::OnBase {
                mirror,
                path,
                sha256,
            },
        ) => {
            let (base, base_details) = shared_base(
                cache,
                "the base of the control plane's images",
                &KUBE_BASE,
                mirror,
            )
            .await?;
            let inside = format!("usr/local/bin/{}", binary.tool().name());
            let mut product =
                static_file(image, (path, sha256), &inside, &["usr/local/bin"], work).await?;
            product.layers.insert(0, base);
            product.details = format!("{}; on {base_details}", product.details);
            Ok(product)
        }
        (
            Recipe::KindNode,
            Input::KindNode {
                mirror,
                kubernetes,
                base_files,
                files,
                ..
            },
        ) => kind_node(image, (mirror, kubernetes, base_files, files), work).await,
        (recipe, input) => Err(ImageError::Unexpected {
            image: image.to_string(),
            what: format!("the recipe {recipe:?} cannot be built from {input:?}"),
        }),
    }
}

/// A kind node: kind's base recipe on a Debian minbase, then one layer of the node's binaries
/// and the files labcheck adds.
async fn kind_node(
    image: &str,
    (mirror, kubernetes, base_files, files): (
        &str,
        &str,
        &Path,
        &[(&'static str, PathBuf, String)],
    ),
    work: &Path,
) -> Result<Product, ImageError> {
    let ctr = files
        .iter()
        .find(|(inside, _, _)| inside.ends_with("/ctr"))
        .map(|(_, path, _)| path.clone())
        .unwrap_or_default();
    let spec = run(image, command(&ctr, ["oci", "spec"]), SHORT).await?;
    let cri_base = kindnode::cri_base(&spec).map_err(|what| ImageError::Unexpected {
        image: image.to_string(),
        what,
    })?;
    let base_work = work.join("base");
    std::fs::create_dir_all(&base_work).map_err(io_err(image, "cannot create", &base_work))?;
    let hook = kindnode::hook(base_files);
    let rootfs = debian(
        image,
        ("bookworm", mirror),
        kindnode::PACKAGES,
        &[],
        &hook,
        &base_work,
    )
    .await?;
    let layer = work.join("node.tar");
    let binaries: Vec<(&'static str, PathBuf)> =
        files.iter().map(|(i, p, _)| (*i, p.clone())).collect();
    let added = kindnode::files(kubernetes, &cri_base);
    write_layer(image, &layer, move |w| {
        for dir in [
            "usr/local/sbin",
            "opt/cni/bin",
            "etc/cni/net.d",
            "etc/systemd/system/kubelet.service.d",
            "etc/systemd/system/containerd.service.d",
            "etc/systemd/system/multi-user.target.wants",
            "kind/labcheck",
        ] {
            w.dir(dir, 0o755)?;
        }
        let (link, target) = kindnode::KUBE_PROXY_WANTED;
        w.symlink(link, target)?;
        for (inside, from) in &binaries {
            w.copy(inside, 0o755, from)?;
        }
        for (inside, mode, content) in &added {
            w.file(inside, *mode, content.as_bytes())?;
        }
        Ok(())
    })
    .await?;
    let mut layers = rootfs.layers;
    layers.push(Layer {
        path: layer,
        created_by: format!(
            "COPY the node's binaries of Kubernetes {kubernetes} and labcheck's files"
        ),
    });
    let built: Vec<String> = files
        .iter()
        .map(|(inside, _, sha)| format!("/{inside} sha256 {sha}"))
        .collect();
    Ok(Product {
        layers,
        details: format!(
            "kind's files from {}; {}; on {}",
            base_files.display(),
            built.join(", "),
            rootfs.details
        ),
    })
}

/// A static binary of the host at `inside`, in the directories it needs.
async fn static_file(
    image: &str,
    (path, sha256): (&Path, &str),
    inside: &str,
    dirs: &[&str],
    work: &Path,
) -> Result<Product, ImageError> {
    let layer = work.join("layer.tar");
    let dirs: Vec<String> = dirs.iter().map(|d| d.to_string()).collect();
    let (from, name) = (path.to_owned(), inside.trim_start_matches('/').to_string());
    write_layer(image, &layer, move |w| {
        for dir in dirs {
            w.dir(dir.trim_start_matches('/'), 0o755)?;
        }
        w.copy(&name, 0o755, &from)
    })
    .await?;
    Ok(Product {
        layers: vec![Layer {
            path: layer,
            created_by: format!("COPY {} {inside}", path.display()),
        }],
        details: format!("{} with sha256 {sha256}", path.display()),
    })
}

/// A Debian rootfs recipe's parts: its suite, packages, files and hook.
struct Rootfs {
    suite: &'static str,
    packages: &'static [&'static str],
    files: &'static [File],
    hook: &'static str,
}

/// A Debian rootfs with what an Istio sample's image takes from the cell's samples; the rootfs
/// is shared by the rows of the same recipe (helloworld's v1 and v2).
async fn sample(
    row: &Row,
    rootfs: Rootfs,
    (mirror, samples, sha256): (&str, &Path, &str),
    cache: &Cache,
) -> Result<Product, ImageError> {
    let Rootfs {
        suite,
        packages,
        files,
        hook,
    } = rootfs;
    let image = row.name();
    let hook = hook.replace(SAMPLES, &quote(&samples.to_string_lossy()));
    let identity = format!("{:?}\nmirror {mirror}\nsamples {sha256}", row.recipe);
    let (layer, details) = shared_layer(cache, image, &identity, |work| async move {
        debian(image, (suite, mirror), packages, files, &hook, &work).await
    })
    .await?;
    Ok(Product {
        layers: vec![layer],
        details: format!(
            "{} with sha256 {sha256} of what the image takes from it; on {details}",
            samples.display()
        ),
    })
}

/// A Go program of the cell's samples, built static, at `path`.
async fn sample_go(
    image: &str,
    (samples, sha256): (&Path, &str),
    source: &str,
    path: &str,
    work: &Path,
) -> Result<Product, ImageError> {
    let layer = work.join("layer.tar");
    let binary = go_program(image, &samples.join(source), work).await?;
    let (from, inside) = (binary.clone(), path.trim_start_matches('/').to_string());
    write_layer(image, &layer, move |w| {
        if let Some(dir) = Path::new(&inside).parent() {
            w.dir(&dir.to_string_lossy(), 0o755)?;
        }
        w.copy(&inside, 0o755, &from)
    })
    .await?;
    let go = run(image, command("go", ["env", "GOVERSION"]), SHORT).await?;
    Ok(Product {
        layers: vec![Layer {
            path: layer,
            created_by: format!("CGO_ENABLED=0 go build -o {path} ({source})"),
        }],
        details: format!(
            "{}/{source} with sha256 {sha256}, built by {}",
            samples.display(),
            go.trim()
        ),
    })
}

/// One of Istio's images: its builds of the Istio version over the shared base.
async fn istio(
    image: &str,
    part: IstioPart,
    (mirror, tag, files): (&str, &str, &[(&'static str, PathBuf, String)]),
    work: &Path,
    cache: &Cache,
) -> Result<Product, ImageError> {
    let (base, base_details) = istio_base(cache, mirror).await?;
    let layer = work.join("istio.tar");
    let targets: Vec<(&'static str, PathBuf)> =
        files.iter().map(|(i, p, _)| (*i, p.clone())).collect();
    let proxy = part == IstioPart::Proxy;
    write_layer(image, &layer, move |w| {
        for dir in ["usr/local/bin", "var/lib/istio/envoy"] {
            w.dir(dir, 0o755)?;
        }
        if proxy {
            w.dir_owned("etc/istio/proxy", 0o755, 1337)?;
        }
        for (inside, from) in &targets {
            let mode = if inside.ends_with(".json") {
                0o644
            } else {
                0o755
            };
            w.copy(inside, mode, from)?;
        }
        Ok(())
    })
    .await?;
    let built: Vec<String> = files
        .iter()
        .map(|(_, p, sha)| format!("{} sha256 {sha}", p.display()))
        .collect();
    Ok(Product {
        layers: vec![
            base,
            Layer {
                path: layer,
                created_by: format!("COPY the Istio {tag} builds into /usr/local/bin"),
            },
        ],
        details: format!("{}; on {base_details}", built.join(", ")),
    })
}

/// [`ISTIO_BASE`]'s layer from `mirror` and what it holds, built once into `cache`.
async fn istio_base(cache: &Cache, mirror: &str) -> Result<(Layer, String), ImageError> {
    shared_base(cache, "the base of Istio's images", &ISTIO_BASE, mirror).await
}

/// The layer of a shared Debian `base` from `mirror` and what it holds, built once into `cache`.
async fn shared_base(
    cache: &Cache,
    name: &str,
    base: &'static Base,
    mirror: &str,
) -> Result<(Layer, String), ImageError> {
    let identity = format!("{base:?}\nmirror {mirror}");
    shared_layer(cache, name, &identity, |work| async move {
        debian(
            name,
            (base.suite, mirror),
            base.packages,
            &[],
            base.hook,
            &work,
        )
        .await
    })
    .await
}

/// A one-layer rootfs several images share (those that differ only in their configuration),
/// built once by `build` (in a scratch directory) into `cache`, keyed by `identity`: the layer
/// and what it holds.
async fn shared_layer<F, Fut>(
    cache: &Cache,
    name: &str,
    identity: &str,
    build: F,
) -> Result<(Layer, String), ImageError>
where
    F: FnOnce(PathBuf) -> Fut,
    Fut: std::future::Future<Output = Result<Product, ImageError>>,
{
    let text = format!("{BUILD_FORMAT}\n{}\n{identity}\n", archive::architecture());
    let key = archive::hex(&Sha256::digest(text.as_bytes()));
    let cached = || cache.base(&key);
    if let Some(layer) = cached() {
        return Ok(layer);
    }
    let _lock = cache.lock(name, &key).await?;
    if let Some(layer) = cached() {
        return Ok(layer);
    }
    let stage = cache.stage(name, &key)?;
    let product = build(stage.work.clone()).await?;
    let layer = product
        .layers
        .into_iter()
        .next()
        .ok_or_else(|| ImageError::Unexpected {
            image: name.to_string(),
            what: "the build made no layer".into(),
        })?;
    cache.install_base(name, &key, &stage, &layer, &product.details)?;
    cached().ok_or_else(|| ImageError::Unexpected {
        image: name.to_string(),
        what: format!("the shared layer {key} is not in the cache once built"),
    })
}

/// Builds the Go program in `source` (its `.go` files but tests, standard library only) as a
/// module of its own in `work`, static: the binary.
async fn go_program(image: &str, source: &Path, work: &Path) -> Result<PathBuf, ImageError> {
    let module = work.join("src");
    std::fs::create_dir_all(&module).map_err(io_err(image, "cannot create", &module))?;
    let entries = std::fs::read_dir(source).map_err(io_err(image, "cannot list", source))?;
    for entry in entries {
        let from = entry.map_err(io_err(image, "cannot list", source))?.path();
        let name = from.file_name().map(|n| n.to_string_lossy().into_owned());
        if let Some(name) = name.filter(|n| n.ends_with(".go") && !n.ends_with("_test.go")) {
            let to = module.join(&name);
            std::fs::copy(&from, &to).map_err(io_err(image, "cannot copy", &from))?;
        }
    }
    let go_mod = module.join("go.mod");
    std::fs::write(&go_mod, "module sample\n\ngo 1.22\n").map_err(io_err(
        image,
        "cannot write",
        &go_mod,
    ))?;
    let binary = work.join("program");
    let mut go = command("go", ["build", "-trimpath", "-ldflags", "-s -w", "-o"]);
    go.arg(&binary)
        .arg(".")
        .current_dir(&module)
        .env("CGO_ENABLED", "0")
        .env("GOTOOLCHAIN", "local")
        .env("GOFLAGS", "-mod=mod");
    run(image, go, LONG).await?;
    Ok(binary)
}

async fn pause(
    image: &str,
    version: &str,
    source: &Path,
    work: &Path,
) -> Result<Product, ImageError> {
    let binary = work.join("pause");
    let mut gcc = Command::new("gcc");
    gcc.args(["-Os", "-Wall", "-Werror", "-static"])
        .arg(format!("-DVERSION={version}"))
        .arg("-o")
        .arg(&binary)
        .arg(source);
    run(image, gcc, SHORT).await?;
    run(image, command("strip", [&binary]), SHORT).await?;
    let gcc_version = run(image, command("gcc", ["-dumpfullversion"]), SHORT).await?;
    let gcc_version = gcc_version.trim();
    let layer = work.join("layer.tar");
    write_layer(image, &layer, move |w| w.copy("pause", 0o755, &binary)).await?;
    Ok(Product {
        layers: vec![Layer {
            path: layer,
            created_by: format!(
                "gcc -Os -Wall -Werror -static -DVERSION={version} -o pause pause.c && strip pause"
            ),
        }],
        details: format!("{} compiled by gcc {gcc_version}", source.display()),
    })
}

pub fn command<S: AsRef<OsStr>>(
    program: impl AsRef<OsStr>,
    args: impl IntoIterator<Item = S>,
) -> Command {
    let mut command = Command::new(program);
    command.args(args);
    command
}

pub async fn write_layer(
    image: &str,
    path: &Path,
    fill: impl FnOnce(&mut LayerWriter) -> io::Result<()> + Send + 'static,
) -> Result<(), ImageError> {
    let target = path.to_path_buf();
    tokio::task::spawn_blocking(move || {
        let mut writer = LayerWriter::create(&target)?;
        fill(&mut writer)?;
        writer.finish()
    })
    .await
    .map_err(io::Error::other)
    .and_then(|r| r)
    .map_err(io_err(image, "cannot write the layer", path))
}
