//! The cell's root, as the list of operations its init carries out before `pivot_root`: an
//! overlay of the host's `/` (and of a learner's copied directories), hidden host directories,
//! a minimal `/dev`, the cell's own `/proc` with the kernel's knobs read-only and its secrets
//! masked, a read-only `/sys`, the cell's own `/tmp`, a fresh `/run` and the cell's tools.
//! Everything is prepared here, before the fork; [`super::unix`] only executes it.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use libc::{MS_BIND, MS_NODEV, MS_NOEXEC, MS_NOSUID, MS_PRIVATE, MS_RDONLY, MS_REC, MS_REMOUNT};

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
    root.proc_and_sys();
    root.tmp()?;
    root.run_and_tools(&options.tools, &options.pod_tools);
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
        Ok(format!(
            "lowerdir={},upperdir={},workdir={}",
            overlay_path(lower)?,
            overlay_path(&layer.join("upper"))?,
            overlay_path(&layer.join("work"))?
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

    /// Host directories no cell may see, covered by an empty read-only tmpfs. One removed before
    /// the cell's init mounts over it (another run's state directory as that run ends) has
    /// nothing left to hide: its mount may find no target.
    fn hide(&mut self, hide: &[PathBuf]) {
        for hidden in hide {
            if hidden.is_absolute() && hidden.is_dir() && hidden != Path::new("/") {
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

    /// The cell's own processes only; the kernel's knobs read-only, its secrets masked; /sys
    /// read-only.
    fn proc_and_sys(&mut self) {
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
        let sys = self.at("/sys");
        let flags = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC;
        self.push(mount(Some("sysfs"), sys, Some("sysfs"), flags, None));
        for dir in ["/proc/acpi", "/proc/asound", "/proc/scsi", "/sys/firmware"] {
            let target = self.at(dir);
            let data = Some("size=0");
            self.push(optional(mount(
                Some("tmpfs"),
                target,
                Some("tmpfs"),
                MS_RDONLY,
                data,
            )));
        }
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
    fn run_and_tools(&mut self, tools: &[(String, PathBuf)], pod_tools: &[(String, PathBuf)]) {
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
        let pod = pod_tools
            .iter()
            .map(|(name, path)| (format!("pod/{name}"), path));
        for (name, path) in bin.chain(pod) {
            let target = self.at(&format!("{SHARE}/{name}"));
            self.push(Op::Touch(target.clone()));
            let ops = read_only(&path.display().to_string(), target, 0);
            self.ops.extend(ops);
        }
    }
}
