//! The sandbox every build and run of a submission goes through:
//! bubblewrap (`bwrap`), with no daemon of its own.
//!
//! Inside, the whole file system is read-only; the folders the grader hides
//! (the lab's checkout with its reference, the class, the output folder, the
//! home folder of whoever runs the grader) are empty; only the few paths a
//! step needs are mounted back (the toolchain's folders read-only, the
//! target directory writable for a build). `/tmp` and `/dev/shm` are private
//! and of a bounded size, the network is a loopback of its own, and the
//! process tree has its own PID namespace: when the command exits, or the
//! grader dies, every process it started goes with it, and `/proc` shows no
//! grader. The environment is emptied but for [`ENVIRONMENT`].
//!
//! The command runs as a user that is unprivileged on the host too. Started
//! by an ordinary user, bubblewrap makes a user namespace and the command is
//! that user, with no capabilities. Started by root, a user namespace would
//! map the sandbox's user to root outside, able to read what only root may
//! read; instead bubblewrap keeps only the right to change users, and
//! `setpriv` (util-linux) makes the command the account [`ACCOUNT`] (or,
//! where it does not exist, `nobody`) before it starts, with no capability
//! left and no way to gain one. What that account may write (the target
//! directory) is handed to it first.
//!
//! A build goes through the same sandbox as a test run: `include_str!` or
//! `#[path]` can only read what the sandbox shows, and it shows no reference
//! and no other submission.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The program.
const BWRAP: &str = "bwrap";

/// The account a sandbox started by root runs its command as; `.ci/run`
/// creates it, and `book/src/instructors.md` says how on a course server.
pub const ACCOUNT: &str = "fencing-grader";

/// The size of the private `/tmp`: the tests' lab files, a PostgreSQL or
/// etcd data folder. It is memory, on top of the address-space cap, used only
/// as far as it is written. Each etcd member preallocates a 64 MB log: the
/// etcd tests reach 1.1 GB at once (measured with `du` every 0.1 s; at most
/// three clusters run at once, the shared one, L7.3's and the transcript's,
/// whatever the number of test threads), and at 1 GiB a member of L7.3's
/// cluster died on its log, failing the claim as NOT CHECKED.
const TMP_SIZE: &str = "2147483648";

/// The size of the private `/dev/shm` (PostgreSQL's shared memory).
const SHM_SIZE: &str = "268435456";

/// The variables of the grader's environment a sandboxed command keeps;
/// every other one is dropped. `HOME` and `TMPDIR` are set, not kept.
pub const ENVIRONMENT: &[&str] = &[
    "PATH",
    "LANG",
    "LC_ALL",
    "RUSTUP_TOOLCHAIN",
    // How many tests run at once; the score does not depend on it.
    "RUST_TEST_THREADS",
    // The lab's own: a PostgreSQL server given from outside, a property
    // test's seed, the heavier runs.
    "FENCING_LAB_PG_URL",
    "FENCING_LAB_SEED",
    "FENCING_LAB_THOROUGH",
];

/// Where a step may look and write.
#[derive(Debug, Clone, Default)]
pub struct Sandbox {
    /// Folders shown empty.
    pub hidden: Vec<PathBuf>,
    /// Paths under a hidden folder shown again, read-only.
    pub readable: Vec<PathBuf>,
    /// Paths under a hidden folder shown again, writable.
    pub writable: Vec<PathBuf>,
    /// The class's worker it runs for (from 1; 0 is 1), whose account it
    /// runs as when started by root: see [`account_of`].
    pub worker: usize,
}

/// Who the sandboxed command runs as when the grader is root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Account {
    /// Its user id.
    pub uid: u32,
    /// Its group id.
    pub gid: u32,
}

/// The account a sandbox started by root drops to: [`ACCOUNT`], else
/// `nobody`; `None` when the grader is not root.
pub fn account() -> Result<Option<Account>, String> {
    account_of(1)
}

/// The account of a class's worker: [`ACCOUNT`] for the first, then
/// `fencing-grader-2`, `fencing-grader-3`, … Each worker has its own, as the
/// cap on processes (RLIMIT_NPROC) counts an account's processes wherever
/// they run: a submission that forks until the cap must not take the
/// processes of the one graded beside it. `None` when the grader is not
/// root (bubblewrap then gives each sandbox a user namespace of its own).
pub fn account_of(worker: usize) -> Result<Option<Account>, String> {
    if worker <= 1 {
        return named_account(ACCOUNT, true);
    }
    let name = format!("{ACCOUNT}-{worker}");
    match named_account(&name, false)? {
        Some(found) => Ok(Some(found)),
        None if account_none()? => Ok(None),
        None => Err(format!(
            "grading {worker} submissions at once as root needs an account per worker, and \
             there is no {name}: create it with `useradd --system --no-create-home --shell \
             /usr/sbin/nologin {name}`, or give a smaller -j"
        )),
    }
}

/// How many workers have an account of their own (see [`account_of`]), up
/// to `most`; `most` when the grader is not root.
pub fn accounts(most: usize) -> usize {
    (1..=most)
        .take_while(|&worker| account_of(worker).is_ok())
        .count()
        .max(1)
}

