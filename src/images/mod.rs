//! Container images built offline — no registry, only the host's Debian mirror — for the Pods a
//! real kubelet runs in a cell, written as `docker save` tarballs that
//! `ctr -n k8s.io images import` loads under exactly the references labs write (normalized as
//! containerd stores them, since Pods use `imagePullPolicy: IfNotPresent` or `Never`).
//!
//! The module owns: the table of buildable images and what each really contains (`table`, see
//! [`table()`] and [`lookup`]); reference normalization ([`normalize`]); carrying out recipes
//! (`build`: gcc and copies; `debian`: `apt-get download`, `mmdebstrap`); the archive format
//! (`archive`, `layer`); the content-addressed cache with its build lock (`cache`); and the
//! containerd roots a node starts from, holding a set of the images unpacked (`preload`).
//! [`ensure`] is the entry point: it returns each image's archive, building only what the cache
//! lacks.

mod archive;
mod bookinfo;
mod build;
mod cache;
mod debian;
mod helloworld;
mod input;
mod kindnode;
mod layer;
pub mod preload;
pub mod registry;
mod run;
mod table;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub use archive::ImageConfig;
pub use kindnode::KindNodeSources;
pub use table::{File, Group, ISTIO_TAG, IstioPart, KIND_NODE, Recipe, Row, SourceBinary};

use cache::{Cache, Meta};

/// Inputs labcheck hands to recipes rather than fetching.
#[derive(Debug, Clone)]
pub struct Sources {
    /// Kubernetes' `build/pause/linux/pause.c` (in the `k8s.io/kubernetes` module, or a copy).
    pub pause_source: PathBuf,
    /// The static binaries [`Recipe::Static`](table::Recipe) rows package, by what they are.
    pub binaries: BTreeMap<SourceBinary, PathBuf>,
    /// The binaries of an Istio version, for Istio's images; `None` builds none of them.
    pub istio: Option<IstioSources>,
    /// What a kind node image is built from; `None` builds none.
    pub kind_node: Option<kindnode::KindNodeSources>,
}

/// What Istio's images of one version are built from: that version's builds.
#[derive(Debug, Clone)]
pub struct IstioSources {
    /// The tag its istioctl renders for Istio's images (`1.31-dev.eed52ebb`).
    pub tag: String,
    pub pilot_discovery: PathBuf,
    pub pilot_agent: PathBuf,
    /// Istio's Envoy bootstrap template (installed beside pilot-agent).
    pub bootstrap: PathBuf,
    pub envoy: PathBuf,
    pub echo_server: PathBuf,
    pub echo_client: PathBuf,
    /// The version's `samples/`, installed beside its istioctl.
    pub samples: PathBuf,
}

impl IstioSources {
    /// The builds of one Istio version, each where `path` finds the tool, tagged `tag`; the
    /// Envoy bootstrap template is the one installed beside pilot-agent, the samples those
    /// beside istioctl.
    pub fn of_builds(tag: &str, path: impl Fn(crate::toolchain::Tool) -> PathBuf) -> IstioSources {
        use crate::toolchain::Tool;
        let pilot_agent = path(Tool::PilotAgent);
        IstioSources {
            tag: tag.to_owned(),
            pilot_discovery: path(Tool::PilotDiscovery),
            bootstrap: pilot_agent.with_file_name(crate::toolchain::ENVOY_BOOTSTRAP),
            pilot_agent,
            envoy: path(Tool::Envoy),
            echo_server: path(Tool::EchoServer),
            echo_client: path(Tool::EchoClient),
            samples: path(Tool::Istioctl).with_file_name("samples"),
        }
    }
}

impl Sources {
    /// The sources a real node's toolchain holds, each where `path` finds its tool: the pause
    /// container's source installed beside the `kubelet` ([`crate::toolchain::PAUSE_SOURCE`])
    /// and every [`SourceBinary`].
    pub fn of_node(path: impl Fn(crate::toolchain::Tool) -> PathBuf) -> Sources {
        Sources {
            pause_source: path(crate::toolchain::Tool::Kubelet)
                .with_file_name(crate::toolchain::PAUSE_SOURCE),
            binaries: SourceBinary::ALL
                .into_iter()
                .map(|b| (b, path(b.tool())))
                .collect(),
            istio: None,
            kind_node: None,
        }
    }

    /// The same, with an Istio version's binaries for Istio's images.
    pub fn with_istio(self, istio: IstioSources) -> Sources {
        Sources {
            istio: Some(istio),
            ..self
        }
    }
}

