//! A private etcd cluster: three members on free loopback ports, started by
//! the lab from Debian's `etcd` program, with their data in a temporary
//! directory.
//!
//! The cluster is watched, never waited for by the clock: each member's log
//! (JSON lines on its stderr) is read by a thread of its own, which records
//! when the member serves clients, which leader it follows at which term,
//! and when its process has ended. [`Cluster::leader`] and the start wait on
//! those records.
//!
//! Nothing outlives the process that started a cluster: a watchdog (`sh`,
//! reading a pipe this process holds, as the PostgreSQL track's server has)
//! kills the members and removes the directory when the pipe closes, however
//! this process ends. A cluster dropped earlier (the leader-failure test's
//! own) does the same at once.
//!
//! Each member fsyncs its write-ahead log as etcd always does; nothing here
//! turns durability off, and nothing in the lab cuts a machine's power.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use crate::LabError;
use crate::loopback::free_port;

/// Members of a cluster: three, so that one can fail and two still agree.
pub const MEMBERS: usize = 3;

/// How long a start or an election may take before the lab gives up and
/// says so. A bound on a failure, not a pause: every wait ends as soon as
/// the member's log says what it waits for.
const PATIENCE: Duration = Duration::from_secs(60);

/// Lines of each member's log kept for an error message.
const TAIL: usize = 20;

/// A running cluster.
pub struct Cluster {
    members: Vec<Member>,
    shared: Arc<Shared>,
    dir: PathBuf,
    /// Closing it (drop, or this process's end) makes the watchdog kill the
    /// members and remove `dir`.
    watchdog: Mutex<Option<ChildStdin>>,
}

/// One member's process and address.
struct Member {
    name: String,
    client_url: String,
    child: Mutex<Child>,
}

/// What the members' logs said, behind one lock, with a condition variable
/// that wakes the waiters at every new line that matters.
#[derive(Default)]
struct Shared {
    state: Mutex<Vec<Seen>>,
    changed: Condvar,
}

/// What one member's log said so far.
#[derive(Debug, Default, Clone)]
struct Seen {
    /// It serves clients.
    ready: bool,
    /// Its raft id (hex, as etcd logs it).
    id: Option<String>,
    /// The leader it follows and the term, if it has one now.
    leader: Option<(String, u64)>,
    /// Its process has ended (its stderr closed).
    exited: bool,
    /// Its last lines.
    tail: VecDeque<String>,
}

/// The cluster's leader, as every live member sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leader {
    /// Which member (0, 1 or 2).
    pub member: usize,
    /// Its raft id, in hex.
    pub id: String,
    /// The election term it won.
    pub term: u64,
}

/// The process's shared cluster, started on first use. The claims that
/// do not kill a member share it; each uses lock names of its own.
pub fn shared() -> Result<&'static Cluster, LabError> {
    static CLUSTER: OnceLock<Result<Cluster, String>> = OnceLock::new();
    CLUSTER
        .get_or_init(|| {
            Cluster::start().map_err(|error| match error {
                LabError::CoordinatorUnavailable(why) => why,
                other => other.to_string(),
            })
        })
        .as_ref()
        .map_err(|why| LabError::CoordinatorUnavailable(why.clone()))
}

impl Cluster {
    /// Starts a new cluster of [`MEMBERS`] members and waits until every
    /// member serves clients and follows one leader.
    pub fn start() -> Result<Cluster, LabError> {
        let program = find_program().map_err(LabError::CoordinatorUnavailable)?;
        let mut last_error = String::new();
        // A port is free when we bind it; another process may take it
        // before etcd does, so a failed start tries other ports.
        for _ in 0..3 {
            match start_once(&program) {
                Ok(cluster) => return Ok(cluster),
                Err(error) => last_error = error,
            }
        }
        Err(LabError::CoordinatorUnavailable(last_error))
    }

    /// The client addresses of the members whose process still runs.
    pub fn endpoints(&self) -> Vec<String> {
        let seen = self.seen();
        self.members
            .iter()
            .zip(seen.iter())
            .filter(|(_, seen)| !seen.exited)
            .map(|(member, _)| member.client_url.clone())
            .collect()
    }

    /// The client address of member `index`.
    pub fn endpoint(&self, index: usize) -> &str {
        &self.members[index].client_url
    }

    /// The leader, once every live member follows the same one at a term of
    /// at least `min_term`. Waits on the members' logs (an election after a
    /// failure takes about one election timeout).
    pub fn leader(&self, min_term: u64) -> Result<Leader, LabError> {
        let found = self.wait_for(|seen| agreed_leader(seen).filter(|l| l.term >= min_term));
        found.ok_or_else(|| self.failure(format!("no leader at term {min_term} or later")))
    }

    /// A live member that is not `leader`: where workers connect, so that
    /// killing the leader never cuts them off.
    pub fn follower_of(&self, leader: &Leader) -> usize {
        let seen = self.seen();
        (0..self.members.len())
            .find(|&index| index != leader.member && !seen[index].exited)
            .unwrap_or(leader.member)
    }

