//! The Debian recipes: busybox from a `.deb` (`apt-get download`, `dpkg-deb -x`, a symlink per
//! applet) and minbase rootfses made by `mmdebstrap` from the host's mirror, pruned of device
//! nodes, with the installed packages' versions read back for the image's description.

use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::process::Command;

use super::archive::Layer;
use super::build::{Product, SHORT, command, write_layer};
use super::layer::filter;
use super::run::{quote, run};
use super::table::File;
use super::{ImageError, io_err};

const APT: Duration = Duration::from_secs(600);
const MMDEBSTRAP: Duration = Duration::from_secs(20 * 60);
/// mmdebstrap's hooks that merge /usr with symlinks, as debootstrap does, instead of
/// installing `usrmerge` (which pulls in perl: 45 MB).
const MERGED_USR: &str = "/usr/share/mmdebstrap/hooks/merged-usr";
/// Left out of Debian rootfses, as Debian's slim images do; copyright files stay.
const DPKG_EXCLUDES: &[&str] = &[
    "path-exclude=/usr/share/man/*",
    "path-exclude=/usr/share/info/*",
    "path-exclude=/usr/share/locale/*",
    "path-exclude=/usr/share/doc/*",
    "path-include=/usr/share/doc/*/copyright",
];
/// Directories of the busybox image besides those its applets live in: (path, mode).
const BUSYBOX_SKELETON: &[(&str, u32)] = &[
    ("bin", 0o755),
    ("dev", 0o755),
    ("etc", 0o755),
    ("home", 0o755),
    ("root", 0o700),
    ("tmp", 0o1777),
    ("var", 0o755),
];

/// The busybox image's one layer: `/bin/busybox` from `package`, a symlink per applet, the
/// skeleton directories and `files`.
pub async fn busybox(
    image: &str,
    package: &str,
    files: &'static [File],
    work: &Path,
) -> Result<Product, ImageError> {
    let deb = download(image, package, work).await?;
    let field = ["--field".as_ref(), deb.as_os_str(), "Version".as_ref()];
    let version = run(image, command("dpkg-deb", field), SHORT).await?;
    let version = version.trim();
    let root = work.join("root");
    let extract = ["-x".as_ref(), deb.as_os_str(), root.as_os_str()];
    run(image, command("dpkg-deb", extract), SHORT).await?;
    let binary = root.join("bin/busybox");
    let list = run(image, command(&binary, ["--list-full"]), SHORT).await?;
    // Applets at the root (linuxrc) are for initramfs use, not containers.
    let applets: Vec<String> = list
        .lines()
        .map(str::trim)
        .filter(|a| a.contains('/') && *a != "bin/busybox")
        .map(String::from)
        .collect();
    let mut dirs: BTreeSet<(String, u32)> = BTreeSet::new();
    let parents = applets.iter().map(String::as_str);
    for path in parents.chain(files.iter().map(|f| f.path.trim_start_matches('/'))) {
        let mut parent = Path::new(path).parent();
        while let Some(dir) = parent.filter(|d| !d.as_os_str().is_empty()) {
            dirs.insert((dir.to_string_lossy().into_owned(), 0o755));
            parent = dir.parent();
        }
    }
    for (dir, mode) in BUSYBOX_SKELETON {
        dirs.retain(|(d, _)| d != dir);
        dirs.insert((dir.to_string(), *mode));
    }
    let layer = work.join("layer.tar");
    let count = applets.len();
    write_layer(image, &layer, move |w| {
        for (dir, mode) in &dirs {
            w.dir(dir, *mode)?;
        }
        w.copy("bin/busybox", 0o755, &binary)?;
        for applet in &applets {
            w.symlink(applet, "/bin/busybox")?;
        }
        for file in files {
            w.file(
                file.path.trim_start_matches('/'),
                0o644,
                file.content.as_bytes(),
            )?;
        }
        Ok(())
    })
    .await?;
    Ok(Product {
        layers: vec![Layer {
            path: layer,
            created_by: format!("{package} {version}: /bin/busybox and {count} applet symlinks"),
        }],
        details: format!("{package} {version} from the host's apt sources"),
    })
}

/// `apt-get download package` into `dir`; on failure `apt-get update` and once more.
async fn download(image: &str, package: &str, dir: &Path) -> Result<PathBuf, ImageError> {
    let attempt = || {
        let mut cmd = Command::new("apt-get");
        cmd.arg("download").arg(package).current_dir(dir);
        cmd
    };
    if run(image, attempt(), APT).await.is_err() {
        crate::errln!("labcheck: `apt-get download {package}` failed; running `apt-get update`");
        run(image, command("apt-get", ["update"]), APT).await?;
        run(image, attempt(), APT).await?;
    }
    let entries = std::fs::read_dir(dir).map_err(io_err(image, "cannot list", dir))?;
    let prefix = format!("{package}_");
    entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
            name.is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".deb"))
        })
        .ok_or_else(|| ImageError::Unexpected {
            image: image.to_string(),
            what: format!(
                "`apt-get download {package}` left no {prefix}*.deb in {}",
                dir.display()
            ),
        })
}

