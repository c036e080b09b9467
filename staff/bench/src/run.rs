//! The measuring loop: N threads, one connection each, running one operation
//! over and over, retrying on contention; the statistics of one cell.

use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use fencing_lab::LabError;

/// How long a cell warms up, then how long it is measured.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// Operations that end before the window opens are not counted.
    pub warmup: Duration,
    /// The window: operations that end inside it are counted.
    pub window: Duration,
}

/// What one cell measured.
#[derive(Debug, Clone, Copy)]
pub struct Cell {
    /// Operations that completed inside the window.
    pub ops: usize,
    /// The window's length in seconds.
    pub seconds: f64,
    /// Median latency of one operation, retries included, in microseconds.
    pub p50_us: f64,
    /// 99th percentile latency, in microseconds.
    pub p99_us: f64,
    /// Contention retries of the counted operations.
    pub retries: u64,
    /// Operations that committed, warm-up and tail included: what the
    /// destination must show afterwards.
    pub committed: u64,
    /// Processor time the threads spent per operation (warm-up and tail
    /// included), in microseconds: unlike the wall clock, it does not grow
    /// when other programs take the processors. `None` without
    /// `/proc/thread-self/schedstat`.
    pub cpu_us_per_op: Option<f64>,
    /// The share of the threads' time spent ready but waiting for a
    /// processor: how much the machine's other load distorted the wall clock.
    pub cpu_wait_share: Option<f64>,
    /// The machine's 1-minute load average just before the cell ran, after
    /// waiting for it to fall below [`QUIET`]; `None` when not recorded
    /// (a results file from before it was).
    pub load_before: Option<f64>,
}

/// The load average below which the machine counts as quiet. A cell that
/// started at this load or above is disturbed: it stays in the raw table,
/// with its load, and is left out of every summary, ratio and the chart.
pub const QUIET: f64 = 0.5;

impl Cell {
    /// Whether the cell started on a machine busy with something else.
    pub fn disturbed(&self) -> bool {
        self.load_before.is_some_and(|load| load >= QUIET)
    }

    /// Operations per second.
    pub fn ops_per_sec(&self) -> f64 {
        self.ops as f64 / self.seconds
    }

    /// Contention retries per counted operation.
    pub fn retries_per_op(&self) -> f64 {
        if self.ops == 0 {
            0.0
        } else {
            self.retries as f64 / self.ops as f64
        }
    }
}

/// One operation of one connection. `i` numbers the operation on its
/// thread (a retry keeps its number, so a request id made from it stays the
/// same). `Err(LabError::Contention)` or `SerializationFailure` means "try
/// again"; any other error stops the cell.
pub type Op = Box<dyn FnMut(u64) -> Result<(), LabError>>;

/// One finished operation: when it ended (ns after the common base), how
/// long it took, and how often it was retried.
struct Done {
    end_ns: u64,
    latency_ns: u64,
    retries: u32,
}

/// Runs `connections` threads; each builds its operation with
/// `setup(thread_index)` (on its own thread: lab connections stay on the
/// thread that opened them), waits for the others, and runs it until the
/// window closes.
pub fn run<S>(connections: usize, timing: Timing, setup: S) -> Result<Cell, String>
where
    S: Fn(usize) -> Result<Op, LabError> + Sync,
{
    let base = Instant::now();
    let ready = Barrier::new(connections + 1);
    let stop = AtomicBool::new(false);
    let (window_start, window_end, per_thread) = thread::scope(|scope| {
        let handles: Vec<_> = (0..connections)
            .map(|index| {
                let (setup, ready, stop) = (&setup, &ready, &stop);
                scope.spawn(move || worker(index, base, setup, ready, stop))
            })
            .collect();
        ready.wait();
        let window_start = base.elapsed() + timing.warmup;
        let window_end = window_start + timing.window;
        // Sleep to the end of the window, or until a worker failed.
        while base.elapsed() < window_end && !stop.load(Ordering::Relaxed) {
            thread::sleep((window_end - base.elapsed()).min(Duration::from_millis(10)));
        }
        stop.store(true, Ordering::Relaxed);
        let per_thread: Vec<_> = handles
            .into_iter()
            .map(|handle| {
                handle
                    .join()
                    .map_err(|_| "a worker thread panicked".to_owned())
            })
            .collect();
        (window_start, window_end, per_thread)
    });
    let (start_ns, end_ns) = (window_start.as_nanos() as u64, window_end.as_nanos() as u64);
    let mut latencies = Vec::new();
    let mut retries = 0;
    let mut committed = 0;
    let (mut cpu_ns, mut wait_ns) = (Some(0), Some(0));
    for result in per_thread {
        let Finished {
            done,
            ops,
            cpu_ns: cpu,
            wait_ns: wait,
        } = result??;
        committed += ops;
        cpu_ns = cpu_ns.zip(cpu).map(|(sum, cpu)| sum + cpu);
        wait_ns = wait_ns.zip(wait).map(|(sum, wait)| sum + wait);
        for op in done
            .into_iter()
            .filter(|op| op.end_ns >= start_ns && op.end_ns < end_ns)
        {
            latencies.push(op.latency_ns);
            retries += u64::from(op.retries);
        }
    }
    latencies.sort_unstable();
    Ok(Cell {
        ops: latencies.len(),
        seconds: timing.window.as_secs_f64(),
        p50_us: percentile(&latencies, 50.0),
        p99_us: percentile(&latencies, 99.0),
        retries,
        committed,
        cpu_us_per_op: cpu_ns
            .filter(|_| committed > 0)
            .map(|cpu| cpu as f64 / committed as f64 / 1000.0),
        cpu_wait_share: cpu_ns
            .zip(wait_ns)
            .filter(|&(cpu, wait)| cpu + wait > 0)
            .map(|(cpu, wait)| wait as f64 / (cpu + wait) as f64),
        load_before: None,
    })
}

