//! What `/proc` says of a process that the sandbox and the cluster's processes need: its parent.

/// The parent of process `pid`, while it is a process (not yet reaped).
pub fn parent_of(pid: i32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name, in parentheses, may hold spaces and parentheses itself.
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(1)?.parse().ok()
}
