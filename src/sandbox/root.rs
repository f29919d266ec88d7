//! The cell's root, as the list of operations its init carries out before `pivot_root`: an
//! overlay of the host's `/` (and of a learner's copied directories), hidden host directories,
//! a minimal `/dev`, the cell's own `/proc` with the kernel's knobs read-only and its secrets
//! masked, a read-only `/sys`, the cell's own `/tmp`, a fresh `/run` and the cell's tools.
//! Everything is prepared here, before the fork; [`super::unix`] only executes it.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use libc::{MS_BIND, MS_NODEV, MS_NOEXEC, MS_NOSUID, MS_PRIVATE, MS_RDONLY, MS_REC, MS_REMOUNT};

use super::beneath::Beneath;
use super::unix::Op;
use super::{SHARE, SYSTEM_PATHS, SandboxError, SandboxOptions, cstring, io_err};

/// The operations that build a cell's root under `dir/fs/root`.
pub(super) fn ops(dir: &Path, options: &SandboxOptions) -> Result<Vec<Op>, SandboxError> {
    let mut root = Root {
        dir: dir.to_owned(),
        root: dir.join("fs/root"),
        ops: Vec::new(),
    };
    root.push(mount(None, cstring("/"), None, MS_REC | MS_PRIVATE, None));
    // The overlays' layers are named relative to the cell's directory: the cell's mount table
    // (`/proc/self/mountinfo`) shows no host path of labcheck's.
    root.push(Op::Chdir(cstring(dir)));
    let host = root.overlay(Path::new("/"), &dir.join("fs"))?;
    root.push(mount(
        Some("overlay"),
        root.at("/"),
        Some("overlay"),
        0,
        Some(&host),
    ));
    if let Some(view) = &options.view {
        root.view(view)?;
    }
    // Before the fresh /tmp, /run and /dev: a hidden directory may lie under one of them.
    root.hide(&options.hide);
    root.dev();
    root.proc();
    root.sys();
    root.tmp()?;
    root.run_and_tools(&options.tools);
    Ok(root.ops)
}

/// Where the system's programs and libraries live: a learner's copied tree never stands in
/// for them (the grader runs the host's).
const PROGRAM_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];

/// The top-level directories of a learner's tree under `view` that a cell shows in place of the
/// host's (as `/name`): all but the system's and the programs'.
pub(super) fn view_dirs(view: &Path) -> Result<Vec<PathBuf>, SandboxError> {
    let entries = std::fs::read_dir(view).map_err(io_err("cannot read", view))?;
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| Path::new("/").join(e.file_name()))
        .filter(|top| {
            !SYSTEM_PATHS
                .iter()
                .chain(PROGRAM_DIRS)
                .any(|s| top.starts_with(s))
        })
        .collect();
    dirs.sort();
    Ok(dirs)
}

/// A root being described.
struct Root {
    dir: PathBuf,
    /// Where the root is assembled.
    root: PathBuf,
    ops: Vec<Op>,
}

fn mount(
    source: Option<&str>,
    target: CString,
    fstype: Option<&str>,
    flags: libc::c_ulong,
    data: Option<&str>,
) -> Op {
    Op::Mount {
        source: source.map(cstring),
        target,
        fstype: fstype.map(cstring),
        flags,
        data: data.map(cstring),
        optional: false,
    }
}

/// A mount that may fail (a path this kernel does not have).
fn optional(mut op: Op) -> Op {
    if let Op::Mount { optional, .. } = &mut op {
        *optional = true;
    }
    op
}

/// A bind mount made read-only: the bind, then its remount.
fn read_only(source: &str, target: CString, flags: libc::c_ulong) -> [Op; 2] {
    [
        mount(Some(source), target.clone(), None, MS_BIND | flags, None),
        mount(None, target, None, MS_BIND | MS_REMOUNT | MS_RDONLY, None),
    ]
}

/// An empty read-only tmpfs over a directory that may not exist.
fn empty_read_only(target: CString) -> Op {
    optional(mount(
        Some("tmpfs"),
        target,
        Some("tmpfs"),
        MS_RDONLY,
        Some("size=0"),
    ))
}

/// The operations that give a node's mount namespace (a copy of the cell's, made by a process
/// of the node's PID namespace) a `/proc` of that namespace, as the cell's is made.
pub(super) fn node_proc() -> Vec<Op> {
    let mut root = Root {
        dir: PathBuf::new(),
        root: PathBuf::from("/"),
        ops: Vec::new(),
    };
    root.proc();
    root.ops
}