/// What one thread brings back.
struct Finished {
    /// Its operations.
    done: Vec<Done>,
    /// How many committed.
    ops: u64,
    /// Processor time from the start line to the end, in ns.
    cpu_ns: Option<u64>,
    /// Time spent waiting for a processor over the same span, in ns.
    wait_ns: Option<u64>,
}

/// This thread's time on a processor and time waiting for one, in ns,
/// from the kernel's scheduler statistics.
fn thread_times() -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let mut fields = text.split_whitespace();
    Some((fields.next()?.parse().ok()?, fields.next()?.parse().ok()?))
}

/// One thread: its operations until `stop`, and how many committed.
fn worker<S>(
    index: usize,
    base: Instant,
    setup: &S,
    ready: &Barrier,
    stop: &AtomicBool,
) -> Result<Finished, String>
where
    S: Fn(usize) -> Result<Op, LabError> + Sync,
{
    // Opening a connection reads the schema, which meets contention while
    // a neighbour commits in rollback mode: setup retries like an operation.
    let op = loop {
        match setup(index) {
            Err(LabError::Contention) => thread::yield_now(),
            other => break other,
        }
    };
    // Everyone meets here, even a thread whose setup failed, or the others
    // would wait forever.
    ready.wait();
    let mut op = op.map_err(|error| {
        stop.store(true, Ordering::Relaxed);
        format!(
            "setup of connection {index}: {}",
            fencing_lab::describe_error(&error)
        )
    })?;
    let start_times = thread_times();
    let mut rng =
        0x9e37_79b9_7f4a_7c15_u64 ^ (index as u64 + 1).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    let mut done = Vec::with_capacity(1 << 16);
    let mut i = 0;
    'ops: while !stop.load(Ordering::Relaxed) {
        let began = Instant::now();
        let mut retries = 0;
        loop {
            match op(i) {
                Ok(()) => break,
                Err(LabError::Contention | LabError::SerializationFailure) => {
                    retries += 1;
                    if stop.load(Ordering::Relaxed) {
                        break 'ops;
                    }
                    back_off(retries, &mut rng);
                }
                Err(error) => {
                    stop.store(true, Ordering::Relaxed);
                    return Err(format!(
                        "operation {i} on connection {index}: {}",
                        fencing_lab::describe_error(&error)
                    ));
                }
            }
        }
        let end = Instant::now();
        done.push(Done {
            end_ns: (end - base).as_nanos() as u64,
            latency_ns: (end - began).as_nanos() as u64,
            retries,
        });
        i += 1;
    }
    let end_times = thread_times();
    let (cpu_ns, wait_ns) = match start_times.zip(end_times) {
        Some(((cpu0, wait0), (cpu1, wait1))) => (Some(cpu1 - cpu0), Some(wait1 - wait0)),
        None => (None, None),
    };
    Ok(Finished {
        done,
        ops: i,
        cpu_ns,
        wait_ns,
    })
}

/// After contention: give the processor away twice, then sleep a random
/// time under a cap that doubles from 8 µs to 1 ms. The lab's connections
/// have a busy timeout of zero, so this loop is the only waiting.
fn back_off(retry: u32, rng: &mut u64) {
    if retry <= 2 {
        thread::yield_now();
        return;
    }
    let cap_us = (8_u64 << (retry - 3).min(7)).min(1000);
    // xorshift64: jitter so that waiting threads do not wake together.
    *rng ^= *rng << 13;
    *rng ^= *rng >> 7;
    *rng ^= *rng << 17;
    thread::sleep(Duration::from_micros(1 + *rng % cap_us));
}

/// The `p`th percentile (nearest rank) of sorted nanoseconds, in µs.
fn percentile(sorted_ns: &[u64], p: f64) -> f64 {
    if sorted_ns.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted_ns.len() as f64).ceil() as usize;
    sorted_ns[rank.clamp(1, sorted_ns.len()) - 1] as f64 / 1000.0
}
