//! Workers as processes: the parent's handle ([`WorkerProcess`]) and the
//! child's side ([`serve_if_worker`]).
//!
//! A worker is the running program started again (the test binary on its
//! own test, or the `lab` binary) with the job in its environment. It grants
//! its lease, runs a worker's `work` on the job, reports the outcome and
//! exits. The parent drives it through its stdin and stdout, the way L1.4's
//! processes are driven: at each [`Moment`] the parent asked for, the worker
//! says where it is and waits for a line. Freezing is real: the parent sends
//! SIGSTOP and waits until the kernel reports the process stopped; SIGCONT
//! wakes it. Nothing waits on the clock.
//!
//! Every line a worker says carries a key the parent sent it on stdin
//! before any of the worker's code ran: a line that code prints itself is
//! not a report.

use std::collections::hash_map::RandomState;
use std::fmt::Display;
use std::hash::{BuildHasher, Hasher};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use rustix::process::{
    Pid, Signal, WaitId, WaitIdOptions, WaitOptions, kill_process, waitid, waitpid,
};

use crate::checkpoint::Trace;
use crate::claims::facts::{Coordination, Event, wire};
use crate::etcd::client::Coordinator;
use crate::etcd::worker::{Job, Moment, Worker};
use crate::etcd::{Role, trust_the_lock, work};
use crate::store::Session as _;
use crate::{Lab, LabError, describe};

/// The environment variable that makes a process a worker: its role.
pub const ROLE_VARIABLE: &str = "FENCING_LAB_ETCD_WORKER";
const ENDPOINTS: &str = "FENCING_LAB_ETCD_ENDPOINTS";
const NAMESPACE: &str = "FENCING_LAB_ETCD_NAMESPACE";
const LAB: &str = "FENCING_LAB_ETCD_LAB";
const JOB: &str = "FENCING_LAB_ETCD_JOB";
const PAUSE: &str = "FENCING_LAB_ETCD_PAUSE";
const TTL: &str = "FENCING_LAB_ETCD_TTL";

/// Every report starts with this, then the key.
const SAYS: &str = "fencing-lab-etcd:";

/// What a worker process is told to do.
#[derive(Debug, Clone)]
pub struct Spec {
    /// Whose `work` it runs.
    pub role: Role,
    /// The client URLs it connects to.
    pub endpoints: Vec<String>,
    /// Its lock names' namespace.
    pub namespace: String,
    /// The destination's SQLite file.
    pub lab: PathBuf,
    /// The job.
    pub job: Job,
    /// Where it stops and waits for the parent.
    pub pause: Vec<Moment>,
    /// Its lease's time to live, in seconds.
    pub ttl: i64,
}

/// A worker's last words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// `work`'s result, as [`describe`] prints it.
    pub outcome: String,
    /// How many times it called `apply`.
    pub applies: u32,
}

/// Why a worker is not where its parent waited for it.
#[derive(Debug)]
pub enum Missed {
    /// It finished its job before it got there: its outcome, as
    /// [`describe`] prints it. The worker's code is what stopped it.
    Finished(String),
    /// The harness failed (the process, its pipes, the kernel).
    Harness(LabError),
}

impl From<LabError> for Missed {
    fn from(error: LabError) -> Self {
        Missed::Harness(error)
    }
}

/// The parent's handle on a worker process.
pub struct WorkerProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    prefix: String,
    lease: Option<i64>,
    revisions: Vec<i64>,
    /// The parent's events and this worker's number there, where the
    /// worker's own events are added as it reports them.
    traced: Option<(Trace, usize)>,
}

