//! The accounts a sandbox started by root runs its commands as, one per
//! worker of every grading on the machine.
//!
//! The cap on processes (`RLIMIT_NPROC`) counts an account's tasks across
//! the whole machine, not per sandbox: two workers that ran as one account
//! would share it, and a submission that holds every thread it can would
//! leave the other none, even a worker of another `cargo grade` started by
//! another instructor. So the accounts are a pool ([`ACCOUNT`],
//! `fencing-grader-2`, … up to [`POOL`], those that exist), and a worker
//! claims one with an exclusive `flock` on its lock file under [`LOCKS`],
//! held until the grader exits (the kernel lets go of it then, however
//! the grader ends). A run takes free accounts only; when every one is
//! held, its first worker waits for one, and says so in one line, while
//! its other workers never wait (a run that held one account while
//! waiting for a second could wait for a run waiting for its first). Where
//! no account of the pool exists, the first worker runs as `nobody`,
//! claimed the same way.
//!
//! An ordinary user's grader claims nothing: bubblewrap gives each sandbox
//! a user namespace of its own, as that user.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The first account of the pool; `.ci/run` creates it and the next
/// three, and `book/src/instructors.md` says how on a course server.
pub const ACCOUNT: &str = "fencing-grader";

/// The most accounts of the pool: [`ACCOUNT`], then `fencing-grader-2` up
/// to `fencing-grader-8`.
pub const POOL: usize = 8;

/// Where the pool's lock files are, one per account: a folder every
/// grading on the machine sees, made by root, writable by root alone.
pub const LOCKS: &str = "/run/lock/fencing-grader";

/// Who a sandboxed command runs as when the grader is root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    /// Its name.
    pub name: String,
    /// Its user id.
    pub uid: u32,
    /// Its group id.
    pub gid: u32,
}

/// An account a worker holds: its lock file, locked, for as long as the
/// claim lives.
#[derive(Debug)]
struct Claim {
    account: Account,
    _lock: File,
}

/// The accounts this grader claimed, its first worker's first.
static CLAIMED: Mutex<Vec<Claim>> = Mutex::new(Vec::new());

/// The account of a worker (from 1; 0 is 1) when the grader is root,
/// claimed now if the worker has none yet (the first waits for one;
/// another fails when none is free); `None` when the grader is not root.
pub fn of(worker: usize) -> Result<Option<Account>, String> {
    if !is_root() {
        return Ok(None);
    }
    let worker = worker.max(1);
    if claim(worker)? < worker {
        return Err(format!(
            "no sandbox account is free for the worker {worker}: every account of the pool \
             ({}) is held by another grading; give a smaller -j",
            pool_names().join(", ")
        ));
    }
    let claimed = CLAIMED.lock().map_err(|_| poisoned())?;
    Ok(claimed.get(worker - 1).map(|claim| claim.account.clone()))
}

/// Claims accounts until this grader holds `wanted`, or every free one:
/// the first waits while every account is held by another grading, saying
/// so on stderr; the others are taken only when free. Returns how many
/// the grader holds (at least one, at most `wanted`); `wanted` when the
/// grader is not root.
pub fn claim(wanted: usize) -> Result<usize, String> {
    if !is_root() {
        return Ok(wanted);
    }
    let pool = pool()?;
    let mut claimed = CLAIMED.lock().map_err(|_| poisoned())?;
    claim_from(
        Path::new(LOCKS),
        &pool,
        wanted.max(1),
        &mut claimed,
        |names| {
            eprintln!(
                "grade: every sandbox account ({names}) is held by another grading on this \
             machine; waiting for one to be free"
            );
        },
    )?;
    Ok(claimed.len().min(wanted.max(1)))
}

/// How many accounts of the pool exist, whether free or held; `POOL` when
/// the grader is not root (it needs none).
pub fn existing() -> usize {
    if !is_root() {
        return POOL;
    }
    pool().map_or(0, |pool| pool.len())
}

