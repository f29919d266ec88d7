//! The author's list of equivalent mutants: `<lab>.mutants.toml` beside the feature file, each
//! entry a mutant id (as `labcheck mutate` prints it) and a one-line reason why that change makes
//! no difference a grader could see. A missed mutant so marked does not fail the run.
//!
//! ```toml
//! [[equivalent]]
//! id = "3f9a0c1b2d4e"
//! mutant = "drop-redirect `… --meshConfigFile mesh.yaml` → `…`"   # for people; not matched
//! reason = "without it kube-inject reads the same mesh config from the cluster's ConfigMap"
//! ```

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Why the equivalents file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum EquivalentsError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Parse {
        path: PathBuf,
        #[source]
        source: toml::de::Error,
    },
    #[error("{path}: the entry for {id} needs a one-line reason")]
    NoReason { path: PathBuf, id: String },
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    equivalent: Vec<Entry>,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    id: String,
    #[serde(default)]
    #[allow(dead_code)]
    mutant: Option<String>,
    reason: String,
}

/// The equivalents file of the lab at `lab`.
pub fn path_for(lab: &Path) -> PathBuf {
    let stem = lab
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    lab.with_file_name(format!("{stem}.mutants.toml"))
}

/// Mutant id → reason; empty when the lab has no equivalents file.
pub fn load(lab: &Path) -> Result<HashMap<String, String>, EquivalentsError> {
    let path = path_for(lab);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(HashMap::new()),
        Err(source) => return Err(EquivalentsError::Read { path, source }),
    };
    let file: File = toml::from_str(&text).map_err(|source| EquivalentsError::Parse {
        path: path.clone(),
        source,
    })?;
    let mut out = HashMap::new();
    for e in file.equivalent {
        if e.reason.trim().is_empty() || e.reason.contains('\n') {
            return Err(EquivalentsError::NoReason { path, id: e.id });
        }
        out.insert(e.id, e.reason);
    }
    Ok(out)
}

/// The entries the author has yet to write for missed mutants not marked equivalent: a skeleton
/// of the equivalents file, each reason left empty (a file with an empty reason is refused, so
/// none is marked by accident).
pub fn skeleton(lab: &Path, missed: &[(&str, String)]) -> String {
    let mut out = format!(
        "# Missed mutants of {} that no entry marks equivalent. For each, either make a check\n\
         # reject it, or give the reason no grader could tell it from the right answer and move\n\
         # the entry into {}.\n",
        lab.display(),
        path_for(lab).display()
    );
    for (id, mutant) in missed {
        let quoted = toml::Value::String(mutant.clone());
        out.push_str(&format!(
            "\n[[equivalent]]\nid = \"{id}\"\nmutant = {quoted}\nreason = \"\"\n"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skeleton_marks_nothing_until_its_reasons_are_written() {
        let dir = tempfile::tempdir().expect("temp dir");
        let lab = dir.path().join("lab.feature");
        let text = skeleton(&lab, &[("abc123", "scalar `a: 1` → `a: 2`".to_owned())]);
        std::fs::write(path_for(&lab), &text).expect("write");
        assert!(
            matches!(load(&lab), Err(EquivalentsError::NoReason { .. })),
            "{text}"
        );
        std::fs::write(
            path_for(&lab),
            text.replace("reason = \"\"", "reason = \"same\""),
        )
        .expect("write");
        assert_eq!(
            load(&lab).expect("loads").get("abc123").map(String::as_str),
            Some("same")
        );
    }

    #[test]
    fn entries_need_a_reason_and_unknown_keys_are_refused() -> Result<(), Box<dyn std::error::Error>>
    {
        let dir = tempfile::tempdir()?;
        let lab = dir.path().join("lab.feature");
        assert!(load(&lab)?.is_empty());
        std::fs::write(
            path_for(&lab),
            "[[equivalent]]\nid = \"abc\"\nreason = \"same output here\"\n",
        )?;
        assert_eq!(
            load(&lab)?.get("abc").map(String::as_str),
            Some("same output here")
        );
        std::fs::write(
            path_for(&lab),
            "[[equivalent]]\nid = \"abc\"\nreason = \" \"\n",
        )?;
        assert!(matches!(load(&lab), Err(EquivalentsError::NoReason { .. })));
        std::fs::write(
            path_for(&lab),
            "[[equivalent]]\nid = \"abc\"\nwhy = \"x\"\n",
        )?;
        assert!(matches!(load(&lab), Err(EquivalentsError::Parse { .. })));
        Ok(())
    }
}
