//! The rows of Istio's helloworld sample (v1, v2): the cell's Istio version's
//! `samples/helloworld/src`, built as the sample's Dockerfile builds it, on a Debian bookworm
//! minbase.

use super::archive::ImageConfig;
use super::table::{Recipe, Row};

/// A helloworld image of Istio's samples: its version is its environment's `SERVICE_VERSION`,
/// as the sample's Dockerfile builds it (`--build-arg service_version`).
pub const fn row(references: &'static [&'static str], env: &'static [&'static str]) -> Row {
    Row {
        references,
        recipe: Recipe::Sample {
            suite: "bookworm",
            packages: HELLOWORLD_PACKAGES,
            sources: &["helloworld/src"],
            files: &[],
            hook: HELLOWORLD_HOOK,
        },
        config: ImageConfig {
            env,
            cmd: HELLOWORLD_CMD,
            working_dir: "/opt/microservices",
            exposed_ports: &["5000/tcp"],
            ..ImageConfig::EMPTY
        },
        contents: HELLOWORLD_CONTENTS,
    }
}

/// What Istio's `samples/helloworld/src/Dockerfile` installs from Debian (its base image's
/// Python, and curl).
const HELLOWORLD_PACKAGES: &[&str] = &["python3", "curl", "ca-certificates"];

/// The Dockerfile's steps: `app.py` and `requirements.txt` in `/opt/microservices`, the pinned
/// requirements installed with their hashes — by the host's pip for the image's Python 3.11
/// (pip inside the rootfs would not trust the host's certificates), into the rootfs's
/// `dist-packages`.
const HELLOWORLD_HOOK: &str = r#"set -e
python3 -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' || { echo "the host's python3 is not 3.11, the image's: its pip cannot install the sample's wheels" >&2; exit 1; }
mkdir -p "$1/opt/microservices"
cp {samples}/helloworld/src/app.py {samples}/helloworld/src/requirements.txt "$1/opt/microservices/"
python3 -m pip install --quiet --no-cache-dir --disable-pip-version-check --require-hashes --no-deps --no-compile --target "$1/usr/local/lib/python3.11/dist-packages" -r {samples}/helloworld/src/requirements.txt
rm -rf "$1/usr/local/lib/python3.11/dist-packages/bin""#;

/// The Dockerfile's command, through `python3 -m` (the host's pip wrote no scripts for the
/// image's Python).
const HELLOWORLD_CMD: &[&str] = &[
    "python3",
    "-m",
    "gunicorn",
    "-b",
    "[::]:5000",
    "app:app",
    "-k",
    "gevent",
];

const HELLOWORLD_CONTENTS: &str = "Istio's samples/helloworld/src of the cell's Istio version (app.py, \
     its requirements.txt installed with their hashes from PyPI) on a Debian bookworm minbase \
     with Python 3.11 and curl, run by gunicorn as the sample's Dockerfile does (the official \
     image is python:3.12-slim)";