/// Takes the host directory `hidden` out of an overlay of `/` whose upper layer is `upper`: a
/// whiteout at its place there, its missing parents made as the host's are (mode, owner). Walked
/// without following a link (the upper layer holds what learners wrote). A directory on another
/// file system than `/` is not in the overlay's lower layer: nothing to do. An error where the
/// upper layer holds something else than a directory on the way or a whiteout at the place.
fn whiteout(upper: &Path, hidden: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    if std::fs::metadata(hidden)?.dev() != std::fs::metadata("/")?.dev() {
        return Ok(());
    }
    let rel = hidden.strip_prefix("/").unwrap_or(hidden);
    let (Some(parent), Some(name)) = (rel.parent(), rel.file_name()) else {
        return Err(std::io::ErrorKind::InvalidInput.into());
    };
    let mut dir = Beneath::open(upper)?;
    let mut host = PathBuf::from("/");
    for part in parent.iter() {
        host.push(part);
        match dir.stat(part)? {
            None => {
                let meta = std::fs::symlink_metadata(&host)?;
                let made = dir.dir(Path::new(part), |_| {
                    Some(nix::sys::stat::Mode::from_bits_truncate(0o700))
                })?;
                dir.own(part, meta.uid(), meta.gid(), meta.mode())?;
                dir = made;
            }
            Some(s) if s.st_mode & libc::S_IFMT == libc::S_IFDIR => {
                dir = dir.dir(Path::new(part), |_| None)?;
            }
            // A whiteout: the learner removed it, and what lies beneath is not there either.
            Some(s) if s.st_mode & libc::S_IFMT == libc::S_IFCHR && s.st_rdev == 0 => {
                return Ok(());
            }
            Some(_) => return Err(std::io::ErrorKind::AlreadyExists.into()),
        }
    }
    match dir.stat(name)? {
        None => dir.whiteout(name),
        Some(s) if s.st_mode & libc::S_IFMT == libc::S_IFCHR && s.st_rdev == 0 => Ok(()),
        Some(_) => Err(std::io::ErrorKind::AlreadyExists.into()),
    }
}

/// `to` as a path relative to the directory `from` (both absolute); `/` stays `/`.
fn relative(from: &Path, to: &Path) -> PathBuf {
    if to == Path::new("/") {
        return to.to_owned();
    }
    let common = from
        .components()
        .zip(to.components())
        .take_while(|(a, b)| a == b)
        .count();
    let up = from.components().skip(common).map(|_| Path::new(".."));
    let down = to
        .components()
        .skip(common)
        .map(|c| Path::new(c.as_os_str()));
    let path: PathBuf = up.chain(down).collect();
    if path.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        path
    }
}

/// A path as an overlay option: the kernel splits options at `,` and `:`.
fn overlay_path(p: &Path) -> Result<String, SandboxError> {
    let text = p.as_os_str().as_bytes();
    if text.iter().any(|b| matches!(b, b',' | b':' | b'\\')) {
        Err(SandboxError::OverlayPath { path: p.to_owned() })
    } else {
        Ok(p.display().to_string())
    }
}

impl Root {
    fn push(&mut self, op: Op) {
        self.ops.push(op);
    }

    /// A path of the cell, inside the root being assembled.
    fn at(&self, p: &str) -> CString {
        cstring(self.root.join(p.trim_start_matches('/')))
    }

    /// The options of an overlay of `lower` whose writes land in `layer`.
    fn overlay(&self, lower: &Path, layer: &Path) -> Result<String, SandboxError> {
        for d in [layer.join("upper"), layer.join("work")] {
            std::fs::create_dir_all(&d).map_err(io_err("cannot create", &d))?;
        }
        let relative = |p: &Path| relative(&self.dir, p);
        Ok(format!(
            "lowerdir={},upperdir={},workdir={}",
            overlay_path(&relative(lower))?,
            overlay_path(&relative(&layer.join("upper")))?,
            overlay_path(&relative(&layer.join("work")))?
        ))
    }

