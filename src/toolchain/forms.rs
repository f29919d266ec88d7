//! The shapes of the version strings the toolchain takes: an official release number, a Go
//! module tag, a Kubernetes tag and its staging modules' version, a pseudo-version and the
//! commit it names, and what may be one component of a cache path or a URL.

/// `1.29.3`, `1.30.0-rc.1`: three numbers and an optional pre-release suffix.
pub fn is_release_number(s: &str) -> bool {
    let (core, suffix) = match s.split_once('-') {
        Some((core, suffix)) => (core, Some(suffix)),
        None => (s, None),
    };
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        && suffix.is_none_or(|x| !x.is_empty() && is_path_safe(x))
}

/// `v3.6.16`: a Go module tag.
pub fn is_tag(s: &str) -> bool {
    s.strip_prefix('v').is_some_and(is_release_number)
}

/// The staging-module version matching a Kubernetes tag: `v1.35.4` → `v0.35.4`.
pub fn staging_version(kubernetes: &str) -> Result<String, String> {
    let Some(rest) = kubernetes
        .strip_prefix("v1.")
        .filter(|_| is_tag(kubernetes))
    else {
        return Err(format!(
            "version {kubernetes:?} is not a Kubernetes tag like v1.35.4"
        ));
    };
    Ok(format!("v0.{rest}"))
}

/// A Go pseudo-version (`v0.0.0-20260827124520-eed52ebb66ad`) names a commit, not a release.
pub fn is_pseudo_version(v: &str) -> bool {
    pseudo_commit(v).is_some()
}

/// The commit a pseudo-version names: its last 12 hex digits.
pub fn pseudo_commit(v: &str) -> Option<&str> {
    let mut parts = v.rsplitn(3, '-');
    let commit = parts.next()?;
    let time = parts.next()?;
    let time = time.rsplit('.').next().unwrap_or(time);
    let is_commit = commit.len() == 12 && commit.bytes().all(|b| b.is_ascii_hexdigit());
    let is_time = time.len() == 14 && time.bytes().all(|b| b.is_ascii_digit());
    (is_commit && is_time).then_some(commit)
}

/// Whether `s` can be one component of a cache path and of a download URL.
pub fn is_path_safe(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('.')
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b'+'))
}
