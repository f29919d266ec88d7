//! What a mesh cell's node ([`crate::sandbox::Node`]) shows and runs: the cluster's directory
//! and the Pods' working directories under it, the programs by name, and — for kwok's Landlock
//! rules, made from the host's files — the host's ELF interpreter over the node's own; where a
//! host path of the cluster's directory is in the node.

use std::path::{Path, PathBuf};

use super::{MeshTools, sidecar};
use crate::sandbox::Attachment;

/// Where the node shows the cluster's directory (read-only; its `pods/` writable).
pub(super) const NODE_DIR: &str = "/run/labcheck/node";
/// Where the node shows the programs it runs, by the names of [`node_programs`].
const NODE_BIN: &str = "/run/labcheck/bin";

/// `host`, a path in the cluster's directory `dir`, as the node shows it.
pub(super) fn in_node(dir: &Path, host: &Path) -> PathBuf {
    Path::new(NODE_DIR).join(host.strip_prefix(dir).unwrap_or(host))
}

/// A program of the node, by its name there.
pub(super) fn node_program(name: &str) -> PathBuf {
    Path::new(NODE_BIN).join(name)
}

/// The programs the node runs: by name there, and where the host has them.
fn node_programs(tools: &MeshTools, helper: &Path) -> Vec<(&'static str, PathBuf)> {
    vec![
        ("pilot-agent", tools.pilot_agent.clone()),
        (
            crate::toolchain::ENVOY_BOOTSTRAP,
            tools
                .pilot_agent
                .with_file_name(crate::toolchain::ENVOY_BOOTSTRAP),
        ),
        ("envoy", tools.envoy.clone()),
        ("echo-server", tools.echo_server.clone()),
        ("kwok", tools.kwok.clone()),
        ("labcheck", helper.to_owned()),
    ]
}

/// What the node shows: the cluster's directory (read-only), the Pods' working directories, the
/// programs, and over the ELF interpreter kwok's programs name the host's own file, so that
/// Landlock's rules on kwok (made from the host's files) hold for them in the node.
pub(super) fn attachments(dir: &Path, tools: &MeshTools, helper: &Path) -> Vec<Attachment> {
    let mut all = vec![
        Attachment {
            host: dir.to_owned(),
            at: NODE_DIR.into(),
            writable: false,
        },
        Attachment {
            host: dir.join(sidecar::PODS),
            at: in_node(dir, &dir.join(sidecar::PODS)),
            writable: true,
        },
    ];
    all.extend(
        node_programs(tools, helper)
            .into_iter()
            .map(|(name, host)| Attachment {
                host,
                at: node_program(name),
                writable: false,
            }),
    );
    let interpreters: std::collections::BTreeSet<PathBuf> = [&tools.kwok, &helper.to_owned()]
        .into_iter()
        .flat_map(|p| executables(p).into_iter().skip(1))
        .filter_map(|i| std::fs::canonicalize(i).ok())
        .collect();
    all.extend(interpreters.into_iter().map(|i| Attachment {
        host: i.clone(),
        at: i,
        writable: false,
    }));
    all
}

/// A program and the ELF interpreter (`PT_INTERP`) that loads it, if it names one: what running
/// it executes.
pub(super) fn executables(program: &Path) -> Vec<PathBuf> {
    let mut paths = vec![program.to_owned()];
    if let Ok(elf) = std::fs::read(program)
        && let Some(interp) = interpreter(&elf)
    {
        paths.push(interp);
    }
    paths
}

/// The interpreter a 64-bit little-endian ELF file names.
fn interpreter(elf: &[u8]) -> Option<PathBuf> {
    let u16_at = |at: usize| Some(u16::from_le_bytes(elf.get(at..at + 2)?.try_into().ok()?));
    let u32_at = |at: usize| Some(u32::from_le_bytes(elf.get(at..at + 4)?.try_into().ok()?));
    let u64_at = |at: usize| {
        let v = u64::from_le_bytes(elf.get(at..at + 8)?.try_into().ok()?);
        usize::try_from(v).ok()
    };
    if elf.get(..6)? != b"\x7fELF\x02\x01" {
        return None;
    }
    let (phoff, phentsize, phnum) = (u64_at(0x20)?, u16_at(0x36)?, u16_at(0x38)?);
    (0..usize::from(phnum)).find_map(|i| {
        let ph = phoff.checked_add(i.checked_mul(usize::from(phentsize))?)?;
        if u32_at(ph)? != 3 {
            return None;
        }
        let (offset, size) = (u64_at(ph + 8)?, u64_at(ph + 32)?);
        let name = elf.get(offset..offset.checked_add(size)?)?;
        let name = name.split(|b| *b == 0).next()?;
        Some(PathBuf::from(std::str::from_utf8(name).ok()?))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dynamic_programs_interpreter_is_executed_with_it() {
        // The test binary itself: a dynamically linked ELF file, as the tools built with cgo are.
        let program = std::env::current_exe().expect("the test binary");
        let paths = executables(&program);
        assert_eq!(paths[0], program);
        let interp = paths.get(1).expect("an interpreter");
        assert!(interp.exists(), "{interp:?}");
        assert!(
            interp
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("ld-")),
            "{interp:?}"
        );
    }

    #[test]
    fn what_is_no_elf_file_names_no_interpreter() {
        assert_eq!(interpreter(b"#!/bin/sh\n"), None);
        assert_eq!(interpreter(b"\x7fELF\x02\x01"), None);
    }
}
