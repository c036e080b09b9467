//! The PostgreSQL server the track runs on: a private one the lab starts for
//! itself, or one named by `FENCING_LAB_PG_URL`.
//!
//! A private server is a fresh cluster (`initdb`) in a temporary directory,
//! listening on a free loopback port and on no Unix socket, with trust
//! authentication for the user `lab`. It is started once per process, the
//! first time a lab needs it, and it outlives no process: a small watchdog
//! (`sh`, reading a pipe this process holds) stops the server and removes the
//! directory when the pipe closes, which happens however the process ends,
//! even when it is killed.
//!
//! The server runs with `fsync = off`: commits reach the operating system but
//! nobody waits for the disk. Like the SQLite lab's `synchronous = OFF`, that
//! changes nothing about locks or isolation between sessions, and nothing in
//! the lab simulates a power cut.

use std::fs;
use std::io::Read;
use std::os::unix::fs::chown;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Mutex, OnceLock};

use crate::LabError;
use crate::claims::postgres::{DEBIAN_BIN, INITDB_OPTIONS, USER};
use crate::loopback::free_port;

/// The environment variable that names a server to use instead of starting
/// one: a libpq connection string or URL, for a user who may create schemas,
/// e.g. `host=127.0.0.1 port=5432 user=postgres dbname=postgres`.
pub const URL_VARIABLE: &str = "FENCING_LAB_PG_URL";

/// The environment variable that names a fresh cluster to copy instead of
/// running `initdb` for each private server: a folder `initdb` made with
/// [`INITDB_OPTIONS`] and the user [`USER`], never started. The grader
/// makes one per worker before a class, saving each submission's test run
/// the half second `initdb` takes; without it, `initdb` runs.
pub const TEMPLATE_VARIABLE: &str = "FENCING_LAB_PG_TEMPLATE";

/// A server the lab can connect to.
#[derive(Debug)]
pub struct Server {
    /// How to reach it, as a libpq connection string (no schema, no options).
    pub conninfo: String,
    /// Where it came from, for the transcript and the tests' notes.
    pub origin: String,
    /// The private server's watchdog; closing its stdin stops the server.
    watchdog: Option<Mutex<ChildStdin>>,
}

impl Server {
    /// Whether other processes use this server too (one named by
    /// [`URL_VARIABLE`]): then what a lab leaves there stays.
    pub fn shared_by_others(&self) -> bool {
        self.watchdog.is_none()
    }
}

/// The process's server: started on first use, then shared by every lab of
/// the process. Fails with [`LabError::ServerUnavailable`], saying why, when
/// there is neither a server named by [`URL_VARIABLE`] nor the programs to
/// start one.
pub fn shared() -> Result<&'static Server, LabError> {
    static SERVER: OnceLock<Result<Server, String>> = OnceLock::new();
    SERVER
        .get_or_init(|| match std::env::var(URL_VARIABLE) {
            Ok(conninfo) if !conninfo.trim().is_empty() => Ok(Server {
                origin: format!("the server named by {URL_VARIABLE}"),
                conninfo,
                watchdog: None,
            }),
            _ => start_private(),
        })
        .as_ref()
        .map_err(|why| LabError::ServerUnavailable(why.clone()))
}

/// `initdb`, then `pg_ctl start` on a free port, then the watchdog.
fn start_private() -> Result<Server, String> {
    let bin = find_programs()?;
    let owner = server_owner()?;
    let dir = tempfile::Builder::new()
        .prefix("fencing-lab-pg-")
        .tempdir()
        .map_err(|error| format!("cannot create the server's directory: {error}"))?
        .keep();
    let started = start_in(&bin, owner, &dir);
    if started.is_err() {
        let _ = fs::remove_dir_all(&dir);
    }
    started
}

