//! One child process at a time: started in its own process group, read in
//! bounded chunks, and stopped at a wall-clock limit.
//!
//! A submission's test run may loop, print without end or without newlines,
//! start processes of its own, or exit early. None of that may reach the
//! grader: stdout is read 64 KiB at a time and cut into lines of bounded
//! length, and a [`LineSink`] keeps only what it needs, so a 100 MB flood
//! costs time, not memory. At the limit, or once the child has exited, its
//! whole process group is killed, so nothing it started outlives it.

use std::io::{self, Read};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, mpsc};
use std::thread;
use std::time::{Duration, Instant};

/// How much is read from a pipe at once.
const CHUNK: usize = 64 * 1024;

/// How often a running child is checked for exit and for its deadline.
const POLL: Duration = Duration::from_millis(10);

/// How long the readers may take to reach the end of the pipes after the
/// child is gone. A process that escaped the group could hold a pipe open
/// forever; its reader is then left behind instead of waited for.
const GRACE: Duration = Duration::from_secs(2);

/// How much of stderr is kept, from its beginning and from its end (a crash
/// report comes last, after whatever flooded before it).
const STDERR_KEEP: usize = 4 * 1024;

/// Receives a child's stdout, one line at a time.
pub trait LineSink: Default + Send + 'static {
    /// The longest line passed on whole. Of a longer line only its last
    /// `MAX_LINE` bytes arrive, because libtest's verdict comes at the end of
    /// a line that a flood without newlines has run into.
    const MAX_LINE: usize;

    /// One line, without its newline; `cut` says its beginning was dropped.
    fn line(&mut self, line: &str, cut: bool);
}

/// How a run ended.
#[derive(Debug, Clone, Copy)]
pub enum Ended {
    /// The child exited on its own (or was killed by a signal).
    Exited(ExitStatus),
    /// The wall-clock limit passed and the group was killed.
    TimedOut(Duration),
    /// The watcher asked for it to stop (a test ran past its own limit),
    /// and the group was killed.
    Stopped,
}

/// What a finished run left behind.
pub struct Finished<S> {
    /// How it ended.
    pub ended: Ended,
    /// What the sink kept of stdout.
    pub sink: S,
    /// How many bytes the child wrote to stdout.
    pub stdout_bytes: u64,
    /// The beginning and the end of stderr, when it was captured.
    pub stderr: String,
}

/// Where the child's stderr goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stderr {
    /// To the grader's own stderr, as cargo's progress for a learner.
    Inherit,
    /// Into [`Finished::stderr`], bounded.
    Capture,
}

/// How a child runs.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// The wall-clock limit.
    pub wall: Duration,
    /// Where its stderr goes.
    pub stderr: Stderr,
    /// Whether it runs in a process group of its own, which is killed whole
    /// at the end. Without one it shares the grader's, so that Ctrl-C in a
    /// terminal stops it too; at the limit only the child itself is killed.
    pub own_group: bool,
    /// Caps on what it may use, for a test run (not for cargo).
    pub caps: Option<Caps>,
}

/// Caps on a child's resources, where the platform has them (Linux).
#[derive(Debug, Clone, Copy)]
pub struct Caps {
    /// Its address space, so a loop that allocates stops the submission,
    /// not the machine.
    pub memory: u64,
    /// Its processor time, so a busy loop dies even if the grader dies
    /// first (Ctrl-C) and nobody is left to enforce the wall-clock limit.
    pub cpu: Duration,
    /// How many processes and threads its user may have at once. Only a
    /// user other than root is held to it: given when the sandbox runs the
    /// child as its own account.
    pub processes: Option<u64>,
}

/// Runs `command` to its end or to the wall-clock limit, whichever comes
/// first.
pub fn run<S: LineSink>(command: &mut Command, settings: Settings) -> io::Result<Finished<S>> {
    run_watched(command, settings, &mut || false)
}

/// [`run`], with `stop` asked as the child runs whether to stop it now.
pub fn run_watched<S: LineSink>(
    command: &mut Command,
    settings: Settings,
    stop: &mut dyn FnMut() -> bool,
) -> io::Result<Finished<S>> {
    prepare(command, settings);
    let start = Instant::now();
    let mut child = command.spawn()?;
    let readers = match Readers::<S>::start(&mut child) {
        Ok(readers) => readers,
        Err(error) => {
            // Nobody would read its pipes: stop it rather than let it block.
            if settings.own_group {
                kill_group(&child);
            }
            let _ = child.kill();
            let _ = child.wait();
            return Err(error);
        }
    };
    let ended = wait(&mut child, start, settings, stop)?;
    if settings.own_group {
        // The child is gone; whatever it started goes with it.
        kill_group(&child);
    }
    Ok(readers.finish(ended))
}

