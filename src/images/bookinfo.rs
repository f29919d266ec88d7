//! The rows of Bookinfo's images: details (Ruby), ratings (Node.js), reviews v1/v2/v3 (Java)
//! and productpage (Python), each built from the cell's Istio version's
//! `samples/bookinfo/src` as the sample's Dockerfiles build them, on Debian bookworm minbase
//! rootfses, with what the Dockerfiles fetch taken from the registries this machine reaches.

use super::archive::ImageConfig;
use super::table::{File, PATH, Recipe, Row};

/// Where the sample's Dockerfiles put each service.
const HOME: &str = "/opt/microservices";

/// `details`: the sample's `details.rb` run by Debian's Ruby.
pub const DETAILS: Row = Row {
    references: &[
        "registry.istio.io/release/examples-bookinfo-details-v1:1.20.3",
        "docker.io/istio/examples-bookinfo-details-v1:1.20.3",
    ],
    recipe: Recipe::Sample {
        suite: "bookworm",
        packages: &["ruby", "ruby-webrick"],
        sources: &["bookinfo/src/details"],
        files: &[],
        hook: r#"set -e
mkdir -p "$1/opt/microservices"
cp {samples}/bookinfo/src/details/details.rb "$1/opt/microservices/""#,
    },
    config: ImageConfig {
        env: &[
            PATH,
            "SERVICE_VERSION=v1",
            "ENABLE_EXTERNAL_BOOK_SERVICE=false",
        ],
        cmd: &["ruby", "details.rb", "9080"],
        user: "1000",
        working_dir: HOME,
        exposed_ports: &["9080/tcp"],
        ..ImageConfig::EMPTY
    },
    contents: "Istio's samples/bookinfo/src/details/details.rb of the cell's Istio version, run \
               by Debian bookworm's Ruby 3.1 with Debian's ruby-webrick 1.8 (the official image: \
               ruby:3.4 slim, webrick 1.8.2 from rubygems.org, which this machine cannot reach)",
};

/// `ratings`: the sample's `ratings.js` and its `package.json`'s packages (from the npm
/// registry, by the host's npm) run by Debian's Node.js.
pub const RATINGS: Row = Row {
    references: &[
        "registry.istio.io/release/examples-bookinfo-ratings-v1:1.20.3",
        "docker.io/istio/examples-bookinfo-ratings-v1:1.20.3",
    ],
    recipe: Recipe::Sample {
        suite: "bookworm",
        packages: &["nodejs", "curl", "ca-certificates"],
        sources: &["bookinfo/src/ratings"],
        files: &[],
        hook: r#"set -e
command -v npm >/dev/null || { echo "the host has no npm: the ratings image installs its package.json's packages with it" >&2; exit 1; }
mkdir -p "$1/opt/microservices"
cp {samples}/bookinfo/src/ratings/package.json {samples}/bookinfo/src/ratings/ratings.js "$1/opt/microservices/"
chmod u+w "$1/opt/microservices/package.json"
npm install --prefix "$1/opt/microservices" --omit=dev --no-package-lock --no-audit --no-fund --no-update-notifier --loglevel=error"#,
    },
    config: ImageConfig {
        env: &[PATH, "SERVICE_VERSION=v1"],
        cmd: &["node", "/opt/microservices/ratings.js", "9080"],
        user: "1000",
        working_dir: HOME,
        exposed_ports: &["9080/tcp"],
        ..ImageConfig::EMPTY
    },
    contents: "Istio's samples/bookinfo/src/ratings of the cell's Istio version (ratings.js, its \
               package.json's packages from the npm registry) run by Debian bookworm's Node.js \
               18, with curl (the official image: node:23 slim)",
};

/// The reviews service's build: the sample's `LibertyRestEndpoint.java` compiled against
/// Jersey (Maven Central) with a launcher serving it on Jersey's JDK HTTP server.
const REVIEWS_FILES: &[File] = &[
    File {
        path: "/tmp/reviews-build/pom.xml",
        content: include_str!("bookinfo/pom.xml"),
    },
    File {
        path: "/tmp/reviews-build/Reviews.java",
        content: include_str!("bookinfo/Reviews.java"),
    },
];

/// Jersey's jars into `lib/` (maven-dependency-plugin pinned), then the sample's endpoint and
/// the launcher compiled for Java 17 into `classes/`.
const REVIEWS_HOOK: &str = r#"set -e
for tool in mvn javac; do command -v "$tool" >/dev/null || { echo "the host has no $tool: the reviews image is compiled with Maven and a JDK 17 (Debian's maven and openjdk-17-jdk-headless)" >&2; exit 1; }; done
build="$1/tmp/reviews-build"
mvn -q -B -f "$build/pom.xml" org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$1/opt/microservices/lib"
javac -nowarn --release 17 -encoding UTF-8 -cp "$1/opt/microservices/lib/*" -d "$1/opt/microservices/classes" {samples}/bookinfo/src/reviews/reviews-application/src/main/java/application/rest/LibertyRestEndpoint.java "$build/Reviews.java"
rm -rf "$build""#;