/// An image in the cache, ready to import.
#[derive(Debug, Clone, PartialEq)]
pub struct Built {
    /// The references the archive is tagged with, normalized.
    pub reference: Vec<String>,
    /// The docker-save tarball.
    pub archive: PathBuf,
    /// What the image really contains, with the versions the build found.
    pub contents: String,
    /// `sha256:<hex>` of the image config: the image ID containerd and crictl show.
    pub digest: String,
}

#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    #[error(
        "no recipe builds the image {reference:?}: the image table in src/images/table.rs serves only {served}"
    )]
    NoRecipe { reference: String, served: String },
    #[error(
        "building {image}: it is Istio's image of one Istio version, and no Istio version was given"
    )]
    NoIstioVersion { image: String },
    #[error("building {image}: {what} {path} does not exist")]
    MissingInput {
        image: String,
        what: &'static str,
        path: PathBuf,
    },
    #[error("{image}: {action} {path}")]
    Io {
        image: String,
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("building {image}: cannot run `{command}`")]
    Spawn {
        image: String,
        command: String,
        #[source]
        source: io::Error,
    },
    #[error("building {image}: `{command}` {status}; its last stderr lines:\n{stderr_tail}")]
    Command {
        image: String,
        command: String,
        status: String,
        stderr_tail: String,
    },
    #[error("building {image}: `{command}` did not finish within {timeout:?} and was stopped")]
    Timeout {
        image: String,
        command: String,
        timeout: Duration,
    },
    #[error("building {image}: another labcheck held the build lock {path} for over {timeout:?}")]
    LockTimeout {
        image: String,
        path: PathBuf,
        timeout: Duration,
    },
    #[error("building {image}: {what}")]
    Unexpected { image: String, what: String },
}

impl ImageError {
    /// The error for a reference no row serves.
    pub fn no_recipe(reference: &str) -> ImageError {
        ImageError::NoRecipe {
            reference: reference.to_string(),
            served: served(),
        }
    }
}

/// Every reference the table serves, for messages; Istio's images with their tag as
/// `<Istio version>`.
pub fn served() -> String {
    let served: Vec<String> = table()
        .iter()
        .flat_map(|r| r.references.iter())
        .map(|r| r.replace(ISTIO_TAG, "<Istio version>"))
        .collect();
    served.join(", ")
}

/// Wraps an I/O error with the image it happened for, what was being done, and the path.
fn io_err<'a>(
    image: &'a str,
    action: &'static str,
    path: &'a Path,
) -> impl FnOnce(io::Error) -> ImageError + 'a {
    move |source| ImageError::Io {
        image: image.to_string(),
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// Every image labcheck can build.
pub fn table() -> &'static [Row] {
    table::ROWS
}

/// The row serving `reference`, after normalizing it (Istio's images under any tag).
pub fn lookup(reference: &str) -> Option<&'static Row> {
    let normalized = normalize(reference);
    table().iter().find(|row| row.serves(&normalized))
}

/// The rows of images that do not depend on an Istio version (a real node's own, the
/// table's common images).
pub fn common() -> Vec<&'static Row> {
    group(Group::Common)
}

/// The rows of one group.
pub fn group(group: Group) -> Vec<&'static Row> {
    table().iter().filter(|r| r.group() == group).collect()
}

/// The rows of Istio's images, built per Istio version.
pub fn per_istio_version() -> Vec<&'static Row> {
    group(Group::PerIstioVersion)
}

/// The rows serving `references`, each once, or [`ImageError::NoRecipe`] for the first
/// reference no row serves.
pub fn resolve<'a>(
    references: impl IntoIterator<Item = &'a str>,
) -> Result<Vec<&'static Row>, ImageError> {
    let mut rows: Vec<&'static Row> = Vec::new();
    for reference in references {
        let row = lookup(reference).ok_or_else(|| ImageError::no_recipe(reference))?;
        if !rows.iter().any(|r| std::ptr::eq(*r, row)) {
            rows.push(row);
        }
    }
    Ok(rows)
}