/// Sets up `command` as `settings` say: no stdin, stdout to read, stderr
/// inherited or read, its own process group, its caps.
fn prepare(command: &mut Command, settings: Settings) {
    command.stdin(Stdio::null()).stdout(Stdio::piped());
    command.stderr(match settings.stderr {
        Stderr::Inherit => Stdio::inherit(),
        Stderr::Capture => Stdio::piped(),
    });
    #[cfg(unix)]
    if settings.own_group {
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }

    if let Some(caps) = settings.caps {
        limit_resources(command, caps);
    }
}

/// The threads that read a child's pipes, and what they keep.
struct Readers<S> {
    sink: Arc<Mutex<S>>,
    stdout_bytes: Arc<AtomicU64>,
    kept_stderr: Arc<Mutex<Kept>>,
    /// A message from each reader as it reaches the end of its pipe.
    done: mpsc::Receiver<()>,
    /// How many readers there are.
    count: usize,
}

impl<S: LineSink> Readers<S> {
    /// A reader for each of the child's piped outputs; an error when a
    /// thread cannot be started.
    fn start(child: &mut Child) -> io::Result<Readers<S>> {
        let sink = Arc::new(Mutex::new(S::default()));
        let stdout_bytes = Arc::new(AtomicU64::new(0));
        let kept_stderr = Arc::new(Mutex::new(Kept::new(STDERR_KEEP)));
        let (done, readers_done) = mpsc::channel::<()>();
        let mut count = 0;

        let mut spawned = Ok(());
        if let Some(pipe) = child.stdout.take() {
            let (sink, counter, done) =
                (Arc::clone(&sink), Arc::clone(&stdout_bytes), done.clone());
            count += 1;
            let reader = thread::Builder::new().spawn(move || {
                read_lines(pipe, &sink, &counter);
                let _ = done.send(());
            });
            spawned = spawned.and(reader.map(drop));
        }
        if let Some(pipe) = child.stderr.take() {
            let (kept, done) = (Arc::clone(&kept_stderr), done.clone());
            count += 1;
            let reader = thread::Builder::new().spawn(move || {
                read_kept(pipe, &kept);
                let _ = done.send(());
            });
            spawned = spawned.and(reader.map(drop));
        }
        drop(done);
        spawned.map(|()| Readers {
            sink,
            stdout_bytes,
            kept_stderr,
            done: readers_done,
            count,
        })
    }

    /// What the readers kept, once they reach the end of the pipes or
    /// [`GRACE`] passes, for a run that `ended` so.
    fn finish(self, ended: Ended) -> Finished<S> {
        let deadline = Instant::now() + GRACE;
        for _ in 0..self.count {
            let left = deadline.saturating_duration_since(Instant::now());
            if self.done.recv_timeout(left).is_err() {
                break;
            }
        }
        let sink = std::mem::take(&mut *lock(&self.sink));
        let stderr = lock(&self.kept_stderr).text();
        Finished {
            ended,
            sink,
            stdout_bytes: self.stdout_bytes.load(Ordering::Relaxed),
            stderr,
        }
    }
}

/// Waits for the child's exit, or kills it (and its group) at the deadline.
fn wait(
    child: &mut Child,
    start: Instant,
    settings: Settings,
    stop: &mut dyn FnMut() -> bool,
) -> io::Result<Ended> {
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Ended::Exited(status));
        }
        let timed_out = start.elapsed() >= settings.wall;
        if timed_out || stop() {
            if settings.own_group {
                kill_group(child);
            }
            let _ = child.kill();
            child.wait()?;
            return Ok(if timed_out {
                Ended::TimedOut(settings.wall)
            } else {
                Ended::Stopped
            });
        }
        thread::sleep(POLL);
    }
}

/// Kills the child's process group; an error means nobody is left in it.
#[cfg(unix)]
fn kill_group(child: &Child) {
    use rustix::process::{Pid, Signal, kill_process_group};
    let _ = kill_process_group(Pid::from_child(child), Signal::KILL);
}

#[cfg(not(unix))]
fn kill_group(_child: &Child) {}