/// Whether the grader runs as someone other than root (no account needed).
fn account_none() -> Result<bool, String> {
    #[cfg(unix)]
    return Ok(!rustix::process::geteuid().is_root());
    #[cfg(not(unix))]
    return Ok(true);
}

/// The account `name` (or, with `nobody`, that one where `name` does not
/// exist) when the grader is root; `Ok(None)` when it is not root, or when
/// `name` does not exist and `nobody` is not wanted.
fn named_account(name: &str, nobody: bool) -> Result<Option<Account>, String> {
    #[cfg(unix)]
    if !rustix::process::geteuid().is_root() {
        return Ok(None);
    }
    #[cfg(not(unix))]
    return Ok(None);
    let passwd = std::fs::read_to_string("/etc/passwd")
        .map_err(|error| format!("cannot read /etc/passwd: {error}"))?;
    let find = |name: &str| {
        passwd.lines().find_map(|line| {
            let fields: Vec<&str> = line.split(':').collect();
            match fields.as_slice() {
                [user, _, uid, gid, ..] if *user == name => {
                    Some((uid.parse().ok()?, gid.parse().ok()?))
                }
                _ => None,
            }
        })
    };
    let found = match find(name) {
        None if nobody => find("nobody"),
        None => return Ok(None),
        found => found,
    };
    match found {
        Some((uid, gid)) if uid != 0 => Ok(Some(Account { uid, gid })),
        _ => Err(format!(
            "grade runs as root, and the sandbox needs an unprivileged account to run \
             submissions as: create one with `useradd --system --no-create-home --shell \
             /usr/sbin/nologin {ACCOUNT}`"
        )),
    }
}

