//! The `docker save` tarball format: `manifest.json`, the image config JSON named by its sha256,
//! and one `<diff_id hex>/layer.tar` per layer, which `ctr images import` (and `docker load`)
//! read. Layers are streamed from disk and hashed while they are copied, never held in memory.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::{ImageError, io_err};

/// The runtime configuration an image carries: the `config` object of its config JSON. Empty
/// fields are left out of the JSON.
#[derive(Debug, Clone, Copy)]
pub struct ImageConfig {
    pub env: &'static [&'static str],
    pub entrypoint: &'static [&'static str],
    pub cmd: &'static [&'static str],
    /// `uid:gid` or a user name.
    pub user: &'static str,
    pub working_dir: &'static str,
    /// Such as `80/tcp`.
    pub exposed_ports: &'static [&'static str],
}

impl ImageConfig {
    /// No configuration at all.
    pub const EMPTY: ImageConfig = ImageConfig {
        env: &[],
        entrypoint: &[],
        cmd: &[],
        user: "",
        working_dir: "",
        exposed_ports: &[],
    };

    fn to_json(self) -> Value {
        let mut config = Map::new();
        let mut list = |key: &str, items: &[&str]| {
            if !items.is_empty() {
                config.insert(key.to_string(), json!(items));
            }
        };
        list("Env", self.env);
        list("Entrypoint", self.entrypoint);
        list("Cmd", self.cmd);
        if !self.user.is_empty() {
            config.insert("User".into(), json!(self.user));
        }
        if !self.working_dir.is_empty() {
            config.insert("WorkingDir".into(), json!(self.working_dir));
        }
        if !self.exposed_ports.is_empty() {
            let ports = self
                .exposed_ports
                .iter()
                .map(|p| (p.to_string(), json!({})));
            config.insert("ExposedPorts".into(), Value::Object(ports.collect()));
        }
        Value::Object(config)
    }
}

/// One uncompressed layer tarball on disk, and the history line saying how it was made.
#[derive(Debug, Clone)]
pub struct Layer {
    pub path: PathBuf,
    pub created_by: String,
}

/// What [`write`] produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// `sha256:<hex>` of the config JSON: the image ID containerd and crictl show.
    pub config_digest: String,
    /// `sha256:<hex>` of each uncompressed layer, in order.
    pub diff_ids: Vec<String>,
    /// Size of the archive in bytes.
    pub size: u64,
}

/// The Go name of the architecture this process runs on, which is what the images' binaries
/// were built (or downloaded by apt) for.
pub fn architecture() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "powerpc64" => "ppc64le",
        other => other,
    }
}

/// Writes `out` as a docker-save tarball of `layers` (bottom first) with `config`, tagged with
/// `repo_tags`. `image` names the image in errors.
pub fn write(
    image: &str,
    out: &Path,
    config: &ImageConfig,
    layers: &[Layer],
    repo_tags: &[&str],
) -> Result<Written, ImageError> {
    let mut file = File::create(out).map_err(io_err(image, "cannot create", out))?;
    let mut diff_ids = Vec::with_capacity(layers.len());
    let mut layer_paths = Vec::with_capacity(layers.len());
    for layer in layers {
        let hex = append_layer(&mut file, &layer.path).map_err(io_err(
            image,
            "cannot copy into the image archive the layer",
            &layer.path,
        ))?;
        layer_paths.push(format!("{hex}/layer.tar"));
        diff_ids.push(format!("sha256:{hex}"));
    }
    let history: Vec<Value> = layers
        .iter()
        .map(|l| json!({ "created_by": l.created_by }))
        .collect();
    let config_json = json!({
        "architecture": architecture(),
        "os": "linux",
        "config": config.to_json(),
        "rootfs": { "type": "layers", "diff_ids": diff_ids },
        "history": history,
    });
    let mut manifest_and_config = || -> io::Result<String> {
        let config_bytes = serde_json::to_vec(&config_json).map_err(io::Error::other)?;
        let config_hex = hex(&Sha256::digest(&config_bytes));
        let config_name = format!("{config_hex}.json");
        append_bytes(&mut file, &config_name, &config_bytes)?;
        let manifest = json!([{
            "Config": config_name,
            "RepoTags": repo_tags,
            "Layers": layer_paths,
        }]);
        let manifest_bytes = serde_json::to_vec(&manifest).map_err(io::Error::other)?;
        append_bytes(&mut file, "manifest.json", &manifest_bytes)?;
        // The end-of-archive marker: two zero blocks.
        file.write_all(&[0; 1024])?;
        file.sync_all()?;
        Ok(config_hex)
    };
    let config_hex = manifest_and_config().map_err(io_err(image, "cannot write", out))?;
    let size = file
        .metadata()
        .map_err(io_err(image, "cannot stat", out))?
        .len();
    Ok(Written {
        config_digest: format!("sha256:{config_hex}"),
        diff_ids,
        size,
    })
}

/// Lowercase hex of a digest.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The sha256 (hex) of a file, read in chunks.
pub fn sha256_file(path: &Path) -> io::Result<String> {
    let mut file = File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            return Ok(hex(&hasher.finalize()));
        }
        hasher.update(&buf[..n]);
    }
}

fn header(name: &str, size: u64) -> io::Result<tar::Header> {
    let mut header = tar::Header::new_ustar();
    header.set_path(name)?;
    header.set_size(size);
    header.set_mode(0o644);
    header.set_uid(0);
    header.set_gid(0);
    header.set_mtime(0);
    header.set_entry_type(tar::EntryType::Regular);
    header.set_cksum();
    Ok(header)
}

