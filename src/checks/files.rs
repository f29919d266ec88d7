//! File checks: existence, emptiness, contents, regular expressions and line counts.

use super::{Check, Env, Failure, Fault, excerpt, read_text};
use crate::model::Lang;
use std::path::Path;

pub(super) fn evaluate(check: &Check, env: &Env<'_>, lang: Lang) -> Result<(), Fault> {
    match check {
        Check::FileExists(path) => read_text(env, path, lang).map(|_| ()),
        Check::FileAbsent(path) => absent(env, path, lang),
        Check::FileNonEmpty(path) => {
            let text = read_text(env, path, lang)?;
            verdict(!text.trim().is_empty(), || {
                Failure::new(
                    format!(
                        "{} {}",
                        path.display(),
                        lang.pick("not empty", "が空でないこと")
                    ),
                    lang.pick("the file is empty", "ファイルが空"),
                )
            })
        }
        Check::FileContains(path, needle) => {
            let text = read_text(env, path, lang)?;
            verdict(text.contains(needle.as_str()), || {
                Failure::new(
                    format!(
                        "{} {needle:?}",
                        lang.pick("a line containing", "次を含むこと:")
                    ),
                    excerpt(&text),
                )
            })
        }
        Check::FileLacks(path, needle) => lacks(env, path, needle, lang),
        Check::FileMatches(path, re) => {
            let text = read_text(env, path, lang)?;
            verdict(re.is_match(&text), || {
                Failure::new(
                    format!(
                        "{} /{re}/",
                        lang.pick("text matching", "次にマッチすること:")
                    ),
                    excerpt(&text),
                )
            })
        }
        Check::LinesMatchingAtLeast(path, n, re) => lines_matching(env, path, *n, re, lang),
        Check::LineCount(path, n) => line_count(env, path, *n, lang),
        _ => Ok(()),
    }
}

/// No file at `path`: not there at all (a directory is not "no file").
fn absent(env: &Env<'_>, path: &Path, lang: Lang) -> Result<(), Fault> {
    let expected = || {
        format!(
            "{} {}",
            lang.pick("no file at", "次にファイルがないこと:"),
            path.display()
        )
    };
    match (env.read)(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::IsADirectory => verdict(false, || {
            Failure::new(expected(), lang.pick("a directory", "ディレクトリ"))
        }),
        Err(source) => Err(super::CheckError::Read {
            path: path.to_owned(),
            source: std::sync::Arc::new(source),
        }
        .into()),
        Ok(bytes) => verdict(false, || {
            Failure::new(expected(), excerpt(&String::from_utf8_lossy(&bytes)))
        }),
    }
}

/// No line of the file contains `needle`; the first that does is what was found.
fn lacks(env: &Env<'_>, path: &Path, needle: &str, lang: Lang) -> Result<(), Fault> {
    let text = read_text(env, path, lang)?;
    match text.lines().enumerate().find(|(_, l)| l.contains(needle)) {
        None => Ok(()),
        Some((i, l)) => Err(Fault::Failed(Failure::new(
            format!(
                "{} {needle:?}",
                lang.pick("no occurrence of", "次を含まないこと:")
            ),
            format!("{}:{}: {}", path.display(), i + 1, l.trim()),
        ))),
    }
}

/// At least `n` lines of the file match `re`.
fn lines_matching(
    env: &Env<'_>,
    path: &Path,
    n: usize,
    re: &regex::Regex,
    lang: Lang,
) -> Result<(), Fault> {
    let text = read_text(env, path, lang)?;
    let count = text.lines().filter(|l| re.is_match(l)).count();
    verdict(count >= n, || {
        Failure::new(
            match lang {
                Lang::En => format!("at least {n} lines matching /{re}/"),
                Lang::Ja => format!("/{re}/ にマッチする行が {n} 行以上"),
            },
            match lang {
                Lang::En => format!("{count} such lines"),
                Lang::Ja => format!("{count} 行"),
            },
        )
    })
}

/// The file has exactly `n` lines.
fn line_count(env: &Env<'_>, path: &Path, n: usize, lang: Lang) -> Result<(), Fault> {
    let text = read_text(env, path, lang)?;
    let count = text.lines().count();
    verdict(count == n, || {
        Failure::new(
            match lang {
                Lang::En => format!("exactly {n} lines"),
                Lang::Ja => format!("ちょうど {n} 行"),
            },
            match lang {
                Lang::En => format!("{count} lines:{}", excerpt(&text)),
                Lang::Ja => format!("{count} 行:{}", excerpt(&text)),
            },
        )
    })
}

/// Passes when `holds`, else fails with what `failure` says.
fn verdict(holds: bool, failure: impl FnOnce() -> Failure) -> Result<(), Fault> {
    if holds {
        Ok(())
    } else {
        Err(Fault::Failed(failure()))
    }
}
