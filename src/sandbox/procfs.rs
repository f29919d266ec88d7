//! What `/proc` says of a process that the sandbox and the cluster's processes need: its parent,
//! its children, and where this process's arguments lie.

/// The parent of process `pid`, while it is a process (not yet reaped).
pub fn parent_of(pid: i32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name, in parentheses, may hold spaces and parentheses itself.
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// The processes whose parent is `parent`, while they are processes.
pub fn children_of(parent: u32) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| parent_of(*pid) == Some(parent))
        .collect()
}

/// Where this process's arguments lie in its memory (`/proc/self/stat`'s `arg_start` and
/// `arg_end`): an init forked from the harness blanks them, so the cell's `/proc/1/cmdline`
/// shows `init` rather than the harness's command line with its host paths.
pub(super) fn argv_area() -> Option<(usize, usize)> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may hold spaces) start at the third.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let start = fields.get(48 - 3)?.parse().ok()?;
    let end: usize = fields.get(49 - 3)?.parse().ok()?;
    (end > start + 5).then_some((start, end))
}