impl WorkerProcess {
    /// Starts `command` (this program, started again) as the worker `spec`
    /// describes.
    pub fn start(mut command: Command, spec: &Spec) -> Result<WorkerProcess, LabError> {
        let key = fresh_key();
        let pause: Vec<&str> = spec.pause.iter().map(|moment| moment.word()).collect();
        let mut child = command
            .env(ROLE_VARIABLE, spec.role.word())
            .env(ENDPOINTS, spec.endpoints.join(","))
            .env(NAMESPACE, &spec.namespace)
            .env(LAB, &spec.lab)
            .env(
                JOB,
                format!(
                    "{}\t{}\t{}",
                    spec.job.resource, spec.job.request_id, spec.job.delta
                ),
            )
            .env(PAUSE, pause.join(","))
            .env(TTL, spec.ttl.to_string())
            .env("RUST_BACKTRACE", "0")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|error| unavailable(format!("cannot start a worker process: {error}")))?;
        let mut stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let (Some(input), Some(stdout)) = (stdin.as_mut(), stdout) else {
            return Err(unavailable("the worker's pipes are missing".into()));
        };
        writeln!(input, "{key}")
            .map_err(|error| unavailable(format!("cannot talk to the worker: {error}")))?;
        Ok(WorkerProcess {
            child,
            stdin,
            stdout: BufReader::new(stdout),
            prefix: format!("{SAYS}{key}: "),
            lease: None,
            revisions: Vec::new(),
            traced: None,
        })
    }

    /// Adds what the worker reports it did (its calls on the destination,
    /// the lock taken) to `trace`, as connection `actor`, in the order the
    /// parent reads it: a worker reports its events before it stops at a
    /// moment, so a frozen worker's are in before what others do meanwhile.
    pub fn trace_into(&mut self, trace: &Trace, actor: usize) {
        self.traced = Some((trace.clone(), actor));
    }

    /// This worker's number in the events it was traced into (0 where
    /// it was not: [`WorkerProcess::trace_into`]).
    pub fn actor(&self) -> usize {
        self.traced.as_ref().map_or(0, |(_, actor)| *actor)
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The worker's lease, once it has said it.
    pub fn lease(&mut self) -> Result<i64, Missed> {
        while self.lease.is_none() {
            let line = self.next()?;
            if let Some(outcome) = self.record(&line) {
                return Err(Missed::Finished(outcome));
            }
        }
        Ok(self.lease.unwrap_or_default())
    }

    /// The revisions of the lock keys it was granted so far.
    pub fn revisions(&self) -> &[i64] {
        &self.revisions
    }

    /// Waits until the worker says it stopped at `moment`.
    pub fn wait_at(&mut self, moment: Moment) -> Result<(), Missed> {
        loop {
            let line = self.next()?;
            if line.strip_prefix("at ") == Some(moment.word()) {
                return Ok(());
            }
            if let Some(outcome) = self.record(&line) {
                return Err(Missed::Finished(outcome));
            }
        }
    }

    /// Freezes the process with SIGSTOP and waits until the kernel says it
    /// is stopped.
    pub fn freeze(&mut self) -> Result<(), LabError> {
        let pid = self.pid_of()?;
        kill_process(pid, Signal::STOP)
            .map_err(|error| unavailable(format!("SIGSTOP: {error}")))?;
        loop {
            match waitpid(Some(pid), WaitOptions::UNTRACED) {
                Ok(Some((_, status))) if status.stopped() => return Ok(()),
                Ok(Some((_, status))) if status.exited() || status.signaled() => {
                    return Err(unavailable("the worker ended instead of stopping".into()));
                }
                Ok(_) => continue,
                Err(error) => return Err(unavailable(format!("waitpid: {error}"))),
            }
        }
    }

    /// Wakes a frozen process with SIGCONT and waits until the kernel says
    /// it runs again, or that, woken, it already ran to its end (a worker
    /// told to go on may finish before this wait begins; the kernel then
    /// reports its exit, not its waking).
    pub fn thaw(&mut self) -> Result<(), LabError> {
        let pid = self.pid_of()?;
        kill_process(pid, Signal::CONT)
            .map_err(|error| unavailable(format!("SIGCONT: {error}")))?;
        // NOWAIT: a worker that exited stays for `finish` to read and reap.
        let options = WaitIdOptions::CONTINUED | WaitIdOptions::EXITED | WaitIdOptions::NOWAIT;
        loop {
            match waitid(WaitId::Pid(pid), options) {
                Ok(Some(status)) if status.continued() || status.exited() => return Ok(()),
                Ok(Some(_)) => {
                    return Err(unavailable("the worker ended instead of going on".into()));
                }
                Ok(None) => continue,
                Err(error) => return Err(unavailable(format!("waitid: {error}"))),
            }
        }
    }

    /// The state of the process as the kernel shows it (`/proc/<pid>/stat`):
    /// `T` while frozen.
    pub fn kernel_state(&self) -> String {
        std::fs::read_to_string(format!("/proc/{}/stat", self.pid()))
            .ok()
            .and_then(|stat| {
                let (_, after_name) = stat.rsplit_once(')')?;
                after_name.split_whitespace().next().map(str::to_owned)
            })
            .unwrap_or_else(|| "gone".to_owned())
    }

    /// Lets a worker waiting at a moment go on (a frozen one goes on when
    /// it is thawed).
    pub fn go(&mut self) -> Result<(), LabError> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| unavailable("the worker's stdin is closed".into()))?;
        writeln!(stdin, "go")
            .map_err(|error| unavailable(format!("cannot tell the worker to go on: {error}")))
    }

    /// Kills the process with SIGKILL and reaps it: whatever it did not
    /// report is lost.
    pub fn kill(mut self) -> Result<(), LabError> {
        self.child
            .kill()
            .map_err(|error| unavailable(format!("cannot kill the worker: {error}")))?;
        let _ = self.child.wait();
        Ok(())
    }

    /// Lets the worker run to its end and returns what it reported.
    pub fn finish(mut self) -> Result<Report, LabError> {
        drop(self.stdin.take());
        let mut outcome = None;
        loop {
            let line = match self.next() {
                Ok(line) => line,
                Err(error) => {
                    let _ = self.child.wait();
                    return Err(error);
                }
            };
            if let Some(said) = line.strip_prefix("outcome ") {
                outcome = Some(said.to_owned());
            } else if let Some(count) = line.strip_prefix("applies ") {
                let _ = self.child.wait();
                return Ok(Report {
                    outcome: outcome.unwrap_or_else(|| "no outcome reported".to_owned()),
                    applies: count.parse().unwrap_or(u32::MAX),
                });
            } else {
                self.record(&line);
            }
        }
    }

    /// The next keyed line, or an error if the process ended first.
    fn next(&mut self) -> Result<String, LabError> {
        let mut line = String::new();
        loop {
            line.clear();
            match self.stdout.read_line(&mut line) {
                Ok(0) => {
                    let status = self.child.wait().map(|status| status.to_string());
                    return Err(unavailable(format!(
                        "the worker process ended without reporting ({})",
                        status.unwrap_or_else(|error| error.to_string())
                    )));
                }
                Ok(_) => {
                    // libtest's "test <name> ... " may start the same line.
                    if let Some((_, said)) = line.trim_end().split_once(&self.prefix) {
                        return Ok(said.to_owned());
                    }
                }
                Err(error) => return Err(unavailable(format!("cannot read the worker: {error}"))),
            }
        }
    }

    /// Records what a line says of the worker (its lease, a lock's
    /// revision); returns the outcome if the line is one.
    fn record(&mut self, line: &str) -> Option<String> {
        if let Some(lease) = line.strip_prefix("lease ") {
            self.lease = lease.parse().ok();
        } else if let Some(revision) = line.strip_prefix("reached locked ") {
            self.revisions.extend(revision.parse::<i64>().ok());
            if let Some((trace, actor)) = &self.traced {
                trace.record(Event::Coordinated {
                    actor: *actor,
                    what: Coordination::Locked,
                });
            }
        } else if let Some(run) = line.strip_prefix("events ") {
            if let (Some((trace, actor)), Some((_, events))) = (&self.traced, wire::decode(run)) {
                replay(trace, *actor, events);
            }
        } else if let Some(outcome) = line.strip_prefix("outcome ") {
            return Some(outcome.to_owned());
        }
        None
    }

    fn pid_of(&self) -> Result<Pid, LabError> {
        i32::try_from(self.pid())
            .ok()
            .and_then(Pid::from_raw)
            .ok_or_else(|| unavailable("the worker has no process id".into()))
    }
}

