//! The sandbox every build and run of a submission goes through:
//! bubblewrap (`bwrap`), with no daemon of its own.
//!
//! Inside, the file system is built up from nothing, not the host's with
//! parts hidden: the system's folders of programs and libraries
//! ([`SYSTEM`]: `/usr`, with `/bin`, `/lib`, … as the links or folders
//! they are on the host) and the few files of `/etc` a step reads
//! ([`ETC`]), read-only; cargo's folders a build needs and rustup's,
//! read-only; `/dev`, and a `/proc` of its own; then the few paths a step
//! needs (the scratch copy or the checkout's build inputs read-only, the
//! target directory writable for a build). Nothing else of the host is
//! there: no home folder, `/root`, `/home`, `/var`, `/srv`, `/opt`, `/mnt`
//! or `/media`, and no folder beside the checkout (on a course server,
//! other classes, other checkouts, an instructor's notes). The folders the
//! grader hides (the lab's checkout with its reference, the class, the
//! output folder, the home folder of whoever runs the grader) are emptied
//! where they lie inside a system folder. `/tmp` and `/dev/shm` are private
//! and of a bounded size, the network is a loopback of its own, and the
//! process tree has its own PID namespace: when the command exits, or the
//! grader dies, every process it started goes with it, and `/proc` shows no
//! grader. The environment is emptied but for [`ENVIRONMENT`]. A program
//! the sandbox does not show (a toolchain outside `/usr` and outside
//! `CARGO_HOME` and `RUSTUP_HOME`) is named before bubblewrap starts, with
//! where it was looked for.
//!
//! The command runs as a user that is unprivileged on the host too. Started
//! by an ordinary user, bubblewrap makes a user namespace and the command is
//! that user, with no capabilities. Started by root, a user namespace would
//! map the sandbox's user to root outside, able to read what only root may
//! read; instead bubblewrap keeps only the right to change users, and
//! `setpriv` (util-linux) makes the command the account its worker claimed
//! (`crate::engine::accounts`: one of a pool no other worker of any grading on the
//! machine holds meanwhile) before it starts, with no capability left and
//! no way to gain one. What that account may write (the target
//! directory) is handed to it first.
//!
//! A build goes through the same sandbox as a test run: `include_str!` or
//! `#[path]` can only read what the sandbox shows, and it shows no reference
//! and no other submission.

use crate::engine::accounts::{self, Account};
use std::collections::BTreeSet;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The program.
const BWRAP: &str = "bwrap";

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
    /// Folders never shown: absent, like the rest of the host, or emptied
    /// where they lie inside a folder of [`SYSTEM`] (a lab checked out
    /// under `/usr/local`).
    pub hidden: Vec<PathBuf>,
    /// Paths shown, read-only, even under a hidden folder.
    pub readable: Vec<PathBuf>,
    /// Paths shown, writable, even under a hidden folder.
    pub writable: Vec<PathBuf>,
    /// The class's worker it runs for (from 1; 0 is 1), whose account it
    /// runs as when started by root: see [`accounts::of`].
    pub worker: usize,
}

impl Sandbox {
    /// `program` inside the sandbox, started in `dir`. The returned command
    /// is bwrap's; set the environment and the pipes on it as on the
    /// program's (bwrap passes the environment and open descriptors on).
    /// Fails, saying where it looked, when the sandbox does not show
    /// `program` (see [`Sandbox::find`]).
    pub fn command(&self, program: impl AsRef<OsStr>, dir: &Path) -> Result<Command, String> {
        let found = self.find(program.as_ref())?;
        // Cargo runs `rustc` from the `PATH`: a build without one would
        // fail with nothing to say why.
        if found
            .file_name()
            .is_some_and(|name| name.to_string_lossy().starts_with("cargo"))
        {
            self.find(OsStr::new("rustc"))?;
        }
        let account = accounts::of(self.worker)?;
        let mut command = Command::new(BWRAP);
        command.args(isolation(account.as_ref()));
        command.args(self.view());
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
        command.env("PATH", sandbox_path());
        command.env("HOME", "/tmp").env("TMPDIR", "/tmp");
        if let [cargo_home, rustup_home] = toolchain().as_slice() {
            command
                .env("CARGO_HOME", cargo_home)
                .env("RUSTUP_HOME", rustup_home);
        }
        Ok(command)
    }