    /// A learner's environment copied under `view`: each of its top-level directories replaces
    /// the host's (an overlay of its own: layers of one overlay may not contain each other).
    /// The tree is data: mounted `noexec`, `nosuid` and `nodev`, and never in the place of the
    /// system's programs and libraries ([`view_dirs`]), so nothing in it runs.
    fn view(&mut self, view: &Path) -> Result<(), SandboxError> {
        for top in view_dirs(view)? {
            let name = top.strip_prefix("/").unwrap_or(&top).to_owned();
            let layer = self.dir.join("fs/view").join(&name);
            let options = self.overlay(&view.join(&name), &layer)?;
            let target = cstring(self.root.join(&name));
            self.push(Op::Mkdir(target.clone()));
            self.push(mount(
                Some("overlay"),
                target,
                Some("overlay"),
                MS_NOEXEC | MS_NOSUID | MS_NODEV,
                Some(&options),
            ));
        }
        Ok(())
    }

    /// Host directories no cell may see. One on the host's root file system (the overlay's
    /// lower layer) is taken out of the cell's `/` by a whiteout in the upper layer
    /// ([`whiteout`]): it is not there at all, and no mount names it. Where that cannot be done
    /// (the upper layer holds something else at its place), an empty read-only tmpfs covers it.
    /// One removed before the cell's init mounts over it (another run's state directory as that
    /// run ends) has nothing left to hide: its mount may find no target.
    fn hide(&mut self, hide: &[PathBuf]) {
        for hidden in hide {
            if hidden.is_absolute() && hidden.is_dir() && hidden != Path::new("/") {
                if whiteout(&self.dir.join("fs/upper"), hidden).is_ok() {
                    continue;
                }
                let target = cstring(self.root.join(hidden.strip_prefix("/").unwrap_or(hidden)));
                self.push(optional(mount(
                    Some("tmpfs"),
                    target,
                    Some("tmpfs"),
                    MS_RDONLY | MS_NOSUID | MS_NODEV,
                    Some("mode=755,size=4k"),
                )));
            }
        }
    }

    /// A minimal /dev: the harmless devices, a private /dev/shm and pseudo-terminals.
    fn dev(&mut self) {
        let dev = self.at("/dev");
        self.push(mount(
            Some("tmpfs"),
            dev,
            Some("tmpfs"),
            MS_NOSUID,
            Some("mode=755,size=1m"),
        ));
        for device in ["null", "zero", "full", "random", "urandom", "tty"] {
            let target = self.at(&format!("/dev/{device}"));
            self.push(Op::Touch(target.clone()));
            let source = format!("/dev/{device}");
            self.push(mount(Some(&source), target, None, MS_BIND, None));
        }
        for (link, target) in [
            ("fd", "/proc/self/fd"),
            ("stdin", "/proc/self/fd/0"),
            ("stdout", "/proc/self/fd/1"),
            ("stderr", "/proc/self/fd/2"),
            ("ptmx", "pts/ptmx"),
        ] {
            let link = self.at(&format!("/dev/{link}"));
            self.push(Op::Symlink {
                target: cstring(target),
                link,
            });
        }
        let shm = self.at("/dev/shm");
        self.push(Op::Mkdir(shm.clone()));
        let data = Some("mode=1777");
        self.push(mount(
            Some("tmpfs"),
            shm,
            Some("tmpfs"),
            MS_NOSUID | MS_NODEV,
            data,
        ));
        let pts = self.at("/dev/pts");
        self.push(Op::Mkdir(pts.clone()));
        self.push(mount(
            Some("devpts"),
            pts,
            Some("devpts"),
            MS_NOSUID | MS_NOEXEC,
            Some("newinstance,ptmxmode=0666,mode=620"),
        ));
    }

    /// The processes of the mounting PID namespace only; the kernel's knobs read-only, its
    /// secrets masked.
    fn proc(&mut self) {
        let proc = self.at("/proc");
        let flags = MS_NOSUID | MS_NODEV | MS_NOEXEC;
        self.push(mount(Some("proc"), proc, Some("proc"), flags, None));
        for knob in [
            "/proc/sys",
            "/proc/sysrq-trigger",
            "/proc/irq",
            "/proc/bus",
            "/proc/fs",
        ] {
            let source = self.root.join(&knob[1..]).display().to_string();
            let ops = read_only(&source, self.at(knob), MS_REC).map(optional);
            self.ops.extend(ops);
        }
        // The paths container runtimes mask: files read as /dev/null, directories as an empty
        // read-only tmpfs. /proc/kmsg above all: reading it blocks, and a learner's link to it
        // must not make a check read the kernel's log.
        let null = self.root.join("dev/null").display().to_string();
        for secret in [
            "/proc/kcore",
            "/proc/keys",
            "/proc/kmsg",
            "/proc/latency_stats",
            "/proc/timer_list",
            "/proc/timer_stats",
            "/proc/sched_debug",
        ] {
            let target = self.at(secret);
            self.push(optional(mount(Some(&null), target, None, MS_BIND, None)));
        }
        for dir in ["/proc/acpi", "/proc/asound", "/proc/scsi"] {
            self.push(empty_read_only(self.at(dir)));
        }
    }