/// Applies `caps` to the child, and turns off its core dumps (a crashing
/// submission would leave one per run). Set between fork and exec, so they
/// hold from the child's first instruction, and for everything it starts:
/// a run that hits a cap dies, and is graded on the verdicts it sent.
#[cfg(target_os = "linux")]
fn limit_resources(command: &mut Command, caps: Caps) {
    use std::os::unix::process::CommandExt;

    use rustix::process::{Resource, Rlimit, setrlimit};
    const MAX_FILE: u64 = 1 << 30;
    let cpu = caps.cpu.as_secs().max(1);
    let mut limits = vec![
        (Resource::As, caps.memory, caps.memory),
        (Resource::Fsize, MAX_FILE, MAX_FILE),
        (Resource::Core, 0, 0),
        // At the soft limit SIGXCPU, a few seconds later SIGKILL.
        (Resource::Cpu, cpu, cpu + 5),
    ];
    if let Some(processes) = caps.processes {
        limits.push((Resource::Nproc, processes, processes));
    }
    // SAFETY: between fork and exec only the setrlimit system call runs,
    // on values computed before the fork.
    unsafe {
        command.pre_exec(move || {
            for &(resource, current, maximum) in &limits {
                let cap = Rlimit {
                    current: Some(current),
                    maximum: Some(maximum),
                };
                // Best effort: without the cap the wall-clock limit holds.
                let _ = setrlimit(resource, cap);
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn limit_resources(_command: &mut Command, _caps: Caps) {}

/// A sink's lock; a poisoned one is still good data, as sinks do not panic.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Reads `pipe` to its end and hands its lines to `sink`, as [`run`] does
/// with a child's stdout.
pub fn read_into<S: LineSink>(pipe: impl Read, sink: &Mutex<S>) {
    read_lines(pipe, sink, &AtomicU64::new(0));
}

/// Reads `pipe` to its end and hands its lines to `sink`. The sink is locked
/// only between reads, so the grader can take what it holds even while this
/// thread waits on a pipe that never closes.
fn read_lines<S: LineSink>(mut pipe: impl Read, sink: &Mutex<S>, counter: &AtomicU64) {
    let mut chunk = vec![0; CHUNK];
    let mut line = Line::new(S::MAX_LINE);
    loop {
        let read = match pipe.read(&mut chunk) {
            Ok(0) => break,
            Ok(read) => read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        counter.fetch_add(read as u64, Ordering::Relaxed);
        let mut sink = lock(sink);
        let mut rest = &chunk[..read];
        while let Some(end) = rest.iter().position(|&byte| byte == b'\n') {
            line.push(&rest[..end]);
            line.emit(&mut *sink);
            rest = &rest[end + 1..];
        }
        line.push(rest);
    }
    if !line.bytes.is_empty() {
        line.emit(&mut *lock(sink));
    }
}

/// The line being assembled: at most twice its cap, trimmed back to the cap
/// from the front when it grows past that.
struct Line {
    bytes: Vec<u8>,
    max: usize,
    cut: bool,
}

impl Line {
    fn new(max: usize) -> Line {
        Line {
            bytes: Vec::new(),
            max,
            cut: false,
        }
    }

    fn push(&mut self, more: &[u8]) {
        if more.len() >= self.max {
            self.bytes.clear();
            self.bytes.extend_from_slice(&more[more.len() - self.max..]);
            self.cut = true;
            return;
        }
        self.bytes.extend_from_slice(more);
        if self.bytes.len() > 2 * self.max {
            self.bytes.drain(..self.bytes.len() - self.max);
            self.cut = true;
        }
    }

    fn emit(&mut self, sink: &mut impl LineSink) {
        let mut start = self.bytes.len().saturating_sub(self.max);
        let cut = self.cut || start > 0;
        // Dropping the front may have split a UTF-8 character; skip its rest.
        while start < self.bytes.len() && self.bytes[start] & 0xC0 == 0x80 {
            start += 1;
        }
        let text = String::from_utf8_lossy(&self.bytes[start..]);
        sink.line(text.trim_end_matches('\r'), cut);
        self.bytes.clear();
        self.cut = false;
    }
}

/// The beginning and the end of a stream, and how much was dropped between:
/// what a flood leaves room for. A crash report, or the panic that failed a
/// test, comes last, after whatever was printed before it.
#[derive(Debug, Clone)]
pub struct Kept {
    keep: usize,
    head: Vec<u8>,
    tail: Vec<u8>,
    dropped: u64,
}

impl Kept {
    /// Keeps up to `keep` bytes of the beginning and of the end.
    pub fn new(keep: usize) -> Kept {
        Kept {
            keep,
            head: Vec::new(),
            tail: Vec::new(),
            dropped: 0,
        }
    }

    /// Appends to the stream.
    pub fn push(&mut self, mut more: &[u8]) {
        let into_head = (self.keep - self.head.len()).min(more.len());
        self.head.extend_from_slice(&more[..into_head]);
        more = &more[into_head..];
        self.tail.extend_from_slice(more);
        if self.tail.len() > 2 * self.keep {
            let drop = self.tail.len() - self.keep;
            self.tail.drain(..drop);
            self.dropped += drop as u64;
        }
    }

    /// What was kept, with a mark where bytes were left out.
    pub fn text(&self) -> String {
        let mut text = String::from_utf8_lossy(&self.head).into_owned();
        if self.dropped > 0 {
            text.push_str(&format!("\n[… {} bytes left out …]\n", self.dropped));
        }
        text.push_str(&String::from_utf8_lossy(&self.tail));
        text
    }
}

fn read_kept(mut pipe: impl Read, kept: &Mutex<Kept>) {
    let mut chunk = vec![0; CHUNK];
    loop {
        match pipe.read(&mut chunk) {
            Ok(0) => break,
            Ok(read) => lock(kept).push(&chunk[..read]),
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
}