    /// Kills member `index` with SIGKILL, as a crash would, and waits for its
    /// process to end.
    pub fn kill(&self, index: usize) -> Result<(), LabError> {
        {
            let mut child = lock(&self.members[index].child);
            child.kill().map_err(|error| {
                LabError::CoordinatorUnavailable(format!(
                    "cannot kill {}: {error}",
                    self.members[index].name
                ))
            })?;
            let _ = child.wait();
        }
        // Its log reader sees the end of its stderr.
        self.wait_for(|seen| seen[index].exited.then_some(()))
            .ok_or_else(|| self.failure(format!("{} did not end", self.members[index].name)))
    }

    /// The member's name (`m0`, `m1`, `m2`).
    pub fn name(&self, index: usize) -> &str {
        &self.members[index].name
    }

    fn seen(&self) -> MutexGuard<'_, Vec<Seen>> {
        lock(&self.shared.state)
    }

    /// Waits until `found` returns something, or [`PATIENCE`] runs out.
    fn wait_for<T>(&self, mut found: impl FnMut(&[Seen]) -> Option<T>) -> Option<T> {
        let deadline = Instant::now() + PATIENCE;
        let mut seen = self.seen();
        loop {
            if let Some(value) = found(&seen) {
                return Some(value);
            }
            let left = deadline.checked_duration_since(Instant::now())?;
            seen = self
                .shared
                .changed
                .wait_timeout(seen, left)
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .0;
        }
    }

    /// An error that says what was awaited and shows each member's last
    /// lines.
    fn failure(&self, what: String) -> LabError {
        LabError::CoordinatorUnavailable(self.failure_text(what))
    }

    fn failure_text(&self, what: String) -> String {
        let seen = self.seen();
        let mut text = format!("{what} within {} s", PATIENCE.as_secs());
        for (member, seen) in self.members.iter().zip(seen.iter()) {
            let _ = write!(text, "\n{} (exited: {}):", member.name, seen.exited);
            for line in &seen.tail {
                let _ = write!(text, "\n  {line}");
            }
        }
        text
    }
}