    /// bwrap's arguments that build the file system the command sees, from
    /// nothing, in this order: [`SYSTEM`] and [`ETC`] read-only (a link as
    /// a link), `/dev`, `/proc`, the private `/tmp` and `/dev/shm`; the
    /// [`hidden`](Sandbox::hidden) folders that lie inside a system folder,
    /// emptied; the folders leading to what is shown next; then the
    /// toolchain's folders and [`readable`](Sandbox::readable) read-only and
    /// [`writable`](Sandbox::writable) writable, each at its own path.
    pub fn view(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = Vec::new();
        let mut push = |parts: &[&OsStr]| args.extend(parts.iter().map(|&part| part.to_owned()));
        let system = host_entries(SYSTEM);
        let etc = host_entries(ETC);
        for (path, link) in &system {
            show_entry(&mut push, path, link.as_deref());
        }
        // bwrap would make /etc readable by root alone.
        if !etc.is_empty() {
            push(&["--perms", "0755", "--dir", "/etc"].map(OsStr::new));
        }
        for (path, link) in &etc {
            show_entry(&mut push, path, link.as_deref());
        }
        push(&["--dev", "/dev", "--proc", "/proc"].map(OsStr::new));
        // PostgreSQL's server keeps its shared memory in /dev/shm.
        // Both writable by anyone, as on the host (the account is not the
        // root that mounts them).
        for (size, path) in [(TMP_SIZE, "/tmp"), (SHM_SIZE, "/dev/shm")] {
            push(&["--perms", "1777", "--size", size, "--tmpfs", path].map(OsStr::new));
        }
        let folders = shown_folders(&system, &etc);
        let hidden = self.hidden_inside(&folders);
        for path in &hidden {
            push(&["--tmpfs".as_ref(), path.as_os_str()]);
        }
        // Parents before children, so that no bind covers a deeper one.
        let mut again: Vec<(&str, PathBuf)> = toolchain_shown()
            .into_iter()
            .chain(self.readable.iter().cloned())
            .map(|path| ("--ro-bind", path))
            .chain(self.writable.iter().map(|path| ("--bind", path.clone())))
            .collect();
        again.sort_by_key(|(_, path)| path.components().count());
        // The folders leading to a path shown again: bwrap would make them
        // readable by root alone, and the account must pass through them.
        let there = |folder: &Path| {
            ["/", "/tmp", "/dev", "/proc"]
                .iter()
                .any(|made| folder == Path::new(made))
                || (folders.iter().any(|root| folder.starts_with(root))
                    && !hidden
                        .iter()
                        .any(|root| folder.starts_with(root) && folder != root))
                || again.iter().any(|(_, path)| folder.starts_with(path))
        };
        let mut made = BTreeSet::new();
        for (_, path) in &again {
            let mut on_the_way: Vec<&Path> = path
                .ancestors()
                .skip(1)
                .take_while(|folder| !there(folder))
                .collect();
            on_the_way.reverse();
            for folder in on_the_way {
                if made.insert(folder.to_path_buf()) {
                    push(&["--perms", "0755", "--dir"].map(OsStr::new));
                    push(&[folder.as_os_str()]);
                }
            }
        }
        for (how, path) in &again {
            push(&[how.as_ref(), path.as_os_str(), path.as_os_str()]);
        }
        args
    }

    /// Whether the sandbox shows `path`: where it leads, after every link,
    /// is shown again (the toolchain's folders, [`Sandbox::readable`],
    /// [`Sandbox::writable`]), or lies in a system folder and in no hidden
    /// one.
    pub fn shows(&self, path: &Path) -> bool {
        let Ok(path) = std::fs::canonicalize(path) else {
            return false;
        };
        let real = |path: &PathBuf| std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        let again = toolchain_shown()
            .into_iter()
            .chain(self.readable.iter().map(real))
            .chain(self.writable.iter().map(real))
            .any(|root| path.starts_with(root));
        let folders = shown_folders(&host_entries(SYSTEM), &host_entries(ETC));
        again
            || (folders.iter().any(|root| path.starts_with(root))
                && !self
                    .hidden_inside(&folders)
                    .iter()
                    .any(|hidden| path.starts_with(hidden)))
    }