/// The name of the pool's account after the `count` first:
/// `fencing-grader-2` after one.
pub fn next_name(count: usize) -> String {
    format!("{ACCOUNT}-{}", count + 1)
}

/// Whether the grader runs as root (and so needs accounts).
pub fn is_root() -> bool {
    #[cfg(unix)]
    return rustix::process::geteuid().is_root();
    #[cfg(not(unix))]
    return false;
}

fn poisoned() -> String {
    "a grading worker panicked while claiming an account".to_owned()
}

/// The pool's names: [`ACCOUNT`], `fencing-grader-2`, …
fn pool_names() -> Vec<String> {
    (1..=POOL)
        .map(|at| match at {
            1 => ACCOUNT.to_owned(),
            _ => format!("{ACCOUNT}-{at}"),
        })
        .collect()
}

/// The accounts of the pool that exist, in the pool's order; `nobody`
/// where none does. Fails on an account whose user id is root's.
fn pool() -> Result<Vec<Account>, String> {
    let passwd = std::fs::read_to_string("/etc/passwd")
        .map_err(|error| format!("cannot read /etc/passwd: {error}"))?;
    let mut pool: Vec<Account> = pool_names()
        .into_iter()
        .filter_map(|name| find(&passwd, &name))
        .collect();
    if pool.is_empty() {
        pool.extend(find(&passwd, "nobody"));
    }
    if pool.is_empty() || pool.iter().any(|account| account.uid == 0) {
        return Err(format!(
            "grade runs as root, and the sandbox needs an unprivileged account to run \
             submissions as: create one with `useradd --system --no-create-home --shell \
             /usr/sbin/nologin {ACCOUNT}`"
        ));
    }
    Ok(pool)
}

/// The account `name` of `/etc/passwd`'s text.
fn find(passwd: &str, name: &str) -> Option<Account> {
    passwd.lines().find_map(|line| {
        let fields: Vec<&str> = line.split(':').collect();
        match fields.as_slice() {
            [user, _, uid, gid, ..] if *user == name => Some(Account {
                name: name.to_owned(),
                uid: uid.parse().ok()?,
                gid: gid.parse().ok()?,
            }),
            _ => None,
        }
    })
}

/// Adds to `claimed` the free accounts of `pool` (locks in `dir`) until it
/// holds `wanted`. When it holds none and none is free, calls `waiting`
/// with the pool's names and waits for the first account of the pool.
fn claim_from(
    dir: &Path,
    pool: &[Account],
    wanted: usize,
    claimed: &mut Vec<Claim>,
    waiting: impl FnOnce(&str),
) -> Result<(), String> {
    if claimed.len() >= wanted {
        return Ok(());
    }
    lock_folder(dir)?;
    for account in pool {
        if claimed.len() >= wanted {
            break;
        }
        if claimed.iter().any(|claim| claim.account == *account) {
            continue;
        }
        let lock = lock_file(dir, account)?;
        if lock_exclusive(&lock, false)
            .map_err(|error| format!("cannot lock {}: {error}", lock_path(dir, account)))?
        {
            claimed.push(Claim {
                account: account.clone(),
                _lock: lock,
            });
        }
    }
    if claimed.is_empty() {
        let Some(first) = pool.first() else {
            return Ok(());
        };
        let names: Vec<&str> = pool.iter().map(|account| account.name.as_str()).collect();
        waiting(&names.join(", "));
        let lock = lock_file(dir, first)?;
        lock_exclusive(&lock, true)
            .map_err(|error| format!("cannot lock {}: {error}", lock_path(dir, first)))?;
        claimed.push(Claim {
            account: first.clone(),
            _lock: lock,
        });
    }
    Ok(())
}