    /// A read-only /sys, its firmware hidden.
    fn sys(&mut self) {
        let sys = self.at("/sys");
        let flags = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC;
        self.push(mount(Some("sysfs"), sys, Some("sysfs"), flags, None));
        self.push(empty_read_only(self.at("/sys/firmware")));
    }

    /// The cell's own /tmp: a directory of the cell (not the host's /tmp, not memory), so a
    /// checkpoint holds what a step left there.
    fn tmp(&mut self) -> Result<(), SandboxError> {
        use std::os::unix::fs::PermissionsExt;
        let tmp = self.dir.join("fs/tmp");
        std::fs::create_dir_all(&tmp).map_err(io_err("cannot create", &tmp))?;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o1777))
            .map_err(io_err("cannot set the mode of", &tmp))?;
        let target = self.at("/tmp");
        let source = tmp.display().to_string();
        self.push(mount(Some(&source), target.clone(), None, MS_BIND, None));
        let flags = MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NODEV;
        self.push(mount(None, target, None, flags, None));
        Ok(())
    }

    /// A fresh /run (the host's sockets — a container engine's, the system bus — are not the
    /// cell's), holding the cell's share: its kubeconfig and its tools, read-only.
    fn run_and_tools(&mut self, tools: &[(String, PathBuf)]) {
        let run = self.at("/run");
        let data = Some("mode=755");
        self.push(mount(
            Some("tmpfs"),
            run,
            Some("tmpfs"),
            MS_NOSUID | MS_NODEV,
            data,
        ));
        let share = self.at(SHARE);
        self.push(Op::Mkdir(share.clone()));
        let source = self.dir.join("share").display().to_string();
        self.push(mount(Some(&source), share, None, MS_BIND, None));
        let bin = tools
            .iter()
            .map(|(name, path)| (format!("bin/{name}"), path));
        for (name, path) in bin {
            let target = self.at(&format!("{SHARE}/{name}"));
            self.push(Op::Touch(target.clone()));
            let ops = read_only(&path.display().to_string(), target, 0);
            self.ops.extend(ops);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_are_named_relative_to_the_cell() {
        let cell = Path::new("/var/tmp/state/cells/lab-1");
        assert_eq!(relative(cell, Path::new("/")), Path::new("/"));
        assert_eq!(
            relative(cell, Path::new("/var/tmp/state/cells/lab-1/fs/upper")),
            Path::new("fs/upper")
        );
        assert_eq!(
            relative(cell, Path::new("/var/tmp/state/views/x/root")),
            Path::new("../../views/x/root")
        );
        assert_eq!(relative(cell, cell), Path::new("."));
    }

    #[test]
    fn a_hidden_directory_is_a_whiteout_under_parents_made_as_the_hosts() {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let hidden = tempfile::tempdir_in("/var/tmp").expect("hidden");
        let upper = tempfile::tempdir_in("/var/tmp").expect("upper");
        whiteout(upper.path(), hidden.path()).expect("whiteout");
        let place = upper
            .path()
            .join(hidden.path().strip_prefix("/").expect("absolute"));
        let meta = std::fs::symlink_metadata(&place).expect("the whiteout");
        assert!(meta.file_type().is_char_device() && meta.rdev() == 0);
        let var_tmp = std::fs::metadata(upper.path().join("var/tmp")).expect("var/tmp");
        assert_eq!(
            var_tmp.mode(),
            std::fs::metadata("/var/tmp").expect("host").mode()
        );
        // Again (a cell from a checkpoint of that upper layer): already hidden.
        whiteout(upper.path(), hidden.path()).expect("again");
        // A learner's link in the upper layer is not followed.
        let other = tempfile::tempdir_in("/var/tmp").expect("other");
        let upper2 = tempfile::tempdir_in("/var/tmp").expect("upper2");
        std::fs::create_dir(upper2.path().join("var")).expect("var");
        std::os::unix::fs::symlink(other.path(), upper2.path().join("var/tmp")).expect("link");
        assert!(whiteout(upper2.path(), hidden.path()).is_err());
        assert_eq!(std::fs::read_dir(other.path()).expect("read").count(), 0);
    }
}