    /// Where `program` is, as the sandbox sees it: itself when it is a path
    /// (`…/initdb`), else in the first folder of the `PATH` that holds it
    /// and that the sandbox shows. When the sandbox shows none, says what is
    /// missing, where it looked, and where the host has it.
    pub fn find(&self, program: &OsStr) -> Result<PathBuf, String> {
        let name = Path::new(program);
        let search = sandbox_path();
        let folders: Vec<PathBuf> = std::env::split_paths(&search).collect();
        let candidates: Vec<PathBuf> = if name.components().count() > 1 {
            vec![name.to_path_buf()]
        } else {
            folders.iter().map(|folder| folder.join(name)).collect()
        };
        let mut outside = None;
        for candidate in candidates.iter().filter(|path| path.is_file()) {
            if self.shows(candidate) {
                return Ok(candidate.clone());
            }
            outside.get_or_insert(candidate);
        }
        let shown = self.described();
        let mut advice = "set CARGO_HOME and RUSTUP_HOME to the toolchain's folders if that is \
                          where it lies, or grade with --no-sandbox"
            .to_owned();
        if name == Path::new("rustc") {
            advice = match sysroot() {
                Some(sysroot) => format!(
                    "`rustc --print sysroot` says {}, yet its bin/ holds no rustc the sandbox \
                     shows; {advice}",
                    sysroot.display()
                ),
                None => format!("`rustc --print sysroot` failed outside the sandbox too; {advice}"),
            };
        }
        Err(match outside {
            Some(path) => format!(
                "the sandbox cannot run {}: it is {}, which the sandbox does not show (it \
                 shows {shown}); {advice}",
                name.display(),
                path.display(),
            ),
            None if candidates.len() == 1 => {
                format!(
                    "the sandbox cannot run {}: there is no such file",
                    name.display()
                )
            }
            None => format!(
                "the sandbox cannot run {}: no folder of the PATH holds it (it looked in {}; \
                 the sandbox shows {shown}); {advice}",
                name.display(),
                join(&folders),
            ),
        })
    }

    /// What the sandbox shows of the host, in a few words, for a message.
    fn described(&self) -> String {
        let folders: Vec<PathBuf> = host_entries(SYSTEM)
            .into_iter()
            .filter(|(_, link)| link.is_none())
            .map(|(path, _)| path)
            .collect();
        let mut toolchain = toolchain();
        toolchain.extend(sysroot_outside());
        let toolchain = match toolchain.as_slice() {
            [] => "no toolchain folder (CARGO_HOME and RUSTUP_HOME are not set, and there is \
                   no .cargo and .rustup in the home folder)"
                .to_owned(),
            folders => format!("the toolchain's {}", join(folders)),
        };
        format!(
            "{}, a few files of /etc, {toolchain}, and {} paths of the lab",
            join(&folders),
            self.readable.len() + self.writable.len()
        )
    }

    /// The hidden folders, the home folder first, that lie inside one of
    /// `folders` (the system's): only those need emptying, as nothing
    /// else of the host is there to hide.
    fn hidden_inside(&self, folders: &[PathBuf]) -> Vec<PathBuf> {
        home()
            .filter(|home| home.parent().is_some())
            .into_iter()
            .chain(self.hidden.iter().cloned())
            .filter(|path| folders.iter().any(|folder| path.starts_with(folder)))
            .collect()
    }
}

/// The host's folders of programs and libraries, shown read-only where the
/// host has them; those that are links (on Debian, all but `/usr`: `/bin`
/// is `usr/bin`) are shown as the same links.
pub const SYSTEM: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];

/// What of `/etc` a build or a test run reads, shown read-only where the
/// host has it (a link as a link); nothing else of `/etc` is there, so no
/// `/etc/shadow` nor any configuration with a secret in it.
pub const ETC: &[&str] = &[
    // The dynamic loader's list of libraries.
    "/etc/ld.so.cache",
    // Links `/usr/bin` goes through: `cc`, which rustc links with, and `ld`.
    "/etc/alternatives",
    // The account's name: `initdb` and `postgres` refuse a user without
    // one. Readable by anyone on the host, with no password in it.
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    // `localhost`, for a test that names it rather than 127.0.0.1.
    "/etc/hosts",
    // The host's time zone, which `initdb` gives the cluster.
    "/etc/localtime",
];