/// Takes `flock`'s exclusive lock on `file`, waiting for it if `wait`;
/// whether it was taken (without `wait`, not while another holds it).
fn lock_exclusive(file: &File, wait: bool) -> std::io::Result<bool> {
    #[cfg(unix)]
    {
        use rustix::fs::FlockOperation;
        let how = match wait {
            true => FlockOperation::LockExclusive,
            false => FlockOperation::NonBlockingLockExclusive,
        };
        match rustix::fs::flock(file, how) {
            Ok(()) => Ok(true),
            Err(rustix::io::Errno::WOULDBLOCK) => Ok(false),
            Err(error) => Err(error.into()),
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (file, wait);
        Ok(true)
    }
}

/// The lock file of `account` in `dir`, as text.
fn lock_path(dir: &Path, account: &Account) -> String {
    dir.join(format!("{}.lock", account.name))
        .display()
        .to_string()
}

/// Opens (making it, readable by its owner alone) the lock file of
/// `account`; never through a link.
fn lock_file(dir: &Path, account: &Account) -> Result<File, String> {
    let path = lock_path(dir, account);
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options
            .mode(0o600)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32);
    }
    options
        .open(&path)
        .map_err(|error| format!("cannot open the account lock {path}: {error}"))
}

/// Makes `dir` (mode 0755) if it is not there, and refuses it unless it is
/// a folder, not a link, owned by the grader's own user and writable by
/// that user alone: no one else may plant or remove a lock.
fn lock_folder(dir: &Path) -> Result<PathBuf, String> {
    let shown = dir.display();
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, MetadataExt};
        match std::fs::DirBuilder::new().mode(0o755).create(dir) {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(error) => return Err(format!("cannot create {shown}: {error}")),
        }
        let metadata = std::fs::symlink_metadata(dir)
            .map_err(|error| format!("cannot read {shown}: {error}"))?;
        let own = rustix::process::geteuid().as_raw();
        if !metadata.is_dir() || metadata.uid() != own || metadata.mode() & 0o022 != 0 {
            return Err(format!(
                "the account locks' folder {shown} is not a folder owned by uid {own} and \
                 writable by it alone: remove it, and grade makes it again"
            ));
        }
    }
    Ok(dir.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn account(name: &str, uid: u32) -> Account {
        Account {
            name: name.to_owned(),
            uid,
            gid: uid,
        }
    }

    #[test]
    fn two_gradings_never_claim_one_account() {
        let dir = std::env::temp_dir().join(format!("fencing-locks-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let pool = [account("a", 1001), account("b", 1002), account("c", 1003)];
        let never = |_: &str| panic!("waited with an account free");
        // One grading with two workers, then another with two.
        let mut first = Vec::new();
        claim_from(&dir, &pool, 2, &mut first, never).unwrap();
        let mut second = Vec::new();
        claim_from(&dir, &pool, 2, &mut second, never).unwrap();
        let names = |claims: &[Claim]| -> Vec<String> {
            claims.iter().map(|c| c.account.name.clone()).collect()
        };
        assert_eq!(names(&first), ["a", "b"]);
        // The one free account, not a shared one.
        assert_eq!(names(&second), ["c"]);
        // Once the first ends, its accounts are free again.
        drop(first);
        let mut third = Vec::new();
        claim_from(&dir, &pool, 3, &mut third, never).unwrap();
        assert_eq!(names(&third), ["a", "b"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_grading_with_no_account_free_waits_for_one_and_says_so() {
        let dir = std::env::temp_dir().join(format!("fencing-wait-locks-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let pool = [account("a", 1001)];
        let mut other = Vec::new();
        claim_from(&dir, &pool, 1, &mut other, |_| panic!("waited")).unwrap();
        let (said, heard) = std::sync::mpsc::channel();
        // The other grading ends once this one has said it waits.
        let ending = std::thread::spawn(move || {
            let names: String = heard.recv().unwrap();
            drop(other);
            names
        });
        let mut mine = Vec::new();
        claim_from(&dir, &pool, 1, &mut mine, |names| {
            said.send(names.to_owned()).unwrap()
        })
        .unwrap();
        assert_eq!(ending.join().unwrap(), "a");
        assert_eq!(mine[0].account.name, "a");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_lock_folder_others_may_write_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("fencing-open-locks-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let error = lock_folder(&dir).unwrap_err();
        assert!(error.contains("writable by it alone"), "{error}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
