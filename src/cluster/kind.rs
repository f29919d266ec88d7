//! The `kind` backend's commands: a uniquely named cluster per cell, created with a selectable
//! node image and deleted at the end. kind needs a container engine, which this project's own CI
//! machines lack: the commands are unit-tested here and exercised by the GitHub Actions workflow
//! under `ci/`.

use std::path::PathBuf;

use super::ClusterError;

/// kind limits cluster names (they become container names and hostnames).
pub fn cluster_name(cell: &str) -> String {
    let mut name: String = format!("labcheck-{cell}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    if name.len() <= 40 {
        return name.trim_end_matches('-').to_owned();
    }
    // Too long: a prefix and a hash of the whole name, so long names stay distinct.
    use sha2::Digest;
    let digest = sha2::Sha256::digest(name.as_bytes());
    let hash: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    name.truncate(31);
    format!("{}-{hash}", name.trim_end_matches('-'))
}

/// The kind commands for one cluster.
#[derive(Clone, Debug)]
pub struct KindCommand {
    pub kind: PathBuf,
    pub name: String,
    pub node_image: Option<String>,
    pub kubeconfig: PathBuf,
}

impl KindCommand {
    /// The arguments of `kind create cluster`.
    pub fn create_args(&self) -> Vec<String> {
        let mut args = vec![
            "create".into(),
            "cluster".into(),
            "--name".into(),
            self.name.clone(),
        ];
        if let Some(image) = &self.node_image {
            args.extend(["--image".into(), image.clone()]);
        }
        args.extend([
            "--kubeconfig".into(),
            self.kubeconfig.display().to_string(),
            "--wait".into(),
            "120s".into(),
        ]);
        args
    }

    /// The arguments of `kind delete cluster`.
    pub fn delete_args(&self) -> Vec<String> {
        vec![
            "delete".into(),
            "cluster".into(),
            "--name".into(),
            self.name.clone(),
        ]
    }

    async fn exec(&self, args: Vec<String>) -> Result<(), ClusterError> {
        let what = format!("{} {}", self.kind.display(), args.join(" "));
        let mut command = tokio::process::Command::new(&self.kind);
        command.args(&args);
        super::processes::run(command, what).await
    }

    pub async fn create(&self) -> Result<(), ClusterError> {
        self.exec(self.create_args()).await
    }

    pub async fn delete(&self) -> Result<(), ClusterError> {
        self.exec(self.delete_args()).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(image: Option<&str>) -> KindCommand {
        KindCommand {
            kind: "kind".into(),
            name: cluster_name("Mesh_Install.1.31"),
            node_image: image.map(str::to_owned),
            kubeconfig: "/cells/a/kubeconfig".into(),
        }
    }

    #[test]
    fn names_are_valid_and_unique_per_cell() {
        assert_eq!(
            cluster_name("Mesh_Install.1.31"),
            "labcheck-mesh-install-1-31"
        );
        assert_ne!(cluster_name("lab-1-31"), cluster_name("lab-1-30"));
        assert!(cluster_name(&"x".repeat(100)).len() <= 40);
        let (a, b) = (
            cluster_name("traffic-routing-1-31-mistake-l120-4242"),
            cluster_name("traffic-routing-1-31-mistake-l140-4242"),
        );
        assert!(a.len() <= 40 && b.len() <= 40);
        assert_ne!(a, b);
    }

    #[test]
    fn create_selects_the_node_image_and_writes_the_cells_kubeconfig() {
        let args = command(Some("kindest/node:v1.35.4")).create_args();
        assert_eq!(
            args.join(" "),
            "create cluster --name labcheck-mesh-install-1-31 --image kindest/node:v1.35.4 --kubeconfig /cells/a/kubeconfig --wait 120s"
        );
        assert!(!command(None).create_args().contains(&"--image".to_owned()));
    }

    #[test]
    fn delete_names_the_same_cluster() {
        assert_eq!(
            command(None).delete_args().join(" "),
            "delete cluster --name labcheck-mesh-install-1-31"
        );
    }
}