/// Of `paths`, those the host has: each with its link's target when it is
/// a link.
fn host_entries(paths: &[&str]) -> Vec<(PathBuf, Option<PathBuf>)> {
    paths
        .iter()
        .map(PathBuf::from)
        .filter_map(|path| {
            let metadata = std::fs::symlink_metadata(&path).ok()?;
            let link = metadata
                .file_type()
                .is_symlink()
                .then(|| std::fs::read_link(&path).ok())
                .flatten();
            Some((path, link))
        })
        .collect()
}

/// bwrap's arguments that show one entry of the host: a link as a link,
/// anything else bound read-only.
fn show_entry(push: &mut impl FnMut(&[&OsStr]), path: &Path, link: Option<&Path>) {
    match link {
        Some(target) => push(&["--symlink".as_ref(), target.as_os_str(), path.as_os_str()]),
        None => push(&["--ro-bind".as_ref(), path.as_os_str(), path.as_os_str()]),
    }
}

/// The system's folders and files the sandbox shows, links left out (what
/// they lead to is shown, or not, on its own).
fn shown_folders(
    system: &[(PathBuf, Option<PathBuf>)],
    etc: &[(PathBuf, Option<PathBuf>)],
) -> Vec<PathBuf> {
    system
        .iter()
        .chain(etc)
        .filter(|(_, link)| link.is_none())
        .map(|(path, _)| path.clone())
        .collect()
}

/// Paths for a message, separated by commas.
fn join(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|path| path.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The grader's home folder, hidden from every sandboxed command.
fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .and_then(|home| std::fs::canonicalize(home).ok())
}

/// Cargo's and rustup's folders (`CARGO_HOME` and `RUSTUP_HOME`, by
/// default in the home folder), real paths; empty unless both exist.
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

/// What of cargo's folder a build needs, beside the programs.
const CARGO_HOME_SHOWN: &[&str] = &["bin", "registry", "git", "config.toml", "config"];

/// The toolchain's folders as the sandbox shows them, read-only: rustup's
/// whole, and of cargo's only [`CARGO_HOME_SHOWN`] (not its credentials,
/// nor what `cargo install` keeps).
fn toolchain_shown() -> Vec<PathBuf> {
    let toolchain = toolchain();
    let mut shown: Vec<PathBuf> = match toolchain.as_slice() {
        [cargo_home, rustup_home] => CARGO_HOME_SHOWN
            .iter()
            .map(|part| cargo_home.join(part))
            .filter(|path| path.exists())
            .chain([rustup_home.clone()])
            .collect(),
        _ => Vec::new(),
    };
    shown.extend(sysroot_outside());
    shown
}

/// The sysroot of the `rustc` a build here uses (`RUSTC`, else the `rustc`
/// of the `PATH`, through rustup's proxy and `rust-toolchain` files), its
/// real path, asked on the host before any sandbox starts:
/// `rustc --print sysroot` in the lab's folder. `None` if that fails.
fn sysroot() -> Option<&'static Path> {
    static SYSROOT: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    SYSROOT
        .get_or_init(|| {
            let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
            let output = Command::new(rustc)
                .args(["--print", "sysroot"])
                .current_dir(crate::engine::checkout::repository())
                .stdin(Stdio::null())
                .stderr(Stdio::null())
                .output()
                .ok()
                .filter(|output| output.status.success())?;
            let text = String::from_utf8(output.stdout).ok()?;
            std::fs::canonicalize(text.trim()).ok()
        })
        .as_deref()
}

/// The sysroot when it lies outside every folder the sandbox shows anyway
/// (the system's, cargo's and rustup's): a toolchain installed in a folder
/// of its own (`/opt/rust`, a linked toolchain), shown read-only at its
/// own path and put first on the sandbox's `PATH`.
fn sysroot_outside() -> Option<PathBuf> {
    let sysroot = sysroot()?;
    let toolchain = toolchain();
    let folders = shown_folders(&host_entries(SYSTEM), &host_entries(ETC));
    let shown = toolchain
        .iter()
        .chain(&folders)
        .any(|folder| sysroot.starts_with(folder));
    (!shown).then(|| sysroot.to_path_buf())
}

