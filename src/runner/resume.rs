//! Where each cell of a run starts: from scratch, or from a checkpoint ([`crate::checkpoint`]) —
//! one already on disk, or one that another cell of the same run writes as it goes. A mistake
//! cell starts from the checkpoint of the step before the one it gets wrong; with `--step N` (and
//! for mutants) a lab's main cell starts from the latest checkpoint of its steps. Decided once, when
//! the run starts, so the run's plan (and its reports) say which steps each cell runs.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use tokio::sync::watch;

use super::{CellPlan, Environment, Needs, RunOptions};
use crate::checkpoint::{self, Checkpoint, Key, Store};
use crate::cluster::Backend;
use crate::model::{LabStep, StepKind};

/// Where a cell starts.
#[derive(Clone, Debug)]
pub struct Resume {
    /// The checkpoint's key, and the step it follows.
    pub key: Key,
    pub after: LabStep,
    /// The checkpoint when it is on disk already; `None` while another cell of the run writes it.
    pub ready: Option<Checkpoint>,
}

/// The checkpoints a run waits for, as other cells of it write them.
#[derive(Default)]
pub struct Slots(RefCell<HashMap<Key, watch::Sender<Slot>>>);

/// A checkpoint another cell writes: not yet, written, never (that cell stopped before the
/// step), or it could not be written (a harness fault).
#[derive(Clone, Debug)]
pub enum Slot {
    Pending,
    Ready(Checkpoint),
    NotWritten,
    Failed(std::sync::Arc<super::error::CellError>),
}

impl Slots {
    fn expect(&self, key: &Key) {
        self.0
            .borrow_mut()
            .entry(key.clone())
            .or_insert_with(|| watch::channel(Slot::Pending).0);
    }

    /// Hands the fate of a checkpoint to the cells that wait for it.
    pub fn fill(&self, key: &Key, slot: Slot) {
        if let Some(tx) = self.0.borrow().get(key) {
            tx.send_replace(slot);
        }
    }

    /// Says that the checkpoints `keys` not written yet never will be (their cell has ended).
    pub fn close<'a>(&self, keys: impl IntoIterator<Item = &'a Key>) {
        for key in keys {
            if let Some(tx) = self.0.borrow().get(key)
                && matches!(*tx.borrow(), Slot::Pending)
            {
                tx.send_replace(Slot::NotWritten);
            }
        }
    }

    /// Waits until the checkpoint `key` is written (or never will be).
    pub async fn wait(&self, key: &Key) -> Slot {
        let Some(mut rx) = self.0.borrow().get(key).map(|tx| tx.subscribe()) else {
            return Slot::NotWritten;
        };
        match rx.wait_for(|s| !matches!(s, Slot::Pending)).await {
            Ok(slot) => slot.clone(),
            Err(_) => Slot::NotWritten,
        }
    }
}

/// The binaries a cell of `needs` on `label` runs, for its checkpoints' identity; `None` when
/// its cluster's state cannot be checkpointed (an existing or kind cluster).
fn binaries<'a>(env: &'a Environment, needs: Needs, label: &str) -> Option<Vec<&'a Path>> {
    let mut paths: Vec<&Path> = env
        .tools_for(needs, label)
        .into_iter()
        .map(|t| t.path.as_path())
        .collect();
    if needs != Needs::Sandbox {
        match env.backend.as_ref()? {
            Backend::Local(local) => {
                paths.push(&local.tools.etcd);
                paths.push(&local.tools.kube_apiserver);
            }
            _ => return None,
        }
    }
    Some(paths)
}

/// A checkpoint on disk that was not trusted (it no longer matched its manifest): the cells
/// that would have started from it replay.
#[derive(Clone, Debug)]
pub struct Distrusted {
    pub lab: std::path::PathBuf,
    /// The line of the step the checkpoint follows.
    pub line: usize,
    pub reason: String,
}