fn start_in(bin: &Path, owner: Option<(u32, u32)>, dir: &Path) -> Result<Server, String> {
    if let Some((uid, gid)) = owner {
        chown(dir, Some(uid), Some(gid))
            .map_err(|error| format!("cannot give the server's directory to its user: {error}"))?;
    }
    let data = dir.join("data");
    match std::env::var_os(TEMPLATE_VARIABLE)
        .map(PathBuf::from)
        .filter(|template| template.join("PG_VERSION").is_file())
    {
        Some(template) => copy_cluster(&template, &data, owner).map_err(|error| {
            format!(
                "cannot copy the cluster {} ({TEMPLATE_VARIABLE}): {error}",
                template.display()
            )
        })?,
        None => run(
            Command::new(bin.join("initdb"))
                .args(INITDB_OPTIONS)
                .args(["--username", USER, "--pgdata"])
                .arg(&data),
            owner,
            "initdb",
        )?,
    }

    // A port is free when we bind it; another process could take it before
    // the server does, so a failed start tries the next free one.
    let mut last_error = String::new();
    for _ in 0..3 {
        let port = free_port()?;
        let options = format!(
            "-c listen_addresses=127.0.0.1 -p {port} -c unix_socket_directories='' \
             -c fsync=off -c synchronous_commit=off -c full_page_writes=off \
             -c max_connections=200 -c shared_buffers=16MB"
        );
        let started = run(
            Command::new(bin.join("pg_ctl"))
                .args(["start", "--wait", "--timeout=60", "--silent", "--pgdata"])
                .arg(&data)
                .arg("--log")
                .arg(dir.join("server.log"))
                .args(["-o", &options]),
            owner,
            "pg_ctl start",
        );
        match started {
            Ok(()) => {
                let watchdog = watchdog(bin, owner, dir)?;
                return Ok(Server {
                    conninfo: format!("host=127.0.0.1 port={port} user={USER} dbname=postgres"),
                    origin: format!("a private server on 127.0.0.1:{port}"),
                    watchdog: Some(Mutex::new(watchdog)),
                });
            }
            Err(error) => last_error = error,
        }
    }
    let log = fs::read_to_string(dir.join("server.log")).unwrap_or_default();
    Err(format!("{last_error}\n{log}"))
}

/// Copies the cluster `from` to `to`, folders readable by their owner
/// alone (the server refuses to start otherwise), files with their modes,
/// everything given to `owner` when there is one.
fn copy_cluster(from: &Path, to: &Path, owner: Option<(u32, u32)>) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    fs::DirBuilder::new().mode(0o700).create(to)?;
    if let Some((uid, gid)) = owner {
        chown(to, Some(uid), Some(gid))?;
    }
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_cluster(&entry.path(), &target, owner)?;
        } else {
            fs::copy(entry.path(), &target)?;
            if let Some((uid, gid)) = owner {
                chown(&target, Some(uid), Some(gid))?;
            }
        }
    }
    Ok(())
}

/// A shell that waits for this process's end (its stdin closing), then stops
/// the server at once and removes its directory.
fn watchdog(bin: &Path, owner: Option<(u32, u32)>, dir: &Path) -> Result<ChildStdin, String> {
    let mut command = Command::new("sh");
    command
        .args([
            "-c",
            r#"cat > /dev/null; "$1" stop --pgdata "$2/data" --mode=immediate --silent > /dev/null 2>&1; rm -rf "$2""#,
            "fencing-lab-watchdog",
        ])
        .arg(bin.join("pg_ctl"))
        .arg(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // Its own process group: a Ctrl-C in the terminal must not kill the
        // watchdog before the process it watches.
        .process_group(0);
    if let Some((uid, gid)) = owner {
        command.uid(uid).gid(gid);
    }
    let mut child: Child = command
        .spawn()
        .map_err(|error| format!("cannot start the watchdog: {error}"))?;
    child
        .stdin
        .take()
        .ok_or_else(|| "the watchdog has no stdin".to_owned())
}

/// Runs a server program to its end; its output is the error if it fails.
fn run(command: &mut Command, owner: Option<(u32, u32)>, what: &str) -> Result<(), String> {
    if let Some((uid, gid)) = owner {
        command.uid(uid).gid(gid);
    }
    let output = command
        .stdin(Stdio::null())
        .output()
        .map_err(|error| format!("cannot run {what}: {error}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{what} failed ({}): {}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

/// The folder holding `initdb` and `pg_ctl` (see
/// [`crate::claims::postgres::programs`]), or what to do without one.
fn find_programs() -> Result<PathBuf, String> {
    crate::claims::postgres::programs().ok_or_else(|| {
        format!(
            "no initdb and pg_ctl on the PATH or under {DEBIAN_BIN}/*/bin, and {URL_VARIABLE} \
             is not set: install the Debian package postgresql, or name a server"
        )
    })
}

/// `initdb` refuses to run as root. Run as root, the server runs as the
/// `postgres` user that Debian's package creates; otherwise as ourselves.
fn server_owner() -> Result<Option<(u32, u32)>, String> {
    if !rustix::process::geteuid().is_root() {
        return Ok(None);
    }
    let mut passwd = String::new();
    fs::File::open("/etc/passwd")
        .and_then(|mut file| file.read_to_string(&mut passwd))
        .map_err(|error| format!("cannot read /etc/passwd: {error}"))?;
    passwd
        .lines()
        .map(|line| line.split(':').collect::<Vec<_>>())
        .find(|fields| fields.first() == Some(&"postgres"))
        .and_then(|fields| Some((fields.get(2)?.parse().ok()?, fields.get(3)?.parse().ok()?)))
        .map(Some)
        .ok_or_else(|| {
            "running as root, and there is no user 'postgres' to run the server as \
             (the Debian package postgresql creates it)"
                .to_owned()
        })
}
