//! How a private PostgreSQL server is found and made: facts the lab (which
//! starts one for its tests) and the grader (which makes the template
//! cluster a class's tests copy) must agree on, so they are kept here, in
//! the one package both link.

use std::path::PathBuf;

/// Where Debian keeps the server's programs, one folder per major version;
/// `initdb` and `pg_ctl` are not on the `PATH` there.
pub const DEBIAN_BIN: &str = "/usr/lib/postgresql";

/// The user a private server is created with (trust authentication).
pub const USER: &str = "lab";

/// How `initdb` makes a private server's cluster (then `--username`
/// [`USER`] `--pgdata DIR`).
pub const INITDB_OPTIONS: [&str; 4] =
    ["--auth=trust", "--no-sync", "--encoding=UTF8", "--locale=C"];

/// The folder holding `initdb` and `pg_ctl`: the first on the `PATH` that
/// has both, else Debian's newest `/usr/lib/postgresql/<version>/bin`;
/// `None` where neither is installed.
pub fn programs() -> Option<PathBuf> {
    let on_path: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect())
        .unwrap_or_default();
    let mut debian: Vec<(u32, PathBuf)> = std::fs::read_dir(DEBIAN_BIN)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse().ok()?;
            Some((version, entry.path().join("bin")))
        })
        .collect();
    debian.sort();
    on_path
        .into_iter()
        .chain(debian.into_iter().rev().map(|(_, bin)| bin))
        .find(|dir| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file())
}