fn pad(out: &mut File, size: u64) -> io::Result<()> {
    let rest = (512 - size % 512) % 512;
    out.write_all(&vec![0; rest as usize])
}

fn append_bytes(out: &mut File, name: &str, bytes: &[u8]) -> io::Result<()> {
    out.write_all(header(name, bytes.len() as u64)?.as_bytes())?;
    out.write_all(bytes)?;
    pad(out, bytes.len() as u64)
}

/// Appends `layer` as `<hex>/layer.tar` and returns the hex of its sha256. The name depends on
/// the content, which is only known after the copy: the header goes out with a placeholder
/// name of the same length and is rewritten in place once the copy is hashed.
fn append_layer(out: &mut File, layer: &Path) -> io::Result<String> {
    let mut src = File::open(layer)?;
    let size = src.metadata()?.len();
    let start = out.stream_position()?;
    let placeholder = format!("{}/layer.tar", "0".repeat(64));
    out.write_all(header(&placeholder, size)?.as_bytes())?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut copied = 0u64;
    loop {
        let n = src.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        out.write_all(&buf[..n])?;
        copied += n as u64;
    }
    if copied != size {
        return Err(io::Error::other(format!(
            "the layer changed while being copied ({size} bytes, then {copied})"
        )));
    }
    pad(out, size)?;
    let hex = hex(&hasher.finalize());
    let end = out.stream_position()?;
    out.seek(SeekFrom::Start(start))?;
    out.write_all(header(&format!("{hex}/layer.tar"), size)?.as_bytes())?;
    out.seek(SeekFrom::Start(end))?;
    Ok(hex)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::images::layer::LayerWriter;

    const CONFIG: ImageConfig = ImageConfig {
        env: &["PATH=/bin"],
        entrypoint: &["/bin/hello"],
        cmd: &["--world"],
        user: "100:101",
        working_dir: "/home",
        exposed_ports: &["80/tcp"],
    };

    /// Every file in `archive`, by name.
    fn entries(archive: &Path) -> BTreeMap<String, Vec<u8>> {
        let mut files = BTreeMap::new();
        let mut tar = tar::Archive::new(File::open(archive).expect("open archive"));
        for entry in tar.entries().expect("entries") {
            let mut entry = entry.expect("entry");
            let name = entry.path().expect("path").to_string_lossy().into_owned();
            let mut bytes = Vec::new();
            entry.read_to_end(&mut bytes).expect("read entry");
            files.insert(name, bytes);
        }
        files
    }

    #[test]
    fn manifest_and_config_name_the_layers_by_their_sha256() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut layers = Vec::new();
        for (i, size) in [5usize, 4096, 700_001].into_iter().enumerate() {
            let path = dir.path().join(format!("layer{i}.tar"));
            let mut writer = LayerWriter::create(&path).expect("layer");
            writer.dir("bin", 0o755).expect("dir");
            writer
                .file(&format!("bin/f{i}"), 0o755, &vec![i as u8 + 1; size])
                .expect("file");
            writer.symlink("bin/link", "/bin/f0").expect("symlink");
            writer.finish().expect("finish");
            layers.push(Layer {
                path,
                created_by: format!("test layer {i}"),
            });
        }
        let out = dir.path().join("image.tar");
        let tags = [
            "docker.io/library/hello:latest",
            "docker.io/library/hello:1",
        ];
        let written = write("hello", &out, &CONFIG, &layers, &tags).expect("write");

        let files = entries(&out);
        let manifest: Value = serde_json::from_slice(&files["manifest.json"]).expect("manifest");
        assert_eq!(manifest[0]["RepoTags"], json!(tags));
        let config_name = manifest[0]["Config"].as_str().expect("Config");
        let config_bytes = &files[config_name];
        assert_eq!(
            format!("sha256:{}", hex(&Sha256::digest(config_bytes))),
            written.config_digest
        );
        assert_eq!(config_name, format!("{}.json", &written.config_digest[7..]));
        let config: Value = serde_json::from_slice(config_bytes).expect("config");
        assert_eq!(config["os"], "linux");
        assert_eq!(config["rootfs"]["type"], "layers");
        assert_eq!(config["config"]["User"], "100:101");
        assert_eq!(config["config"]["ExposedPorts"], json!({"80/tcp": {}}));
        assert_eq!(config["config"]["Entrypoint"], json!(["/bin/hello"]));
        assert_eq!(config["history"].as_array().map(Vec::len), Some(3));

        let names = manifest[0]["Layers"].as_array().expect("Layers");
        let diff_ids = config["rootfs"]["diff_ids"].as_array().expect("diff_ids");
        assert_eq!(names.len(), 3);
        for ((name, diff_id), layer) in names.iter().zip(diff_ids).zip(&layers) {
            let name = name.as_str().expect("layer name");
            let inside = hex(&Sha256::digest(&files[name]));
            let on_disk = sha256_file(&layer.path).expect("hash layer");
            assert_eq!(inside, on_disk);
            assert_eq!(name, format!("{inside}/layer.tar"));
            assert_eq!(diff_id, &json!(format!("sha256:{inside}")));
        }
        let expected: Vec<String> = diff_ids
            .iter()
            .filter_map(|d| d.as_str().map(String::from))
            .collect();
        assert_eq!(written.diff_ids, expected);
        assert_eq!(written.size, std::fs::metadata(&out).expect("stat").len());
    }

    #[test]
    fn empty_fields_are_left_out_of_the_config() {
        let config = ImageConfig {
            cmd: &["sh"],
            ..ImageConfig::EMPTY
        };
        assert_eq!(config.to_json(), json!({"Cmd": ["sh"]}));
    }
}