impl Sandbox {
    /// `program` inside the sandbox, started in `dir`. The returned command
    /// is bwrap's; set the environment and the pipes on it as on the
    /// program's (bwrap passes the environment and open descriptors on).
    pub fn command(&self, program: impl AsRef<OsStr>, dir: &Path) -> Result<Command, String> {
        let account = account_of(self.worker)?;
        let mut command = Command::new(BWRAP);
        command.args(isolation(account));
        command.args(["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]);
        // PostgreSQL's server keeps its shared memory in /dev/shm.
        // Both writable by anyone, as on the host (the account is not the
        // root that mounts them).
        command.args(["--perms", "1777", "--size", TMP_SIZE, "--tmpfs", "/tmp"]);
        command.args(["--perms", "1777", "--size", SHM_SIZE, "--tmpfs", "/dev/shm"]);
        let toolchain = toolchain();
        // The home folder first: the others may lie inside it.
        let mut hidden: Vec<PathBuf> = home()
            .filter(|home| home.parent().is_some())
            .into_iter()
            .collect();
        hidden.extend(self.hidden.iter().cloned());
        for path in &hidden {
            command.arg("--tmpfs").arg(path);
        }
        // bwrap makes the folders leading to a mount inside a hidden one
        // readable by root alone; the account must pass through them.
        let shown: Vec<&PathBuf> = toolchain
            .iter()
            .chain(&self.readable)
            .chain(&self.writable)
            .collect();
        let mut made = std::collections::BTreeSet::new();
        for path in &shown {
            for hidden_root in hidden.iter().filter(|root| path.starts_with(root)) {
                let mut on_the_way: Vec<&Path> = path
                    .ancestors()
                    .skip(1)
                    .take_while(|ancestor| {
                        ancestor.starts_with(hidden_root) && ancestor != hidden_root
                    })
                    .collect();
                on_the_way.reverse();
                for folder in on_the_way {
                    if made.insert(folder.to_path_buf()) {
                        command.args(["--perms", "0755", "--dir"]).arg(folder);
                    }
                }
            }
        }
        for path in toolchain.iter().chain(&self.readable) {
            command.arg("--ro-bind").arg(path).arg(path);
        }
        for path in &self.writable {
            command.arg("--bind").arg(path).arg(path);
        }
        command.arg("--chdir").arg(dir);
        command.arg("--");
        if let Some(account) = account {
            command.arg("setpriv").args([
                format!("--reuid={}", account.uid),
                format!("--regid={}", account.gid),
                "--clear-groups".to_owned(),
                "--no-new-privs".to_owned(),
                "--inh-caps=-all".to_owned(),
                "--".to_owned(),
            ]);
        }
        command.arg(program);
        command.env_clear();
        for key in ENVIRONMENT {
            if let Some(value) = std::env::var_os(key) {
                command.env(key, value);
            }
        }
        command.env("HOME", "/tmp").env("TMPDIR", "/tmp");
        if let [cargo_home, rustup_home] = toolchain.as_slice() {
            command
                .env("CARGO_HOME", cargo_home)
                .env("RUSTUP_HOME", rustup_home);
        }
        Ok(command)
    }
}

/// The grader's home folder, hidden from every sandboxed command.
fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .and_then(|home| std::fs::canonicalize(home).ok())
}

/// Cargo's and rustup's folders, shown read-only: the toolchain and the
/// fetched dependencies, which may sit in the hidden home folder.
fn toolchain() -> Vec<PathBuf> {
    let under_home = |variable: &str, folder: &str| {
        std::env::var_os(variable)
            .map(PathBuf::from)
            .or_else(|| home().map(|home| home.join(folder)))
            .and_then(|path| std::fs::canonicalize(path).ok())
    };
    match (
        under_home("CARGO_HOME", ".cargo"),
        under_home("RUSTUP_HOME", ".rustup"),
    ) {
        (Some(cargo), Some(rustup)) => vec![cargo, rustup],
        _ => Vec::new(),
    }
}

/// Namespaces, privileges and lifetime, the same for every step.
fn isolation(account: Option<Account>) -> Vec<&'static str> {
    let mut args = vec![
        "--unshare-ipc",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
    ];
    match account {
        // Root keeps only the right to become the account (setpriv).
        Some(_) => args.extend(["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]),
        None => args.insert(0, "--unshare-user"),
    }
    args
}

/// Gives the account the sandbox runs as (when the grader is root) what a
/// build must write: the target directory, whole.
pub fn hand_over(worker: usize, paths: &[&Path]) -> Result<(), String> {
    let Some(account) = account_of(worker)? else {
        return Ok(());
    };
    for path in paths {
        chown_all(path, account)
            .map_err(|error| format!("cannot hand {} to {ACCOUNT}: {error}", path.display()))?;
    }
    Ok(())
}

/// Takes back what [`hand_over`] gave the account: the grader's own user
/// owns `path` again, so no sandboxed command may write to it (the
/// dependency cache, filled by a sandboxed build of the untouched lab).
pub fn reclaim(path: &Path) -> Result<(), String> {
    if account()?.is_none() {
        return Ok(());
    }
    #[cfg(unix)]
    {
        let own = Account {
            uid: rustix::process::geteuid().as_raw(),
            gid: rustix::process::getegid().as_raw(),
        };
        chown_all(path, own)
            .map_err(|error| format!("cannot take back {}: {error}", path.display()))?;
    }
    Ok(())
}

/// Makes the dependencies' sources that cargo fetched readable by the
/// account the sandbox runs as (when the grader is root): a crate's archive
/// may hold files readable by their owner alone (fnv's do), which cargo
/// unpacks as they are, and the account could not compile them. They are
/// public sources; only the read bit for others is added.
pub fn share_sources() -> Result<(), String> {
    if account()?.is_none() {
        return Ok(());
    }
    let Some(cargo_home) = toolchain().into_iter().next() else {
        return Ok(());
    };
    for folder in ["registry/src", "git/checkouts"] {
        let path = cargo_home.join(folder);
        if path.exists() {
            readable_all(&path).map_err(|error| {
                format!(
                    "cannot make {} readable to {ACCOUNT}: {error}",
                    path.display()
                )
            })?;
        }
    }
    Ok(())
}

#[cfg(unix)]
fn readable_all(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let metadata = std::fs::symlink_metadata(path)?;
    if metadata.file_type().is_symlink() {
        return Ok(());
    }
    let mode = metadata.permissions().mode();
    // Read for others, and search (or execute) where the owner has it.
    let wanted = mode | 0o004 | ((mode & 0o100) >> 6);
    if wanted != mode {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(wanted))?;
    }
    if metadata.is_dir() {
        for entry in std::fs::read_dir(path)? {
            readable_all(&entry?.path())?;
        }
    }
    Ok(())
}

#[cfg(not(unix))]
fn readable_all(_path: &Path) -> std::io::Result<()> {
    Ok(())
}

#[cfg(unix)]
fn chown_all(path: &Path, account: Account) -> std::io::Result<()> {
    let metadata = std::fs::symlink_metadata(path)?;
    std::os::unix::fs::lchown(path, Some(account.uid), Some(account.gid))?;
    if metadata.is_dir() {
        for entry in std::fs::read_dir(path)? {
            chown_all(&entry?.path(), account)?;
        }
    }
    Ok(())
}

#[cfg(not(unix))]
fn chown_all(_path: &Path, _account: Account) -> std::io::Result<()> {
    Ok(())
}

/// Whether the sandbox can be created here; the reason when it cannot.
pub fn check() -> Result<(), String> {
    probe().map_err(|reason| {
        format!(
            "{reason}; grade runs every submission in a bubblewrap sandbox (Debian package \
             bubblewrap); install it, or give --no-sandbox to grade without one"
        )
    })
}

/// Starts `true` in the sandbox; why it failed, in a few words.
pub fn probe() -> Result<(), String> {
    let mut command = Sandbox::default().command("true", Path::new("/"))?;
    match command.stdin(Stdio::null()).output() {
        Ok(output) if output.status.success() => Ok(()),
        Ok(output) => Err(format!(
            "cannot create the sandbox: bwrap says {:?}",
            String::from_utf8_lossy(&output.stderr).trim()
        )),
        Err(error) => Err(format!("cannot run bwrap: {error}")),
    }
}

/// The same path, absolute and without links, as bwrap needs it.
pub fn real(path: &Path) -> Result<PathBuf, String> {
    std::fs::canonicalize(path).map_err(|error| format!("cannot read {}: {error}", path.display()))
}
