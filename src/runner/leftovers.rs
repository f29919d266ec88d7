//! What a cell leaves behind: the record a kept cell is found by (`ps`, `shell`, `grade`,
//! `down`), and a failed cell's files copied into the report directory.

use std::path::PathBuf;

use super::RunOptions;
use crate::cell::Cell;
use crate::cluster::Cluster;

/// Writes what `labcheck ps`, `shell`, `grade` and `down` need to find a kept cell.
pub(super) fn record_kept(cell: &Cell, cluster: Option<&Cluster>) {
    let mut record = crate::kept::KeptCell {
        name: cell
            .sandbox
            .dir()
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| cell.id.slug()),
        id: cell.id.to_string(),
        lab: std::fs::canonicalize(&cell.lab.path).unwrap_or_else(|_| cell.lab.path.clone()),
        dir: cell.sandbox.dir().to_owned(),
        holder: cell.sandbox.holder_pid().unwrap_or_default(),
        cluster_pids: cluster.map(|c| c.pids()).unwrap_or_default(),
        env: cell
            .sandbox
            .env()
            .into_iter()
            .map(|(k, v)| (k, v.to_string_lossy().into_owned()))
            .collect(),
        workdir: cell.sandbox.workdir(),
        has_cluster: cluster.is_some(),
        started: Default::default(),
        pid_namespace: None,
        kind: cluster.and_then(Cluster::kind_record).map(Box::new),
    };
    record.pid_namespace = crate::kept::pid_namespace(record.holder);
    record.started = std::iter::once(record.holder)
        .chain(record.cluster_pids.iter().map(|p| *p as i32))
        .filter_map(|p| crate::sandbox::start_time(p).map(|t| (p, t)))
        .collect();
    let _ = record.save();
}

/// The most a failed cell's leftovers take in the report directory.
const LEFTOVERS_MAX: u64 = 64 << 20;

/// The most of each process log a failed cell's report keeps (its end).
const LOG_MAX: u64 = 4 << 20;

/// Copies what the learner's commands wrote (the overlays' upper layers) into the report
/// directory — symlinks as symlinks, never followed, up to [`LEFTOVERS_MAX`] — and the end of
/// each of `logs` (a live mesh's processes') into its `logs/`; or, for a kept cell, points at
/// the live cell.
pub(super) fn keep_leftovers(
    opts: &RunOptions,
    cell: &Cell,
    keep: bool,
    logs: &[(String, PathBuf)],
) -> Option<PathBuf> {
    if keep {
        return Some(cell.sandbox.dir().to_owned());
    }
    let report = opts.report_dir.join(cell.id.slug());
    copy_logs(logs, &report.join("logs"));
    let target = report.join("files");
    let _ = std::fs::remove_dir_all(&target);
    let read = crate::sandbox::tree::read_lenient(&cell.sandbox.upper_dir(), LEFTOVERS_MAX).ok()?;
    let _ = crate::sandbox::tree::write(&read.entries, &target);
    if read.cut {
        let _ = std::fs::write(
            report.join("files-truncated.txt"),
            format!(
                "the cell wrote more than {} MiB: files past that were not copied\n",
                LEFTOVERS_MAX >> 20
            ),
        );
    }
    Some(report)
}

/// A cell whose environment could not start (its cluster not ready, say): the end of every log
/// its cluster wrote under `dir/cluster` (the processes', the node's containers') into the report
/// directory's `<cell>/<into>/`, named by their path there, before the cell's directory goes.
pub(super) fn keep_start_logs(
    opts: &RunOptions,
    id: &crate::model::CellId,
    dir: &std::path::Path,
    into: &str,
) {
    let cluster = dir.join("cluster");
    let logs: Vec<(String, PathBuf)> = crate::sandbox::tree::files_under(&cluster)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .map(|p| {
            let relative = p.strip_prefix(&cluster).unwrap_or(&p);
            let name = relative.to_string_lossy().replace('/', "_");
            (name, p)
        })
        .collect();
    copy_logs(&logs, &opts.report_dir.join(id.slug()).join(into));
}

/// Copies the last [`LOG_MAX`] bytes of each log into `to` under its name; a log that cannot be
/// read is left out (this feeds the report, never a verdict).
fn copy_logs(logs: &[(String, PathBuf)], to: &std::path::Path) {
    use std::io::{Read, Seek, SeekFrom};
    for (name, log) in logs {
        let Ok(mut file) = std::fs::File::open(log) else {
            continue;
        };
        let len = file.metadata().map(|m| m.len()).unwrap_or_default();
        let mut tail = Vec::new();
        if file
            .seek(SeekFrom::Start(len.saturating_sub(LOG_MAX)))
            .is_ok()
            && file.read_to_end(&mut tail).is_ok()
            && std::fs::create_dir_all(to).is_ok()
        {
            let _ = std::fs::write(to.join(name), tail);
        }
    }
}