/// The `PATH` of a sandboxed command: the grader's, after the bin folder of
/// a sysroot that lies outside (see [`sysroot_outside`]).
fn sandbox_path() -> OsString {
    let host = std::env::var_os("PATH").unwrap_or_default();
    let Some(sysroot) = sysroot_outside() else {
        return host;
    };
    let folders = std::iter::once(sysroot.join("bin")).chain(std::env::split_paths(&host));
    std::env::join_paths(folders).unwrap_or(host)
}

/// Namespaces, privileges and lifetime, the same for every step.
fn isolation(account: Option<&Account>) -> Vec<&'static str> {
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
    let Some(account) = accounts::of(worker)? else {
        return Ok(());
    };
    for path in paths {
        chown_all(path, &account).map_err(|error| {
            format!(
                "cannot hand {} to {}: {error}",
                path.display(),
                account.name
            )
        })?;
    }
    Ok(())
}

/// Takes back what [`hand_over`] gave the account: the grader's own user
/// owns `path` again, so no sandboxed command may write to it (the
/// dependency cache, filled by a sandboxed build of the untouched lab).
pub fn reclaim(path: &Path) -> Result<(), String> {
    if !accounts::is_root() {
        return Ok(());
    }
    #[cfg(unix)]
    {
        let own = Account {
            name: "root".to_owned(),
            uid: rustix::process::geteuid().as_raw(),
            gid: rustix::process::getegid().as_raw(),
        };
        chown_all(path, &own)
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
    if !accounts::is_root() {
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
                    "cannot make {} readable to the sandbox's accounts: {error}",
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
fn chown_all(path: &Path, account: &Account) -> std::io::Result<()> {
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
fn chown_all(_path: &Path, _account: &Account) -> std::io::Result<()> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder of its own under the system's temporary folder.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("fencing-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        real(&dir).unwrap()
    }

    /// The sandbox's output of `sh -c script`, or `None` where bubblewrap
    /// cannot run here.
    fn run(sandbox: &Sandbox, script: &str) -> Option<(bool, String)> {
        if let Err(reason) = probe() {
            eprintln!("skipped: {reason}");
            return None;
        }
        let output = sandbox
            .command("sh", Path::new("/"))
            .unwrap()
            .args(["-c", script])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&output.stderr));
        Some((output.status.success(), text))
    }

    #[test]
    fn the_view_binds_only_the_system_the_toolchain_and_the_lab() {
        let lab = scratch("view");
        let sandbox = Sandbox {
            hidden: vec![lab.clone()],
            readable: vec![lab.join("repository")],
            writable: vec![lab.join("target")],
            worker: 1,
        };
        let view: Vec<String> = sandbox
            .view()
            .iter()
            .map(|arg| arg.to_string_lossy().into_owned())
            .collect();
        let allowed: Vec<PathBuf> = SYSTEM
            .iter()
            .chain(ETC)
            .map(PathBuf::from)
            .chain(toolchain_shown())
            .chain([lab.join("repository"), lab.join("target")])
            .collect();
        let mut binds = 0;
        for (at, window) in view.windows(3).enumerate() {
            if window[0] == "--ro-bind" || window[0] == "--bind" {
                binds += 1;
                assert_eq!(window[1], window[2]);
                assert!(
                    allowed.contains(&PathBuf::from(&window[1])),
                    "binds {}",
                    window[1]
                );
                // The folders leading to it are made first, open to all.
                if window[1].starts_with(lab.to_str().unwrap()) {
                    let made = view[..at]
                        .windows(4)
                        .any(|dir| dir == ["--perms", "0755", "--dir", lab.to_str().unwrap()]);
                    assert!(made, "{} is not made before {}", lab.display(), window[1]);
                }
            }
        }
        assert!(binds > 0);
        assert!(view.windows(2).any(|pair| pair == ["--ro-bind", "/usr"]));
        assert!(!view.iter().any(|arg| arg == "/etc/shadow"));
        std::fs::remove_dir_all(&lab).unwrap();
    }

    #[test]
    fn a_hidden_folder_inside_a_system_one_is_emptied() {
        let sandbox = Sandbox {
            hidden: vec![PathBuf::from("/usr/share/doc")],
            ..Sandbox::default()
        };
        let view: Vec<String> = sandbox
            .view()
            .iter()
            .map(|arg| arg.to_string_lossy().into_owned())
            .collect();
        assert!(
            view.windows(2)
                .any(|pair| pair == ["--tmpfs", "/usr/share/doc"])
        );
        assert!(!sandbox.shows(Path::new("/usr/share/doc/fencing-no-such-file")));
        assert!(!sandbox.shows(Path::new("/var/tmp")));
        assert!(sandbox.shows(Path::new("/usr/bin")));
    }

    #[test]
    fn a_sandboxed_command_sees_only_the_lab() {
        let lab = scratch("sees");
        std::fs::create_dir(lab.join("repository")).unwrap();
        let canary_text = format!("fencing-canary-text-{}", std::process::id());
        let canary = PathBuf::from(format!("/var/tmp/fencing-canary-{}", std::process::id()));
        std::fs::write(&canary, &canary_text).unwrap();
        let sandbox = Sandbox {
            hidden: vec![lab.clone()],
            readable: vec![lab.join("repository")],
            ..Sandbox::default()
        };
        let script = format!(
            "cat {}; ls -A /; echo /etc:; ls -A /etc; echo /var:; ls -A /var",
            canary.display()
        );
        let ran = run(&sandbox, &script);
        std::fs::remove_file(&canary).unwrap();
        std::fs::remove_dir_all(&lab).unwrap();
        let Some((_, text)) = ran else {
            return;
        };
        assert!(!text.contains(&canary_text), "{text}");
        let (root, rest) = text.split_once("/etc:\n").unwrap();
        let (etc, var) = rest.split_once("/var:\n").unwrap();
        assert!(var.contains("No such file"), "{var}");
        let shown: Vec<PathBuf> = SYSTEM
            .iter()
            .map(PathBuf::from)
            .chain(["/etc", "/dev", "/proc", "/tmp"].map(PathBuf::from))
            .chain(toolchain_shown())
            .collect();
        for entry in root.lines().filter(|line| !line.contains("No such file")) {
            let entry = Path::new("/").join(entry);
            assert!(
                shown.iter().any(|path| path.starts_with(&entry)),
                "the sandbox shows {}",
                entry.display()
            );
        }
        for entry in etc.lines() {
            let entry = Path::new("/etc").join(entry);
            assert!(
                ETC.contains(&entry.to_str().unwrap()),
                "the sandbox shows {}",
                entry.display()
            );
        }
    }

    #[test]
    fn the_tracks_programs_run_in_the_sandbox() {
        let Some((ran, text)) = run(
            &Sandbox::default(),
            "for program in sqlite3 etcd; do \
               if command -v $program > /dev/null; then $program --version || exit 1; fi; \
             done",
        ) else {
            return;
        };
        assert!(ran, "{text}");
        // initdb, with its files under /usr/share/postgresql, as a class's
        // worker runs it.
        let dir = scratch("initdb");
        hand_over(1, &[&dir]).unwrap();
        let made = crate::engine::suite::make_pg_template(&Sandbox::default(), &dir);
        std::fs::remove_dir_all(&dir).unwrap();
        made.unwrap();
    }

    #[test]
    fn a_program_the_sandbox_does_not_show_is_named_with_where_it_lies() {
        let dir = scratch("find");
        let program = dir.join("cargo");
        std::fs::write(&program, "").unwrap();
        let error = Sandbox::default().find(program.as_os_str()).unwrap_err();
        assert!(
            error.contains(&format!("it is {}", program.display())),
            "{error}"
        );
        assert!(error.contains("/usr"), "{error}");
        let error = Sandbox::default()
            .find(OsStr::new("fencing-no-such-program"))
            .unwrap_err();
        assert!(error.contains("no folder of the PATH holds it"), "{error}");
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(Sandbox::default().find(OsStr::new("sh")).is_ok());
    }
}