/// The JVM's settings: the serial collector, a 96 MiB heap and the client compiler, for three
/// JVMs sharing two cores (the official image's OpenJ9 is as frugal).
const REVIEWS_CMD: &[&str] = &[
    "java",
    "-XX:+UseSerialGC",
    "-Xmx96m",
    "-XX:TieredStopAtLevel=1",
    "-cp",
    "/opt/microservices/classes:/opt/microservices/lib/*",
    "labcheck.Reviews",
    "9080",
];

const REVIEWS_CONTENTS: &str = "Istio's samples/bookinfo/src/reviews endpoint \
     (LibertyRestEndpoint.java) of the cell's Istio version, compiled for Java 17 and served by \
     Jersey 2.47's JDK HTTP server (from Maven Central) on Debian bookworm's OpenJDK 17 — not Open \
     Liberty (the official image); the endpoint's client timeouts (10 s with black stars, 2.5 s \
     with red) hold as under Liberty";

/// A reviews image: its version, whether it asks ratings and the stars' colour are its
/// environment, as the sample's Dockerfile builds them (`--build-arg`).
const fn reviews(references: &'static [&'static str], env: &'static [&'static str]) -> Row {
    Row {
        references,
        recipe: Recipe::Sample {
            suite: "bookworm",
            packages: &["openjdk-17-jre-headless"],
            sources: &["bookinfo/src/reviews/reviews-application/src/main/java"],
            files: REVIEWS_FILES,
            hook: REVIEWS_HOOK,
        },
        config: ImageConfig {
            env,
            cmd: REVIEWS_CMD,
            user: "1001",
            working_dir: HOME,
            exposed_ports: &["9080/tcp"],
            ..ImageConfig::EMPTY
        },
        contents: REVIEWS_CONTENTS,
    }
}

pub const REVIEWS_V1: Row = reviews(
    &[
        "registry.istio.io/release/examples-bookinfo-reviews-v1:1.20.3",
        "docker.io/istio/examples-bookinfo-reviews-v1:1.20.3",
    ],
    &[
        PATH,
        "SERVICE_VERSION=v1",
        "ENABLE_RATINGS=false",
        "STAR_COLOR=black",
    ],
);

pub const REVIEWS_V2: Row = reviews(
    &[
        "registry.istio.io/release/examples-bookinfo-reviews-v2:1.20.3",
        "docker.io/istio/examples-bookinfo-reviews-v2:1.20.3",
    ],
    &[
        PATH,
        "SERVICE_VERSION=v2",
        "ENABLE_RATINGS=true",
        "STAR_COLOR=black",
    ],
);

pub const REVIEWS_V3: Row = reviews(
    &[
        "registry.istio.io/release/examples-bookinfo-reviews-v3:1.20.3",
        "docker.io/istio/examples-bookinfo-reviews-v3:1.20.3",
    ],
    &[
        PATH,
        "SERVICE_VERSION=v3",
        "ENABLE_RATINGS=true",
        "STAR_COLOR=red",
    ],
);

/// `productpage`: the sample's Flask app with its pinned, hashed requirements (PyPI, by the
/// host's pip for the image's Python 3.11), run by gunicorn as the Dockerfile runs it.
pub const PRODUCTPAGE: Row = Row {
    references: &[
        "registry.istio.io/release/examples-bookinfo-productpage-v1:1.20.3",
        "docker.io/istio/examples-bookinfo-productpage-v1:1.20.3",
    ],
    recipe: Recipe::Sample {
        suite: "bookworm",
        packages: &["python3"],
        sources: &["bookinfo/src/productpage"],
        files: &[],
        hook: r#"set -e
python3 -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' || { echo "the host's python3 is not 3.11, the image's: its pip cannot install the sample's wheels" >&2; exit 1; }
mkdir -p "$1/opt/microservices"
cp -r {samples}/bookinfo/src/productpage/productpage.py {samples}/bookinfo/src/productpage/templates {samples}/bookinfo/src/productpage/static {samples}/bookinfo/src/productpage/requirements.txt "$1/opt/microservices/"
chmod -R u+w,go+rX "$1/opt/microservices"
python3 -m pip install --quiet --no-cache-dir --disable-pip-version-check --require-hashes --no-deps --no-compile --target "$1/usr/local/lib/python3.11/dist-packages" -r {samples}/bookinfo/src/productpage/requirements.txt
rm -rf "$1/usr/local/lib/python3.11/dist-packages/bin""#,
    },
    config: ImageConfig {
        env: &[PATH, "FLOOD_FACTOR=0"],
        cmd: &[
            "python3",
            "-m",
            "gunicorn",
            "-b",
            "[::]:9080",
            "productpage:app",
            "-w",
            "8",
            "--keep-alive",
            "2",
            "-k",
            "gevent",
        ],
        user: "1000",
        working_dir: HOME,
        exposed_ports: &["9080/tcp"],
        ..ImageConfig::EMPTY
    },
    contents: "Istio's samples/bookinfo/src/productpage of the cell's Istio version \
               (productpage.py, templates, static; its requirements.txt installed with their \
               hashes from PyPI) on a Debian bookworm minbase with Python 3.11, run by gunicorn \
               as the sample's Dockerfile does; the Dockerfile's unit tests are not run (the \
               official image: python:3.13 slim)",
};