/// A minbase rootfs of `suite` from `mirror` with `packages`, `files` and `hook`, as one layer.
pub async fn debian(
    image: &str,
    (suite, mirror): (&str, &str),
    packages: &[&str],
    files: &[File],
    hook: &str,
    work: &Path,
) -> Result<Product, ImageError> {
    let mut script = String::from("set -e\n");
    for (i, file) in files.iter().enumerate() {
        let host = work.join(format!("file-{i}"));
        std::fs::write(&host, file.content).map_err(io_err(image, "cannot write", &host))?;
        let inside = format!("\"$1\"{}", quote(file.path));
        let host = quote(&host.to_string_lossy());
        script.push_str(&format!(
            "mkdir -p \"$(dirname {inside})\"\ncp {host} {inside}\nchmod 0644 {inside}\n"
        ));
    }
    let versions = work.join("versions");
    let record = format!(
        "set -e\nchroot \"$1\" dpkg-query -W -f='${{Package}} ${{Version}}\\n' {} > {}\n\
         : > \"$1/etc/resolv.conf\"\n: > \"$1/etc/hostname\"\n\
         chmod 0644 \"$1/etc/resolv.conf\" \"$1/etc/hostname\"\n",
        packages.join(" "),
        quote(&versions.to_string_lossy()),
    );
    let out = work.join("rootfs.tar");
    let mut cmd = Command::new("nice");
    cmd.args(["-n", "10", "mmdebstrap", "--variant=minbase"])
        .arg(format!("--hook-dir={MERGED_USR}"))
        .arg(format!("--include={}", packages.join(",")))
        .arg("--aptopt=APT::Install-Recommends \"false\"");
    for option in DPKG_EXCLUDES {
        cmd.arg(format!("--dpkgopt={option}"));
    }
    // The man pages are left out, but maintainer scripts that register one with
    // update-alternatives (OpenJDK's) fail without its directory, as on Debian's slim images.
    cmd.arg("--essential-hook=mkdir -p \"$1/usr/share/man/man1\"");
    for hook in [script.as_str(), hook, record.as_str()] {
        if !hook.trim().is_empty() {
            cmd.arg(format!("--customize-hook={hook}"));
        }
    }
    cmd.arg(suite).arg(&out).arg(mirror);
    run(image, cmd, MMDEBSTRAP).await?;
    // mmdebstrap packs device nodes into /dev; a container runtime provides its own /dev.
    // (GNU tar 1.34's --delete also dropped unrelated members, /var/log/nginx among them.)
    let layer = work.join("layer.tar");
    let (from, to) = (out.clone(), layer.clone());
    tokio::task::spawn_blocking(move || filter(&from, &to, |path| !device_entry(path)))
        .await
        .map_err(io::Error::other)
        .and_then(|r| r)
        .map_err(io_err(image, "cannot write the layer", &layer))?;
    std::fs::remove_file(&out).map_err(io_err(image, "cannot remove", &out))?;
    let found =
        std::fs::read_to_string(&versions).map_err(io_err(image, "cannot read", &versions))?;
    let found: Vec<&str> = found
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    Ok(Product {
        layers: vec![Layer {
            path: layer,
            created_by: format!(
                "mmdebstrap --variant=minbase --include={} {suite} {mirror}",
                packages.join(",")
            ),
        }],
        details: format!("{} from {mirror} {suite}", found.join(", ")),
    })
}

/// Whether `path` (`./dev/null`, `dev/pts/`) is inside `/dev` — but not `/dev` itself.
pub fn device_entry(path: &str) -> bool {
    let path = path.trim_start_matches("./").trim_start_matches('/');
    path.strip_prefix("dev/")
        .is_some_and(|rest| !rest.is_empty())
}

/// The host's Debian mirror: the first `URIs:` of `/etc/apt/sources.list.d/debian.sources`,
/// else the first `deb` line of `/etc/apt/sources.list`.
pub fn host_mirror(image: &str) -> Result<String, ImageError> {
    const DEB822: &str = "/etc/apt/sources.list.d/debian.sources";
    const LIST: &str = "/etc/apt/sources.list";
    let deb822 = std::fs::read_to_string(DEB822).unwrap_or_default();
    let from_deb822 = deb822.lines().find_map(|line| {
        let uris = line.trim().strip_prefix("URIs:")?;
        uris.split_whitespace().next().map(String::from)
    });
    let list = std::fs::read_to_string(LIST).unwrap_or_default();
    let from_list = || {
        list.lines().find_map(|line| {
            let rest = line.trim().strip_prefix("deb ")?.trim_start();
            // Skip `[arch=amd64 signed-by=...]` options.
            let rest = match rest.strip_prefix('[') {
                Some(options) => options.split_once(']')?.1,
                None => rest,
            };
            rest.split_whitespace().next().map(String::from)
        })
    };
    from_deb822
        .or_else(from_list)
        .ok_or_else(|| ImageError::Unexpected {
            image: image.to_string(),
            what: format!("no Debian mirror: {DEB822} has no URIs: line and {LIST} no deb line"),
        })
}

/// `VERSION_CODENAME` of `/etc/os-release`, or `unknown`.
pub fn host_codename() -> String {
    let release = std::fs::read_to_string("/etc/os-release").unwrap_or_default();
    release
        .lines()
        .find_map(|l| l.strip_prefix("VERSION_CODENAME="))
        .map(|c| c.trim_matches('"').to_string())
        .unwrap_or_else(|| "unknown".into())
}
