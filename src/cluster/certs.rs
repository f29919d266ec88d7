//! The local cluster's PKI, made in-process: a CA, the API server's serving certificate, an admin
//! client certificate (`O=system:masters`) and the service-account signing key; for a real node
//! (`@node`, `@mesh`), the serving certificate of its kubelet API.

use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, SanType,
};

/// Paths of the files written by [`write`].
#[derive(Clone, Debug)]
pub struct Pki {
    pub ca_cert: PathBuf,
    /// The CA's key: a live mesh's controller-manager signs certificate requests with it.
    pub ca_key: PathBuf,
    pub server_cert: PathBuf,
    pub server_key: PathBuf,
    pub admin_cert: PathBuf,
    pub admin_key: PathBuf,
    pub sa_key: PathBuf,
    pub sa_pub: PathBuf,
}

impl Pki {
    /// The paths of a PKI written earlier into `dir`.
    pub fn existing(dir: &Path) -> Pki {
        Pki {
            ca_cert: dir.join("ca.crt"),
            ca_key: dir.join("ca.key"),
            server_cert: dir.join("apiserver.crt"),
            server_key: dir.join("apiserver.key"),
            admin_cert: dir.join("admin.crt"),
            admin_key: dir.join("admin.key"),
            sa_key: dir.join("sa.key"),
            sa_pub: dir.join("sa.pub"),
        }
    }
}

fn name(cn: &str, org: Option<&str>) -> DistinguishedName {
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, cn);
    if let Some(o) = org {
        dn.push(DnType::OrganizationName, o);
    }
    dn
}

/// The PKI in `dir` when every file of it is there (a cluster started from a checkpoint's), or
/// a new one written there.
pub fn existing_or_write(dir: &Path) -> Result<Pki, String> {
    let pki = Pki::existing(dir);
    let files = [
        &pki.ca_cert,
        &pki.ca_key,
        &pki.server_cert,
        &pki.server_key,
        &pki.admin_cert,
        &pki.admin_key,
        &pki.sa_key,
        &pki.sa_pub,
    ];
    if files.iter().all(|f| f.is_file()) {
        return Ok(pki);
    }
    write(dir)
}

/// Generates the PKI into `dir`.
pub fn write(dir: &Path) -> Result<Pki, String> {
    let err = |e: rcgen::Error| format!("cannot make certificates: {e}");
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;

    let ca_key = KeyPair::generate().map_err(err)?;
    let mut ca = CertificateParams::new(Vec::<String>::new()).map_err(err)?;
    ca.distinguished_name = name("labcheck-ca", None);
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_cert = ca.self_signed(&ca_key).map_err(err)?;
    let ca_key_pem = ca_key.serialize_pem();
    let issuer = Issuer::new(ca, ca_key);

    let server_key = KeyPair::generate().map_err(err)?;
    let mut server = CertificateParams::new(vec![
        "localhost".to_owned(),
        "kubernetes".to_owned(),
        "kubernetes.default".to_owned(),
        "kubernetes.default.svc".to_owned(),
        "kubernetes.default.svc.cluster.local".to_owned(),
    ])
    .map_err(err)?;
    for ip in ["127.0.0.1", "10.0.0.1"] {
        if let Ok(addr) = ip.parse() {
            server.subject_alt_names.push(SanType::IpAddress(addr));
        }
    }
    server.distinguished_name = name("kube-apiserver", None);
    server.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let server_cert = server.signed_by(&server_key, &issuer).map_err(err)?;

    let admin_key = KeyPair::generate().map_err(err)?;
    let mut admin = CertificateParams::new(Vec::<String>::new()).map_err(err)?;
    admin.distinguished_name = name("labcheck-admin", Some("system:masters"));
    admin.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let admin_cert = admin.signed_by(&admin_key, &issuer).map_err(err)?;

    let sa_key = KeyPair::generate().map_err(err)?;

    let pki = Pki::existing(dir);
    let files = [
        (&pki.ca_cert, ca_cert.pem()),
        (&pki.ca_key, ca_key_pem),
        (&pki.server_cert, server_cert.pem()),
        (&pki.server_key, server_key.serialize_pem()),
        (&pki.admin_cert, admin_cert.pem()),
        (&pki.admin_key, admin_key.serialize_pem()),
        (&pki.sa_key, sa_key.serialize_pem()),
        (&pki.sa_pub, sa_key.public_key_pem()),
    ];
    for (path, pem) in files {
        std::fs::write(path, pem).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(pki)
}

/// Writes a self-signed serving certificate and key for the node's kubelet API at `ip`
/// into `dir` (`<name>.crt`, `<name>.key`); returns their paths. The API server does not verify
/// kubelets' certificates (no `--kubelet-certificate-authority`), as on a kubeadm cluster.
pub fn node_serving(
    dir: &Path,
    name: &str,
    ip: std::net::IpAddr,
) -> Result<(PathBuf, PathBuf), String> {
    let err = |e: rcgen::Error| format!("cannot make the certificate of node {name}: {e}");
    let key = KeyPair::generate().map_err(err)?;
    let mut params = CertificateParams::new(vec![name.to_owned()]).map_err(err)?;
    params.subject_alt_names.push(SanType::IpAddress(ip));
    params.distinguished_name = self::name(name, None);
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let cert = params.self_signed(&key).map_err(err)?;
    let (cert_path, key_path) = (
        dir.join(format!("{name}.crt")),
        dir.join(format!("{name}.key")),
    );
    for (path, pem) in [(&cert_path, cert.pem()), (&key_path, key.serialize_pem())] {
        std::fs::write(path, pem).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok((cert_path, key_path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_complete_pki_is_kept_and_an_incomplete_one_is_made_anew() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pki = dir.path().join("pki");
        let first = existing_or_write(&pki).expect("first");
        let ca = std::fs::read(&first.ca_cert).expect("ca");
        let again = existing_or_write(&pki).expect("again");
        assert_eq!(std::fs::read(&again.ca_cert).expect("ca"), ca);
        std::fs::remove_file(&again.sa_pub).expect("remove");
        let made = existing_or_write(&pki).expect("made");
        assert_ne!(std::fs::read(&made.ca_cert).expect("ca"), ca);
        assert!(made.sa_pub.is_file());
    }
}
