//! CLI tests: the real `labcheck` binary on fixture labs. Each area is a module.

#[path = "../support/mod.rs"]
mod support;

mod author;
mod broken;
mod checkpoint;
mod checkpoint_trust;
mod cluster;
mod descriptors;
mod grade_root;
mod honest;
mod hostile;
mod kind;
mod lifecycle;
mod matrix;
mod mesh;
mod mutate;
mod node;
mod render;
mod retry;
mod sandbox;
mod shell;
