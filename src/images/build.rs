//! Carrying out a [`Recipe`]: resolving its inputs (which also key the cache) and turning them
//! into layer tarballs in a scratch directory — gcc for pause, a copy for static binaries; the
//! Debian recipes (busybox's `.deb`, `mmdebstrap`) are in `debian`.

use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};
use tokio::process::Command;

use super::archive::{self, Layer};
use super::debian::{busybox, debian, host_codename, host_mirror};
use super::layer::LayerWriter;
use super::run::run;
use super::table::{Recipe, Row, SourceBinary};
use super::{ImageError, Sources, io_err};

/// Bump when a change to this module or `debian` changes what the same recipe builds: the
/// cache keys change with it.
const BUILD_FORMAT: &str = "labcheck-images 3";
/// For commands that take seconds.
pub const SHORT: Duration = Duration::from_secs(120);

/// What a recipe is built from, resolved before building.
#[derive(Debug)]
pub enum Input {
    File { path: PathBuf, sha256: String },
    Mirror { mirror: String },
    HostApt { mirror: String, codename: String },
}

/// What a build produced: layers bottom first, and the versions it found.
pub struct Product {
    pub layers: Vec<Layer>,
    pub details: String,
}

/// Resolves the inputs of `row`'s recipe: hashes the files it compiles or copies, reads the
/// host's Debian mirror.
pub async fn input(row: &Row, sources: &Sources) -> Result<Input, ImageError> {
    let image = row.name();
    let (file, what) = match &row.recipe {
        Recipe::Pause { .. } => (
            sources.pause_source.clone(),
            "the pause container's source (Kubernetes' build/pause/linux/pause.c)",
        ),
        Recipe::Static {
            binary: SourceBinary::Coredns,
            ..
        } => (sources.coredns.clone(), "the coredns binary"),
        Recipe::Busybox { .. } => {
            return Ok(Input::HostApt {
                mirror: host_mirror(image)?,
                codename: host_codename(),
            });
        }
        Recipe::Debian { .. } => {
            return Ok(Input::Mirror {
                mirror: host_mirror(image)?,
            });
        }
    };
    if !file.is_file() {
        return Err(ImageError::MissingInput {
            image: image.to_string(),
            what,
            path: file,
        });
    }
    let hashed = file.clone();
    let sha256 = tokio::task::spawn_blocking(move || archive::sha256_file(&hashed))
        .await
        .map_err(io::Error::other)
        .and_then(|r| r)
        .map_err(io_err(image, "cannot read the build input", &file))?;
    Ok(Input::File { path: file, sha256 })
}

/// The cache key of `row` built from `input`: what the recipe says, and what it reads.
pub fn key(row: &Row, input: &Input) -> String {
    let description = match input {
        Input::File { sha256, .. } => format!("file sha256 {sha256}"),
        Input::Mirror { mirror } => format!("mirror {mirror}"),
        Input::HostApt { mirror, codename } => format!("apt {mirror} {codename}"),
    };
    let text = format!(
        "{BUILD_FORMAT}\n{}\n{row:?}\n{description}\n",
        archive::architecture()
    );
    archive::hex(&Sha256::digest(text.as_bytes()))
}

/// Builds the layers of `row` in `work`, an empty scratch directory.
pub async fn build(row: &Row, input: &Input, work: &Path) -> Result<Product, ImageError> {
    let image = row.name();
    match (&row.recipe, input) {
        (Recipe::Pause { version }, Input::File { path, .. }) => {
            pause(image, version, path, work).await
        }
        (Recipe::Static { path: inside, .. }, Input::File { path, sha256 }) => {
            let layer = work.join("layer.tar");
            let (from, name) = (path.clone(), inside.trim_start_matches('/').to_string());
            write_layer(image, &layer, move |w| w.copy(&name, 0o755, &from)).await?;
            Ok(Product {
                layers: vec![Layer {
                    path: layer,
                    created_by: format!("COPY {} {inside}", path.display()),
                }],
                details: format!("{} with sha256 {sha256}", path.display()),
            })
        }
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
        (recipe, input) => Err(ImageError::Unexpected {
            image: image.to_string(),
            what: format!("the recipe {recipe:?} cannot be built from {input:?}"),
        }),
    }
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