impl Drop for WorkerProcess {
    /// A worker left behind (a failed test) is killed, not orphaned.
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Adds a worker's `events`, which it numbered on its own connection, to
/// `trace` as connection `actor`'s. A commit or rollback is added as the
/// parent's trace tells it, so the generation it shows installed is the
/// destination's, whichever worker installed it.
fn replay(trace: &Trace, actor: usize, events: Vec<Event>) {
    for event in events {
        match event {
            Event::Called { call, .. } => trace.record(Event::Called { actor, call }),
            Event::Reached { at, .. } => trace.record(Event::Reached { actor, at }),
            Event::Ended { committed, .. } => trace.ended(actor, committed),
            Event::Resumed { .. } => trace.record(Event::Resumed { actor }),
            Event::Answered { answer, .. } => trace.record(Event::Answered { actor, answer }),
            // A worker's own trace has none: the parent adds them.
            Event::Coordinated { .. } => {}
        }
    }
}

/// In a worker process (its role in the environment): does the job and
/// exits. Elsewhere: returns at once. Call it first thing in `main`, and in
/// every test that starts workers, right after [`crate::wire`] (a worker
/// runs the learner's `work` through the table handed over).
pub fn serve_if_worker() {
    let Ok(role) = std::env::var(ROLE_VARIABLE) else {
        return;
    };
    // A panic in the learner's `work` is the worker's outcome, not a report.
    crate::panics::quiet_learner_panics();
    let mut key = String::new();
    let _ = std::io::stdin().read_line(&mut key);
    let key = key.trim().to_owned();
    let say = move |line: &dyn Display| {
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{SAYS}{key}: {line}");
        let _ = stdout.flush();
    };
    let (outcome, applies) = match serve(&role, &say) {
        Ok(done) => done,
        Err(error) => (crate::describe_error(&error), 0),
    };
    say(&format_args!("outcome {outcome}"));
    say(&format_args!("applies {applies}"));
    std::process::exit(0)
}

/// The worker's life: connect, grant the lease, run the role's `work`.
fn serve(
    role: &str,
    say: &(impl Fn(&dyn Display) + Clone + 'static),
) -> Result<(String, u32), LabError> {
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let role =
        Role::from_word(role).ok_or_else(|| unavailable(format!("unknown role {role:?}")))?;
    let endpoints: Vec<String> = var(ENDPOINTS).split(',').map(str::to_owned).collect();
    let job_text = var(JOB);
    let mut fields = job_text.splitn(3, '\t');
    let job = Job {
        resource: fields.next().unwrap_or_default().to_owned(),
        request_id: fields.next().unwrap_or_default().to_owned(),
        delta: fields
            .next()
            .and_then(|delta| delta.parse().ok())
            .unwrap_or_default(),
    };
    let pause: Vec<Moment> = Moment::ALL
        .into_iter()
        .filter(|moment| var(PAUSE).split(',').any(|word| word == moment.word()))
        .collect();
    let ttl = var(TTL).parse().unwrap_or(60);

    let db = Lab::open_existing(var(LAB))?.connect()?;
    let trace = db.traced().map(|(trace, _)| trace);
    let mut coordinator = Coordinator::connect(&endpoints, &var(NAMESPACE))?;
    let lease = coordinator.grant_lease(ttl)?;
    say(&format_args!("lease {lease}"));
    let mut worker = Worker::new(coordinator, db, lease);
    let reporter = say.clone();
    // The events of the destination's connection not yet reported.
    let mut reported = 0;
    worker.on_moment(Box::new(move |moment, detail| {
        if let Some(events) = trace.as_ref().map(Trace::events) {
            if events.len() > reported {
                let run = wire::encode(&[], &events[reported..]);
                reporter(&format_args!("events {run}"));
                reported = events.len();
            }
        }
        reporter(&format_args!("reached {} {detail}", moment.word()));
        if pause.contains(&moment) {
            reporter(&format_args!("at {}", moment.word()));
            let mut line = String::new();
            let _ = std::io::stdin().read_line(&mut line);
        }
    }));

    worker.reach(Moment::Started, String::new());
    let result = match role {
        Role::Yours => work(&mut worker, &job),
        Role::TrustsTheLock => trust_the_lock(&mut worker, &job),
    };
    worker.reach(Moment::Returned, String::new());
    // The session ends with the job: the lock passes on at once.
    let _ = worker.close();
    Ok((describe(&result), worker.applies()))
}

/// A key nobody can guess: two randomly seeded hashes, in hex.
fn fresh_key() -> String {
    let part = || {
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u32(std::process::id());
        hasher.finish()
    };
    format!("{:016x}{:016x}", part(), part())
}

fn unavailable(why: String) -> LabError {
    LabError::CoordinatorUnavailable(why)
}