/// A reference as containerd stores it: the registry made explicit (`docker.io`), Docker Hub's
/// official images under `library/`, and `:latest` when neither tag nor digest is given.
/// `nginx` → `docker.io/library/nginx:latest`; `curlimages/curl:8.16.0` →
/// `docker.io/curlimages/curl:8.16.0`; `registry.k8s.io/pause:3.10.1` is unchanged.
pub fn normalize(reference: &str) -> String {
    let reference = reference.trim();
    let (name, digest) = match reference.split_once('@') {
        Some((name, digest)) => (name, Some(digest)),
        None => (reference, None),
    };
    let (name, tag) = match name.rfind(':') {
        Some(i) if !name[i..].contains('/') => (&name[..i], Some(&name[i + 1..])),
        _ => (name, None),
    };
    // The first component is a registry when it looks like a host, as in Docker's rules.
    let (domain, path) = match name.split_once('/') {
        Some((first, rest))
            if first.contains(['.', ':'])
                || first == "localhost"
                || first.chars().any(|c| c.is_ascii_uppercase()) =>
        {
            (first, rest)
        }
        _ => ("docker.io", name),
    };
    let domain = if domain == "index.docker.io" {
        "docker.io"
    } else {
        domain
    };
    let mut normalized = if domain == "docker.io" && !path.contains('/') {
        format!("{domain}/library/{path}")
    } else {
        format!("{domain}/{path}")
    };
    match (tag, digest) {
        (Some(tag), _) => normalized.push_str(&format!(":{tag}")),
        (None, None) => normalized.push_str(":latest"),
        (None, Some(_)) => {}
    }
    if let Some(digest) = digest {
        normalized.push_str(&format!("@{digest}"));
    }
    normalized
}

/// Returns the archive of each of `rows`, building into `<cache_dir>/images` those the cache
/// lacks, one at a time. Concurrent callers building the same image wait for each other.
pub async fn ensure(
    cache_dir: &Path,
    sources: &Sources,
    rows: &[&'static Row],
) -> Result<Vec<Built>, ImageError> {
    let cache = Cache::open(cache_dir)?;
    let mut built = Vec::with_capacity(rows.len());
    for (i, row) in rows.iter().enumerate() {
        if rows[..i].iter().any(|r| std::ptr::eq(*r, *row)) {
            continue;
        }
        built.push(ensure_one(&cache, sources, row).await?);
    }
    Ok(built)
}

/// The archive of `row` if the cache holds it; never builds.
pub async fn cached(
    cache_dir: &Path,
    sources: &Sources,
    row: &'static Row,
) -> Result<Option<Built>, ImageError> {
    let cache = Cache::open(cache_dir)?;
    let input = input::input(row, sources).await?;
    let key = input::key(row, &input);
    Ok(cache.load(&key).map(|meta| Built {
        reference: meta.references,
        archive: cache.archive(&key),
        contents: meta.contents,
        digest: meta.digest,
    }))
}

/// The references `row`'s archive is tagged with, for the Istio version of `sources`.
fn tags(row: &Row, sources: &Sources) -> Result<Vec<String>, ImageError> {
    row.references_for(sources.istio.as_ref().map(|i| i.tag.as_str()))
        .ok_or_else(|| ImageError::NoIstioVersion {
            image: row.name().to_string(),
        })
}

async fn ensure_one(cache: &Cache, sources: &Sources, row: &Row) -> Result<Built, ImageError> {
    let image = row.name();
    let input = input::input(row, sources).await?;
    let key = input::key(row, &input);
    let hit = |meta: Meta| Built {
        reference: meta.references,
        archive: cache.archive(&key),
        contents: meta.contents,
        digest: meta.digest,
    };
    if let Some(meta) = cache.load(&key) {
        return Ok(hit(meta));
    }
    let _lock = cache.lock(image, &key).await?;
    if let Some(meta) = cache.load(&key) {
        return Ok(hit(meta));
    }
    crate::errln!("labcheck: building the image {image}");
    let started = Instant::now();
    let stage = cache.stage(image, &key)?;
    let product = build::build(row, &input, &stage.work, cache).await?;
    let out = stage.out.join("image.tar");
    let references = tags(row, sources)?;
    let (config, layers, tags) = (row.config, product.layers, references.clone());
    let target = out.clone();
    let written = tokio::task::spawn_blocking(move || {
        let tags: Vec<&str> = tags.iter().map(String::as_str).collect();
        archive::write(image, &target, &config, &layers, &tags)
    })
    .await
    .map_err(|e| io_err(image, "cannot write", &out)(io::Error::other(e)))??;
    let meta = Meta {
        references,
        contents: format!("{} ({})", row.contents, product.details),
        digest: written.config_digest,
        build_seconds: started.elapsed().as_secs_f64(),
        size: written.size,
    };
    cache.install(image, &key, &stage, &meta)?;
    crate::errln!(
        "labcheck: built {image} in {:.1}s ({:.1} MB)",
        meta.build_seconds,
        meta.size as f64 / 1e6
    );
    Ok(hit(meta))
}