impl Drop for Cluster {
    /// Kills every member, reaps it, then lets the watchdog remove the
    /// directory (it kills nothing it was told is gone).
    fn drop(&mut self) {
        for member in &self.members {
            let mut child = lock(&member.child);
            let _ = child.kill();
            let _ = child.wait();
        }
        if let Some(mut watchdog) = lock(&self.watchdog).take() {
            let _ = writeln!(watchdog, "reaped");
        }
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// One attempt: ports, directory, watchdog, members, then the wait.
fn start_once(program: &Path) -> Result<Cluster, String> {
    let dir = tempfile::Builder::new()
        .prefix("fencing-lab-etcd-")
        .tempdir()
        .map_err(|error| format!("cannot create the cluster's directory: {error}"))?
        .keep();
    let mut watchdog = watchdog(&dir)?;
    let ports: Vec<(u16, u16)> = (0..MEMBERS)
        .map(|_| Ok((free_port()?, free_port()?)))
        .collect::<Result<_, String>>()?;
    let peers = ports
        .iter()
        .enumerate()
        .map(|(i, (_, peer))| format!("m{i}=http://127.0.0.1:{peer}"))
        .collect::<Vec<_>>()
        .join(",");
    let token = dir
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();

    let shared = Arc::new(Shared {
        state: Mutex::new(vec![Seen::default(); MEMBERS]),
        changed: Condvar::new(),
    });
    let mut members = Vec::new();
    for (index, (client, peer)) in ports.iter().enumerate() {
        let name = format!("m{index}");
        let client_url = format!("http://127.0.0.1:{client}");
        let peer_url = format!("http://127.0.0.1:{peer}");
        let mut child = member_command(program, &dir, &name, (&client_url, &peer_url))
            .args(["--initial-cluster", &peers])
            .args(["--initial-cluster-token", &token])
            .spawn()
            .map_err(|error| format!("cannot start {}: {error}", program.display()))?;
        let _ = writeln!(watchdog, "{}", child.id());
        let stderr = child
            .stderr
            .take()
            .ok_or("the member's stderr is not piped")?;
        let shared = Arc::clone(&shared);
        std::thread::Builder::new()
            .name(format!("etcd-{name}-log"))
            .spawn(move || read_log(index, stderr, &shared))
            .map_err(|error| format!("cannot start a log reader: {error}"))?;
        members.push(Member {
            name,
            client_url,
            child: Mutex::new(child),
        });
    }
    let cluster = Cluster {
        members,
        shared,
        dir,
        watchdog: Mutex::new(Some(watchdog)),
    };
    let ready = cluster.wait_for(|seen| {
        let all_up = seen.iter().all(|member| member.ready || member.exited);
        let any_down = seen.iter().any(|member| member.exited);
        match (any_down, all_up) {
            (true, _) => Some(false),
            (false, true) => agreed_leader(seen).map(|_| true),
            (false, false) => None,
        }
    });
    match ready {
        Some(true) => Ok(cluster),
        Some(false) => Err(cluster.failure_text("a member ended during the start".into())),
        None => Err(cluster.failure_text("the cluster did not start".into())),
    }
}

/// The command that starts member `name` of a new cluster in `dir`,
/// listening on its `(client, peer)` URLs; the caller adds the cluster's
/// members and token.
fn member_command(program: &Path, dir: &Path, name: &str, (client, peer): (&str, &str)) -> Command {
    let mut command = Command::new(program);
    command
        .args(["--name", name, "--data-dir"])
        .arg(dir.join(name))
        .args(["--listen-client-urls", client])
        .args(["--advertise-client-urls", client])
        .args(["--listen-peer-urls", peer])
        .args(["--initial-advertise-peer-urls", peer])
        .args(["--initial-cluster-state", "new"])
        // etcd's defaults: a new leader a second or two after a
        // failure, and no spurious election on a loaded machine.
        .args(["--heartbeat-interval", "100", "--election-timeout", "1000"])
        // A quota of its own makes etcd map its database at that size
        // (and a tenth) instead of the 10 GiB it maps by default, which
        // a process capped in address space, as the grader caps a test
        // run (4 GiB), cannot map at all. The lab stores a few keys.
        .args(["--quota-backend-bytes", "268435456"])
        .args(["--logger", "zap", "--log-outputs", "stderr"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        // Not in the terminal's process group: a Ctrl-C reaches the
        // test process, whose watchdog then stops the members.
        .process_group(0);
    command
}

/// The leader every live member follows, if they agree and it is live.
fn agreed_leader(seen: &[Seen]) -> Option<Leader> {
    let mut live = seen.iter().filter(|member| !member.exited);
    let (id, term) = live.next()?.leader.clone()?;
    if !live.all(|member| member.leader.as_ref() == Some(&(id.clone(), term))) {
        return None;
    }
    let member = seen
        .iter()
        .position(|member| !member.exited && member.id.as_deref() == Some(id.as_str()))?;
    Some(Leader { member, id, term })
}

/// Reads member `index`'s log to its end, recording what matters.
fn read_log(index: usize, stderr: impl std::io::Read, shared: &Shared) {
    for line in BufReader::new(stderr).lines() {
        let Ok(line) = line else { break };
        let mut state = lock(&shared.state);
        let seen = &mut state[index];
        let message = message_of(&line);
        if message.starts_with("serving client traffic") {
            seen.ready = true;
        } else if let Some(rest) = message.strip_prefix("raft.node: ") {
            // "<me> elected leader <id> at term <n>", "<me> changed leader
            // from <a> to <b> at term <n>", "<me> lost leader <id> at term <n>"
            let words: Vec<&str> = rest.split_whitespace().collect();
            seen.id = words.first().map(|id| (*id).to_owned());
            let term = words.last().and_then(|term| term.parse().ok());
            seen.leader = match (words.get(1), term) {
                (Some(&"elected"), Some(term)) => words.get(3).map(|id| ((*id).to_owned(), term)),
                (Some(&"changed"), Some(term)) => words.get(5).map(|id| ((*id).to_owned(), term)),
                _ => None,
            };
        }
        if seen.tail.len() == TAIL {
            seen.tail.pop_front();
        }
        seen.tail.push_back(message.to_owned());
        drop(state);
        shared.changed.notify_all();
    }
    lock(&shared.state)[index].exited = true;
    shared.changed.notify_all();
}

/// The `msg` field of one of etcd's JSON log lines (the whole line when it
/// has none).
fn message_of(line: &str) -> &str {
    line.split_once("\"msg\":\"")
        .and_then(|(_, rest)| rest.split_once('"'))
        .map_or(line, |(message, _)| message)
}

/// A shell that collects the members' process ids from its stdin, then,
/// when the pipe closes, kills them and removes `dir`. A line `reaped`
/// means the members are already gone: their ids may belong to others now.
fn watchdog(dir: &Path) -> Result<ChildStdin, String> {
    let mut child = Command::new("sh")
        .args([
            "-c",
            r#"pids=; while read -r line; do
                 case $line in reaped) pids= ;; *) pids="$pids $line" ;; esac
               done
               [ -z "$pids" ] || kill -9 $pids 2> /dev/null
               rm -rf "$1""#,
            "fencing-lab-etcd-watchdog",
        ])
        .arg(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|error| format!("cannot start the watchdog: {error}"))?;
    child
        .stdin
        .take()
        .ok_or_else(|| "the watchdog has no stdin".to_owned())
}

/// The `etcd` program on the `PATH`.
fn find_program() -> Result<PathBuf, String> {
    std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .map(|dir| dir.join("etcd"))
        .find(|program| program.is_file())
        .ok_or_else(|| {
            "no etcd program on the PATH: install the Debian package etcd-server".to_owned()
        })
}

/// Locks a mutex whose holder may have panicked (a failed test): the data
/// is a log record or a child handle, still good to read.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
