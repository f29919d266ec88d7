//! Unit tests of resolution: sources, what each kind of cell needs, the cache directory, pins.

use super::*;

#[test]
fn sources_say_where_a_binary_came_from() {
    let build = Source::Build {
        module: "istio.io/istio@v0.0.0-20260826214018-9739e10eb9d7".into(),
        overrides: vec!["istio.io/api => istio.io/api v1.30.8".into()],
    };
    assert_eq!(
        Source::Cache {
            original: Box::new(build.clone())
        }
        .to_string(),
        "cached, built from istio.io/istio@v0.0.0-20260826214018-9739e10eb9d7 with replace istio.io/api => istio.io/api v1.30.8"
    );
    assert_eq!(
        Source::Cache {
            original: Box::new(build.clone())
        }
        .origin(),
        &build
    );
    let json = serde_json::to_string(&build).expect("encode");
    assert!(json.contains("\"kind\":\"build\""), "{json}");
    assert_eq!(
        serde_json::from_str::<Source>(&json).expect("decode"),
        build
    );
}

#[test]
fn a_plain_cell_needs_no_mesh_tool_and_install_needs_them_all() {
    let text = include_str!("../../istio-versions.toml");
    let versions = Versions::parse(text, Path::new("istio-versions.toml")).expect("config parses");
    let snapshot = versions.resolve("1.31").expect("1.31");
    let release = versions.resolve("1.29.3").expect("a release number");
    let tools = |needs: &[Need]| needs.iter().map(Need::tool).collect::<Vec<_>>();

    assert_eq!(
        tools(&Need::plain()),
        [Tool::KubeApiserver, Tool::Kubectl, Tool::Etcd]
    );
    assert_eq!(
        tools(&Need::mesh(&snapshot)),
        [
            Tool::PilotDiscovery,
            Tool::PilotAgent,
            Tool::Envoy,
            Tool::EchoServer,
            Tool::EchoClient
        ]
    );
    let all = Need::all(&[snapshot.clone(), release.clone()]);
    assert_eq!(
        tools(&all),
        [
            Tool::Istioctl,
            Tool::Istioctl,
            Tool::KubeApiserver,
            Tool::Kubectl,
            Tool::Etcd,
            Tool::PilotDiscovery,
            Tool::KubeControllerManager,
            Tool::KubeScheduler,
            Tool::PilotAgent,
            Tool::Envoy,
            Tool::EchoServer,
            Tool::EchoClient,
            Tool::Kubelet,
            Tool::KubeProxy,
            Tool::Containerd,
            Tool::ContainerdShim,
            Tool::Ctr,
            Tool::Runc,
            Tool::CniBridge,
            Tool::CniHostLocal,
            Tool::CniLoopback,
            Tool::CniPortmap,
            Tool::Coredns,
            Tool::GoHttpbin,
            Tool::Fortio,
        ]
    );
    assert!(all.contains(&Need::EchoServer(snapshot.clone())));
    assert!(all.contains(&Need::PilotDiscovery(snapshot.clone())));
    assert!(all.contains(&Need::PilotAgent(snapshot.clone())));
    assert!(
        !all.contains(&Need::PilotDiscovery(release.clone())),
        "a release-only version has no istiod to build"
    );
    assert!(
        !all.contains(&Need::PilotAgent(release.clone())),
        "nor a sidecar agent"
    );
    assert!(!all.contains(&Need::EchoServer(release)), "nor an echo app");

    let tc = Toolchain::new(PathBuf::from("/nonexistent")).with_versions(&versions);
    assert_eq!(
        tc.version_of(&Need::PilotDiscovery(snapshot)),
        "1.31-dev.eed52ebb"
    );
    assert_eq!(tc.version_of(&Need::KubeControllerManager), "v1.35.4");
    assert_eq!(tc.version_of(&Need::Envoy), "1.40.0");
    assert_eq!(tc.version_of(&Need::KubeScheduler), "v1.35.4");
    for tool in Tool::ALL {
        let json = serde_json::to_string(&tool).expect("encode");
        assert_eq!(
            json,
            format!("\"{}\"", tool.name()),
            "meta.json names {tool}"
        );
    }
}

#[test]
fn the_cache_dir_follows_the_environment() {
    // Only reads the environment: the default is absolute whatever it is set to.
    assert!(Toolchain::default_cache_dir().is_absolute());
}

#[test]
fn a_stale_pin_is_not_a_cache_hit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tc = Toolchain::new(dir.path().to_path_buf());
    let cache = Cache::new(dir.path().to_path_buf());
    std::fs::create_dir_all(cache.tmp_dir()).expect("tmp");
    let install = |module: &str| {
        let tmp = cache.tmp_file(Tool::Etcd, "v3.6.16", "");
        std::fs::write(&tmp, b"etcd").expect("write");
        let source = Source::Build {
            module: module.into(),
            overrides: Vec::new(),
        };
        let meta = Metadata {
            tool: Tool::Etcd,
            version: "v3.6.16".into(),
            source: source.clone(),
            generated_replaces: Vec::new(),
            ldflags: None,
            go_version: None,
            archive_sha256: None,
            installed_at: 0,
            seconds: 0.0,
            size: 0,
        };
        cache.install(&tmp, &[], meta).expect("install");
        source
    };
    install("go.etcd.io/etcd/server/v3@v3.6.15");
    assert_eq!(
        tc.lookup(&Need::Etcd),
        None,
        "built from another module version"
    );
    let source = install("go.etcd.io/etcd/server/v3@v3.6.16");
    let hit = tc.lookup(&Need::Etcd).expect("a matching build is a hit");
    assert_eq!(
        hit.source,
        Source::Cache {
            original: Box::new(source)
        }
    );
    assert_eq!(hit.path, dir.path().join("tools/etcd/v3.6.16/etcd"));
}
