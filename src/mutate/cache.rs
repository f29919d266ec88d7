//! Mutant outcomes kept by content, so a mutant whose outcome cannot have changed is not run
//! again. A caught mutant's outcome depends only on the text of its feature up to the check that
//! caught it (steps run in order and stop at the first failure); a missed one on the whole text.
//! An entry is keyed by the hash of that prefix and of what else decides an outcome: the Istio
//! version, labcheck's own executable, and the contents of the lab's fixtures. Timeouts and
//! errors are never kept. Entries live in the state directory (`labcheck clean` removes them);
//! `--no-cache` neither reads nor writes them.

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::Outcome;

/// What a kept entry says.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "outcome", rename_all = "lowercase")]
enum Kept {
    Caught { line: usize, message: String },
    Missed,
}

/// The outcomes kept for one environment (an Istio version, this executable, these fixtures).
pub struct Cache {
    dir: PathBuf,
    /// The hash of what decides outcomes besides the feature's text.
    environment: [u8; 32],
    /// The keys present when the cache was opened.
    present: HashSet<String>,
}

impl Cache {
    /// Opens the cache under `dir` for an environment described by `parts` (in order).
    pub fn open(dir: &Path, parts: &[&[u8]]) -> Cache {
        let mut h = Sha256::new();
        h.update(b"labcheck mutant outcomes v1\0");
        for part in parts {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part);
        }
        let present = std::fs::read_dir(dir)
            .map(|entries| {
                entries
                    .filter_map(|e| e.ok())
                    .filter_map(|e| e.file_name().to_str().map(str::to_owned))
                    .filter_map(|n| n.strip_suffix(".json").map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        Cache {
            dir: dir.to_owned(),
            environment: h.finalize().into(),
            present,
        }
    }

    /// The key of each prefix of `text` that ends a line: entry `i` covers lines `1..=i+1`.
    fn prefix_keys(&self, text: &str) -> Vec<String> {
        let mut h = Sha256::new();
        h.update(self.environment);
        let mut keys = Vec::new();
        for line in text.split_inclusive('\n') {
            h.update(line.as_bytes());
            keys.push(hex(&h.clone().finalize()));
        }
        keys
    }

    /// The kept outcome of a mutant's feature text, if one is.
    pub fn get(&self, text: &str) -> Option<Outcome> {
        let keys = self.prefix_keys(text);
        for (i, key) in keys.iter().enumerate() {
            if !self.present.contains(key) {
                continue;
            }
            let Ok(bytes) = std::fs::read(self.dir.join(format!("{key}.json"))) else {
                continue;
            };
            match serde_json::from_slice::<Kept>(&bytes) {
                // A caught entry is good for the text up to its check's line.
                Ok(Kept::Caught { line, message }) if line == i + 1 => {
                    return Some(Outcome::Caught { line, message });
                }
                Ok(Kept::Missed) if i + 1 == keys.len() => return Some(Outcome::Missed),
                _ => {}
            }
        }
        None
    }

    /// Keeps a mutant's outcome (caught and missed ones only). A write that fails loses only
    /// the saving of time: it is not an error of the session.
    pub fn put(&self, text: &str, outcome: &Outcome) {
        let keys = self.prefix_keys(text);
        let (index, kept) = match outcome {
            Outcome::Caught { line, message } => (
                *line - 1,
                Kept::Caught {
                    line: *line,
                    message: message.clone(),
                },
            ),
            Outcome::Missed => (keys.len().saturating_sub(1), Kept::Missed),
            _ => return,
        };
        let Some(key) = keys.get(index) else {
            return;
        };
        let _ = write_atomically(&self.dir, key, &kept);
    }
}

fn write_atomically(dir: &Path, key: &str, kept: &Kept) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    // Written beside its place and renamed into it: a reader never sees half an entry, and two
    // sessions writing one entry write the same bytes.
    let tmp = dir.join(format!(".{key}.{}.tmp", std::process::id()));
    let mut file = std::fs::File::create(&tmp)?;
    file.write_all(&serde_json::to_vec(kept).map_err(std::io::Error::other)?)?;
    drop(file);
    std::fs::rename(&tmp, dir.join(format!("{key}.json")))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A digest of the files under `dirs` (paths and contents, in order).
pub fn tree_digest(dirs: &[PathBuf]) -> Vec<u8> {
    let mut h = Sha256::new();
    for dir in dirs {
        let mut files: Vec<PathBuf> = Vec::new();
        let mut stack = vec![dir.clone()];
        while let Some(d) = stack.pop() {
            if d.is_file() {
                files.push(d);
                continue;
            }
            if let Ok(entries) = std::fs::read_dir(&d) {
                stack.extend(entries.filter_map(|e| e.ok()).map(|e| e.path()));
            }
        }
        files.sort();
        for f in files {
            // Paths inside the fixture: a copy of the lab elsewhere shares its outcomes.
            let rel = f.strip_prefix(dir).unwrap_or(&f);
            h.update(rel.to_string_lossy().as_bytes());
            h.update([0]);
            h.update(std::fs::read(&f).unwrap_or_default());
            h.update([0]);
        }
    }
    h.finalize().to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caught_outcome_holds_for_its_prefix_a_missed_one_for_the_whole_text() {
        let dir = tempfile::tempdir().expect("temp dir");
        let cache = Cache::open(dir.path(), &[b"1.31"]);
        let text = "a\nb\nc\nd\n";
        let caught = Outcome::Caught {
            line: 2,
            message: "expected x".into(),
        };
        cache.put(text, &caught);
        cache.put("a\nb\nc\nd\ne\n", &Outcome::Missed);
        let cache = Cache::open(dir.path(), &[b"1.31"]);
        // Lines after the catching check do not matter; lines before it do.
        assert_eq!(cache.get("a\nb\nchanged\n"), Some(caught.clone()));
        assert_eq!(cache.get("A\nb\nc\nd\n"), None);
        assert_eq!(cache.get("a\nb\nc\nd\ne\n"), Some(caught));
        // Another environment shares nothing.
        let other = Cache::open(dir.path(), &[b"1.30"]);
        assert_eq!(other.get("a\nb\nc\nd\n"), None);
        // A missed outcome holds for exactly its text.
        let missed_dir = tempfile::tempdir().expect("temp dir");
        let m = Cache::open(missed_dir.path(), &[b"x"]);
        m.put("p\nq\n", &Outcome::Missed);
        let m = Cache::open(missed_dir.path(), &[b"x"]);
        assert_eq!(m.get("p\nq\n"), Some(Outcome::Missed));
        assert_eq!(m.get("p\nq\nr\n"), None);
        // Timeouts are never kept.
        m.put("t\n", &Outcome::Timeout);
        assert_eq!(Cache::open(missed_dir.path(), &[b"x"]).get("t\n"), None);
    }
}
