//! Where a jq query runs, so that no query can take the harness down. Run as the `labcheck`
//! binary, each query runs in a worker process of its own (the same binary, `__jq-worker`)
//! with its address space limited to [`MEMORY`] and its stack to [`STACK`], killed after
//! [`QUERY_TIME_LIMIT`]: a query that nests without end (`reduce range(100000) as $i (.; [.])`,
//! `def f: 1+f; f`) or allocates without bound ends the worker, not labcheck, and is a check
//! error naming the bound. Used as a library (the labs test harness, unit tests), queries run
//! on a thread of the caller's, bounded in time only.
//!
//! A process rather than a thread: Rust aborts the whole process when any thread overflows its
//! stack, and a thread's allocations count against the process's memory.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::CheckError;
use super::documents::{QUERY_MAX_RESULTS, QUERY_TIME_LIMIT, query_in_thread, query_unbounded};

/// The argument that makes `labcheck` a jq worker.
pub const WORKER_ARG: &str = "__jq-worker";
/// The stack a query runs on.
pub const STACK: usize = 64 << 20;
/// The address space a worker may use.
pub const MEMORY: u64 = 1 << 30;

static WORKER: OnceLock<PathBuf> = OnceLock::new();

/// Makes every query of this process run in a worker started from `exe` (the labcheck binary).
pub fn use_workers(exe: PathBuf) {
    let _ = WORKER.set(exe);
}

/// Runs a query on each document: in a worker when [`use_workers`] was called, else on a thread.
pub fn run(docs: &[Value], code: &str) -> Result<Vec<Value>, CheckError> {
    match WORKER.get() {
        Some(exe) => in_worker(exe, docs, code),
        None => query_in_thread(docs, code),
    }
}

fn failed(code: &str, message: String) -> CheckError {
    CheckError::JqFailed {
        query: code.to_owned(),
        message,
    }
}

/// Runs the query in a worker process, within time, stack and memory.
fn in_worker(exe: &PathBuf, docs: &[Value], code: &str) -> Result<Vec<Value>, CheckError> {
    let request = json!({ "code": code, "docs": docs }).to_string();
    let mut child = Command::new(exe)
        .arg(WORKER_ARG)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| failed(code, format!("cannot start the jq worker: {e}")))?;
    let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    let writer = std::thread::spawn(move || {
        if let Some(mut stdin) = stdin {
            let _ = stdin.write_all(request.as_bytes());
        }
    });
    let read_all = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_string(&mut text);
            }
            text
        })
    };
    let out = read_all(stdout.map(|p| Box::new(p) as Box<dyn Read + Send>));
    let err = read_all(stderr.map(|p| Box::new(p) as Box<dyn Read + Send>));
    let deadline = Instant::now() + QUERY_TIME_LIMIT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(2)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(CheckError::JqTimeout {
                    query: code.to_owned(),
                    limit: QUERY_TIME_LIMIT,
                });
            }
        }
    };
    let _ = writer.join();
    let (out, err) = (
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default(),
    );
    if !status.success() {
        return Err(died(code, &status, &err));
    }
    answer(code, &out)
}

/// What a worker that died of a query ran into.
fn died(code: &str, status: &std::process::ExitStatus, stderr: &str) -> CheckError {
    let bound = if stderr.contains("overflowed its stack") {
        Some(format!("its stack of {} MiB", STACK >> 20))
    } else if stderr.contains("memory allocation") || stderr.contains("out of memory") {
        Some(format!("its memory of {} MiB", MEMORY >> 20))
    } else {
        None
    };
    match bound {
        Some(bound) => CheckError::JqBound {
            query: code.to_owned(),
            bound,
        },
        None => failed(
            code,
            format!("the jq worker ended ({status}): {}", stderr.trim()),
        ),
    }
}

/// Reads a worker's answer.
fn answer(code: &str, out: &str) -> Result<Vec<Value>, CheckError> {
    let answer: Value = serde_json::from_str(out)
        .map_err(|e| failed(code, format!("the jq worker's answer is not JSON: {e}")))?;
    if let Some(results) = answer.get("ok").and_then(Value::as_array) {
        return Ok(results.clone());
    }
    let message = answer["message"].as_str().unwrap_or_default().to_owned();
    let query = code.to_owned();
    Err(match answer["error"].as_str() {
        Some("invalid") => CheckError::JqInvalid { query, message },
        Some("too-many") => CheckError::JqTooMany {
            query,
            max: QUERY_MAX_RESULTS,
        },
        _ => CheckError::JqFailed { query, message },
    })
}

/// The worker: reads `{"code", "docs"}` on stdin, answers `{"ok": [...]}` or `{"error", "message"}`
/// on stdout. Its memory is limited first; the query runs on a thread with [`STACK`].
pub fn serve() -> i32 {
    use nix::sys::resource::{Resource, setrlimit};
    let _ = setrlimit(Resource::RLIMIT_AS, MEMORY, MEMORY);
    let mut text = String::new();
    if std::io::stdin().read_to_string(&mut text).is_err() {
        return 2;
    }
    let Ok(request) = serde_json::from_str::<Value>(&text) else {
        return 2;
    };
    let code = request["code"].as_str().unwrap_or_default().to_owned();
    let docs = request["docs"].as_array().cloned().unwrap_or_default();
    drop(text);
    let work = std::thread::Builder::new()
        .name("jq".to_owned())
        .stack_size(STACK)
        .spawn(move || query_unbounded(&docs, &code));
    let Ok(Ok(result)) = work.map(|w| w.join()) else {
        return 2;
    };
    let answer = match result {
        Ok(results) => json!({ "ok": results }),
        Err(e) => {
            let (kind, message) = match e {
                CheckError::JqInvalid { message, .. } => ("invalid", message),
                CheckError::JqTooMany { .. } => ("too-many", String::new()),
                CheckError::JqFailed { message, .. } => ("failed", message),
                other => ("failed", other.to_string()),
            };
            json!({ "error": kind, "message": message })
        }
    };
    let mut stdout = std::io::stdout();
    let _ = stdout.write_all(answer.to_string().as_bytes());
    0
}