/// Decides where each cell starts and which checkpoints it writes; changes the plans in place.
/// Returns the checkpoints found and not trusted.
pub fn arrange(
    opts: &RunOptions,
    env: &Environment,
    store: &Store,
    cells: &mut [CellPlan],
    slots: &Slots,
) -> Vec<Distrusted> {
    let distrusted = RefCell::new(Vec::new());
    if !opts.checkpoints {
        return Vec::new();
    }
    // Each key is opened (and its manifest checked) once.
    let opened: RefCell<HashMap<Key, Option<Checkpoint>>> = RefCell::default();
    let open = |plan: &CellPlan, line: usize, key: &Key| {
        if opts.fresh {
            return None;
        }
        if let Some(found) = opened.borrow().get(key) {
            return found.clone();
        }
        let found = store.open(key).unwrap_or_else(|d| {
            distrusted.borrow_mut().push(Distrusted {
                lab: plan.lab.origin().to_owned(),
                line,
                reason: d.reason,
            });
            None
        });
        opened.borrow_mut().insert(key.clone(), found.clone());
        found
    };
    let keys = lab_keys(env, cells);
    let key_of = |plan: &CellPlan, line: usize| {
        keys.get(&(plan.lab.path.display().to_string(), plan.id.label.clone()))
            .and_then(|k| k.get(&line))
            .cloned()
    };
    // Main cells first: which steps they run, where they start, what they write.
    for plan in cells.iter_mut().filter(|p| p.id.mistake.is_none()) {
        if !runs_a_prefix(plan) {
            continue;
        }
        if opts.purpose.resume() {
            resume_latest(plan, &key_of, &open);
        }
        if opts.purpose.checkpoint_all() {
            plan.checkpoints = plan
                .lines
                .iter()
                .filter_map(|l| Some((*l, key_of(plan, *l)?)))
                .collect();
        }
    }
    // Mistake cells: from the step before the one they get wrong.
    let mains: Vec<(usize, CellPlan)> = cells
        .iter()
        .enumerate()
        .filter(|(_, p)| p.id.mistake.is_none() && runs_a_prefix(p))
        .map(|(i, p)| (i, p.clone()))
        .collect();
    let mut wanted: Vec<(usize, usize, Key)> = Vec::new();
    for plan in cells.iter_mut().filter(|p| p.id.mistake.is_some()) {
        let Some((&mistake, before)) = plan.lines.split_last() else {
            continue;
        };
        let Some(&last) = before.last() else {
            continue;
        };
        let Some(key) = key_of(plan, last) else {
            continue;
        };
        let after = step_at(plan, last);
        if let Some(checkpoint) = open(plan, last, &key) {
            plan.resume = Some(Resume {
                key,
                after,
                ready: Some(checkpoint),
            });
            plan.lines = vec![mistake];
            continue;
        }
        let writer = mains.iter().find(|(_, m)| {
            m.lab.path == plan.lab.path && m.id.label == plan.id.label && m.lines.contains(&last)
        });
        if let Some((i, _)) = writer {
            slots.expect(&key);
            wanted.push((*i, last, key.clone()));
            plan.resume = Some(Resume {
                key,
                after,
                ready: None,
            });
            plan.lines = vec![mistake];
        }
    }
    for (i, line, key) in wanted {
        cells[i].checkpoints.insert(line, key);
    }
    distrusted.into_inner()
}

/// Each lab's checkpoint keys by step line, once per label (cells with no cluster binaries to
/// identify have none).
fn lab_keys(
    env: &Environment,
    cells: &[CellPlan],
) -> HashMap<(String, String), BTreeMap<usize, Key>> {
    let mut keys = HashMap::new();
    for plan in cells {
        let id = (plan.lab.path.display().to_string(), plan.id.label.clone());
        if keys.contains_key(&id) {
            continue;
        }
        let Some(binaries) = binaries(env, plan.needs, &plan.id.label) else {
            continue;
        };
        let identity = crate::state::identity(&plan.id.label, &binaries);
        keys.insert(
            id,
            checkpoint::keys(&plan.lab.text, &plan.lab, &plan.compiled, &identity),
        );
    }
    keys
}

/// A main cell starts from the latest checkpoint on disk of its steps, leaving at least the last
/// step to run.
fn resume_latest(
    plan: &mut CellPlan,
    key_of: &dyn Fn(&CellPlan, usize) -> Option<Key>,
    open: &dyn Fn(&CellPlan, usize, &Key) -> Option<Checkpoint>,
) {
    let latest = plan.lines[..plan.lines.len().saturating_sub(1)]
        .iter()
        .enumerate()
        .rev()
        .find_map(|(i, line)| {
            let key = key_of(plan, *line)?;
            Some((i, key.clone(), open(plan, *line, &key)?))
        });
    if let Some((i, key, checkpoint)) = latest {
        plan.resume = Some(Resume {
            key,
            after: step_at(plan, plan.lines[i]),
            ready: Some(checkpoint),
        });
        plan.lines.drain(..=i);
    }
}

/// Whether a main cell runs the lab's first steps in order, none left out (with `--tags`, a
/// step may be): only then is its state after a step the lab's.
fn runs_a_prefix(plan: &CellPlan) -> bool {
    let steps = plan
        .lab
        .steps
        .iter()
        .filter(|s| s.kind == StepKind::Step)
        .map(|s| s.line);
    let skipped = plan.resume.as_ref().map_or(0, |r| r.after.index);
    plan.lines
        .iter()
        .copied()
        .eq(steps.skip(skipped).take(plan.lines.len()))
}

fn step_at(plan: &CellPlan, line: usize) -> LabStep {
    plan.lab
        .steps
        .iter()
        .find(|s| s.line == line)
        .cloned()
        .unwrap_or_else(|| LabStep {
            index: 0,
            name: String::new(),
            line,
            tags: Vec::new(),
            kind: StepKind::Step,
        })
}
