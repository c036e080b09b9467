//! The claim catalogue: every claim the lab makes, in the lesson's order,
//! with its points, its tracks and the files it judges; and, in [`hints`],
//! what a learner is asked when one of its steps fails.
//!
//! This is the one place claims are defined, a package of its own so that the
//! lab (`fencing_lab::claims`), its graded tests and the grader link the same
//! catalogue. The graded tests name their claim by id (a test `l4_2_…`
//! belongs to L4.2), their failure messages quote it, the transcript heads its
//! lines with it, and the grader sums its points.
//!
//! The statements below say what each test expects. The hints, which go from
//! a question to the answer, live apart in [`hints`]: a learner reading the
//! claims is not handed the solution.
//!
//! Beside the catalogue, [`postgres`] holds how a private PostgreSQL server
//! is found and made, which the lab and the grader must agree on.

pub mod facts;
pub mod hints;
pub mod postgres;

/// One of the lessons.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lesson {
    /// `L1` to `L8`.
    pub id: &'static str,
    /// The lesson's title.
    pub title: &'static str,
}

/// One claim of a lesson, proved by one or more graded tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Claim {
    /// `L1.1` and so on.
    pub id: &'static str,
    /// The claim in one line.
    pub text: &'static str,
    /// What it is worth in the grade.
    pub points: u32,
    /// The exercise files whose decisions the claim tests.
    pub files: &'static [&'static str],
    /// The destinations it is checked on.
    pub tracks: &'static [Track],
}

/// A destination the graded suite runs against. Each track is graded on
/// its own: the SQLite lab always, PostgreSQL with the Cargo feature
/// `postgres`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Track {
    /// The SQLite file of `exercises/`.
    Sqlite,
    /// The PostgreSQL server of `exercises/postgres/`.
    Postgres,
    /// Workers that take a lock from an etcd cluster, `exercises/etcd/`.
    Etcd,
    /// The contract as two PL/pgSQL functions on the PostgreSQL server,
    /// `exercises/postgres/contract.sql`, and roles that say who may call
    /// which (lesson L8).
    PostgresSql,
}

impl Track {
    /// Every track, in the order the grader reports them.
    pub const ALL: [Track; 4] = [
        Track::Sqlite,
        Track::Postgres,
        Track::Etcd,
        Track::PostgresSql,
    ];

    /// The database's name.
    pub fn name(self) -> &'static str {
        match self {
            Track::Sqlite => "SQLite",
            Track::Postgres => "PostgreSQL",
            Track::Etcd => "etcd",
            Track::PostgresSql => "PostgreSQL functions",
        }
    }

    /// A short lowercase key, for column names and test paths.
    pub fn key(self) -> &'static str {
        match self {
            Track::Sqlite => "sqlite",
            Track::Postgres => "postgres",
            Track::Etcd => "etcd",
            Track::PostgresSql => "postgres-sql",
        }
    }

    /// The track of a graded test, from its name: the PostgreSQL tests sit
    /// under the module `postgres::`, the SQL functions' under
    /// `postgres_sql::`, the etcd tests under `l7_etcd::`, everything else
    /// is SQLite's.
    pub fn of_test(test_name: &str) -> Track {
        let mut segments = test_name.split("::");
        if segments.clone().any(|segment| segment == "postgres_sql") {
            Track::PostgresSql
        } else if segments.clone().any(|segment| segment == "postgres") {
            Track::Postgres
        } else if segments.any(|segment| segment == "l7_etcd") {
            Track::Etcd
        } else {
            Track::Sqlite
        }
    }

    /// The flag that selects this track in `cargo grade` (`--postgres`),
    /// with its leading space; none for SQLite.
    pub fn grade_flag(self) -> &'static str {
        match self {
            Track::Sqlite => "",
            Track::Postgres => " --postgres",
            Track::Etcd => " --etcd",
            Track::PostgresSql => " --postgres-sql",
        }
    }

    /// Where this track keeps an exercise file of the SQLite lab: the same
    /// name under `exercises/postgres/` for PostgreSQL. The etcd track's
    /// worker calls the SQLite lab's two functions, so its files are named
    /// as they are. The SQL track has one file for both functions.
    pub fn exercise_file(self, file: &str) -> String {
        match self {
            Track::Sqlite | Track::Etcd => file.to_owned(),
            Track::Postgres => file.replacen("exercises/", "exercises/postgres/", 1),
            Track::PostgresSql => PG_CONTRACT.to_owned(),
        }
    }
}

/// Claims checked on SQLite only.
const SQLITE: &[Track] = &[Track::Sqlite];
/// Claims checked on both destinations, and on the SQL functions.
const EVERYWHERE: &[Track] = &[Track::Sqlite, Track::Postgres, Track::PostgresSql];
/// Claims checked on both destinations that the SQL functions' track
/// cannot run (two transactions in one call) or that L8 turns around.
const BOTH_DESTINATIONS: &[Track] = &[Track::Sqlite, Track::Postgres];
/// Claims about what only the server shows.
const POSTGRES: &[Track] = &[Track::Postgres];
/// Claims about the server's row locks, through the Rust code or inside
/// the SQL functions.
const SERVER: &[Track] = &[Track::Postgres, Track::PostgresSql];
/// Claims about a worker that takes its authority from etcd.
const ETCD: &[Track] = &[Track::Etcd];
/// Claims about what the database itself enforces (lesson L8).
const SQL_FUNCTIONS: &[Track] = &[Track::PostgresSql];

impl Claim {
    /// The lesson the claim belongs to (`L4.2` belongs to `L4`).
    pub fn lesson(&self) -> Lesson {
        let prefix = self.id.split('.').next().unwrap_or(self.id);
        LESSONS
            .into_iter()
            .find(|lesson| lesson.id == prefix)
            .unwrap_or(LESSONS[0])
    }

    /// Whether the claim is checked on `track`.
    pub fn on(&self, track: Track) -> bool {
        self.tracks.contains(&track)
    }

    /// The command that asks for more of this claim's hint on `track`:
    /// `cargo grade --hint L4.2`, with `--postgres` or `--etcd`.
    pub fn hint_command(&self, track: Track) -> String {
        format!("cargo grade --hint {}{}", self.id, track.grade_flag())
    }

    /// The exercise files it judges on `track`, each once (the SQL track
    /// has one file for both functions).
    pub fn files_on(&self, track: Track) -> Vec<String> {
        let mut files: Vec<String> = Vec::new();
        for file in self.files.iter().map(|file| track.exercise_file(file)) {
            if !files.contains(&file) {
                files.push(file);
            }
        }
        files
    }

    /// The files of [`Claim::files_on`] a failing step points to: where
    /// its answer (`got`) says which function panicked or is not
    /// implemented yet (`apply panicked: …`), that function's file alone;
    /// otherwise every file the claim judges, since a wrong answer of one
    /// function may come from what the other wrote.
    pub fn files_for_step(&self, track: Track, got: &str) -> Vec<String> {
        let files = self.files_on(track);
        let named: Vec<String> = files
            .iter()
            .filter(|file| {
                let stem = file
                    .rsplit('/')
                    .next()
                    .and_then(|name| name.strip_suffix(".rs"));
                stem.is_some_and(|function| {
                    got.contains(&format!("{function} panicked: "))
                        || got.contains(&format!("{function} is not implemented yet"))
                })
            })
            .cloned()
            .collect();
        if named.len() == 1 { named } else { files }
    }

    /// The prefix its test functions start with: `L4.2` is `l4_2_`.
    pub fn test_prefix(&self) -> String {
        format!("{}_", self.id.to_lowercase().replace('.', "_"))
    }

    /// Whether `cargo test` with `track`'s feature and the claim's prefix
    /// alone runs this claim's tests on `track` and no other track's: the
    /// feature of a server track compiles the SQLite tests too, and
    /// `postgres-sql` the PostgreSQL Rust track's as well.
    pub fn prefix_is_exact_on(&self, track: Track) -> bool {
        match track {
            Track::Sqlite | Track::Etcd => true,
            Track::Postgres => !self.on(Track::Sqlite),
            Track::PostgresSql => !self.on(Track::Sqlite) && !self.on(Track::Postgres),
        }
    }

    /// The `cargo test` command that runs this claim's tests on `track`:
    /// `cargo test l3_2_` on SQLite, with the track's feature on the others
    /// (`cargo test --features etcd l7_1_`). Where the prefix alone would
    /// run other tracks' tests too, `tests` (the claim's test names on
    /// `track`, as libtest lists them) give one filter per module:
    /// `cargo test --features postgres -- postgres::row_locks::l3_2_ …`.
    /// Without them the prefix is all there is, and the command runs the
    /// claim on every track the feature compiles.
    pub fn test_command<'a>(
        &self,
        track: Track,
        tests: impl IntoIterator<Item = &'a str>,
    ) -> String {
        let prefix = self.test_prefix();
        let features = match track {
            Track::Sqlite => String::new(),
            track => format!("--features {} ", track.key()),
        };
        if !self.prefix_is_exact_on(track) {
            let segment = format!("::{prefix}");
            let mut filters: Vec<&str> = Vec::new();
            for test in tests {
                if let Some(at) = test.find(&segment) {
                    let filter = &test[..at + segment.len()];
                    if !filters.contains(&filter) {
                        filters.push(filter);
                    }
                }
            }
            if !filters.is_empty() {
                return format!("cargo test {features}-- {}", filters.join(" "));
            }
        }
        format!("cargo test {features}{prefix}")
    }
}

/// The exercise file of `install_generation`.
pub const INSTALL: &str = "exercises/install_generation.rs";
/// The exercise file of `apply`.
pub const APPLY: &str = "exercises/apply.rs";
/// The PostgreSQL track's exercise file of `install_generation`.
pub const PG_INSTALL: &str = "exercises/postgres/install_generation.rs";
/// The PostgreSQL track's exercise file of `apply`.
pub const PG_APPLY: &str = "exercises/postgres/apply.rs";
/// The SQL track's exercise file: both functions, as PL/pgSQL.
pub const PG_CONTRACT: &str = "exercises/postgres/contract.sql";
/// The etcd track's exercise file: the worker's side of the authority.
pub const ETCD_WORKER: &str = "exercises/etcd/worker.rs";

const BOTH: &[&str] = &[APPLY, INSTALL];
const APPLY_ONLY: &[&str] = &[APPLY];
const INSTALL_ONLY: &[&str] = &[INSTALL];
const WORKER_ONLY: &[&str] = &[ETCD_WORKER];

/// The lessons, in order.
pub const LESSONS: [Lesson; 8] = [
    Lesson {
        id: "L1",
        title: "Authority can become stale",
    },
    Lesson {
        id: "L2",
        title: "An explicit contract per resource",
    },
    Lesson {
        id: "L3",
        title: "The decision is applied inside the transaction",
    },
    Lesson {
        id: "L4",
        title: "Authority does not remove duplicates",
    },
    Lesson {
        id: "L5",
        title: "Counterexamples bound the protection",
    },
    Lesson {
        id: "L6",
        title: "Bad input gets a clear error and changes nothing",
    },
    Lesson {
        id: "L7",
        title: "A real coordinator: a lease runs out while its holder is frozen",
    },
    Lesson {
        id: "L8",
        title: "The destination enforces the contract itself",
    },
];

/// Every claim, in the lesson's order.
pub const CLAIMS: &[Claim] = &[
    Claim {
        id: "L1.1",
        text: "a worker that read generation 1 is rejected as stale once 2 is installed",
        points: 1,
        files: BOTH,
        tracks: EVERYWHERE,
    },
    Claim {
        id: "L1.2",
        text: "no pause is needed: an install between the worker's check and its write is caught only by apply",
        points: 1,
        files: BOTH,
        tracks: EVERYWHERE,
    },
    Claim {
        id: "L1.3",
        text: "every interleaving of two workers and the authority keeps the invariants; \
               the worker-side check breaks one",
        points: 1,
        files: BOTH,
        tracks: SQLITE,
    },
    Claim {
        id: "L1.4",
        text: "workers in separate processes, over TCP: the authority's process never installs \
               between a worker process's check and its effect, and the stale worker's apply is \
               rejected after the authority's process installs the next generation",
        points: 1,
        files: BOTH,
        tracks: POSTGRES,
    },
    Claim {
        id: "L2.1",
        text: "resources are independent: a new generation on fund-A leaves fund-B at 1",
        points: 1,
        files: BOTH,
        tracks: EVERYWHERE,
    },
    Claim {
        id: "L2.2",
        text: "an invented higher generation is rejected as never issued, distinct from stale",
        points: 1,
        files: APPLY_ONLY,
        tracks: EVERYWHERE,
    },
    Claim {
        id: "L2.3",
        text: "the installed generation is accepted and apply returns the new value",
        points: 1,
        files: APPLY_ONLY,
        tracks: EVERYWHERE,
    },
    Claim {
        id: "L2.4",
        text: "install_generation refuses an equal or lower generation and changes nothing",
        points: 1,
        files: INSTALL_ONLY,
        tracks: EVERYWHERE,
    },
    Claim {
        id: "L2.5",
        text: "an unknown resource is a clear error and nothing is created",
        points: 1,
        files: BOTH,
        tracks: EVERYWHERE,
    },
    Claim {
        id: "L2.6",
        text: "granted but not installed: generation 2 is rejected until the authority installs it",
        points: 1,
        files: APPLY_ONLY,
        tracks: EVERYWHERE,
    },
    Claim {
        id: "L2.7",
        text: "over random sequences of installs and applies, the destination behaves like a \
               small pure model of the contract",
        points: 1,
        files: BOTH,
        tracks: EVERYWHERE,
    },
    Claim {
        id: "L3.1",
        text: "while another connection holds the lock, apply fails as contention, acting on \
               nothing it read meanwhile, then succeeds",
        points: 1,
        files: APPLY_ONLY,
        tracks: EVERYWHERE,
    },
    Claim {
        id: "L3.2",
        text: "no install lands between apply's check of the generation and its effect: the two \
               are one transaction, and an install tried in between meets contention",
        points: 1,
        files: APPLY_ONLY,
        tracks: EVERYWHERE,
    },
    Claim {
        id: "L3.3",
        text: "no install or apply lands between install_generation's read of the generation \
               and its write: one tried in between meets contention",
        points: 1,
        files: INSTALL_ONLY,
        tracks: EVERYWHERE,
    },
    Claim {
        id: "L3.4",
        text: "the transaction claims hold in both the rollback-journal and the WAL mode",
        points: 1,
        files: BOTH,
        tracks: SQLITE,
    },
    Claim {
        id: "L3.5",
        text: "a real sqlite3 shell holding BEGIN IMMEDIATE makes apply fail as contention; \
               after it commits, apply succeeds",
        points: 1,
        files: APPLY_ONLY,
        tracks: SQLITE,
    },
    Claim {
        id: "L3.6",
        text: "N threads, each with its own connection, applying with retries on contention while \
               installs interleave: the invariants hold and contention is never reported as a rejection",
        // Checked, not graded: with real threads, whether a wrong
        // implementation happens to break an invariant depends on timing
        // (the second-transaction mutant failed 17 of 20 runs), and a grade
        // must not. Deterministic claims grade the same mistakes: L4.8,
        // L5.1, L5.2 and L5.6 a record written apart from its value, L1.3 and
        // L3.2 a missing transaction.
        points: 0,
        files: BOTH,
        tracks: SQLITE,
    },
    Claim {
        id: "L3.7",
        text: "a lock covers what the database locks: on PostgreSQL an apply paused on fund-A \
               leaves fund-B free, where SQLite's write lock would hold both",
        points: 1,
        files: BOTH,
        tracks: SERVER,
    },
    Claim {
        id: "L3.8",
        text: "two different requests on one resource at once: paused at any of its checkpoints \
               while the other runs to its end, both are answered as in one serial order, and \
               the value moves by the sum of the accepted deltas",
        points: 1,
        files: APPLY_ONLY,
        tracks: EVERYWHERE,
    },
    Claim {
        id: "L4.1",
        text: "the same intent twice is applied once; the replay returns the stored result",
        points: 1,
        files: APPLY_ONLY,
        tracks: EVERYWHERE,
    },
    Claim {
        id: "L4.2",
        text: "r1 (+7) returns 7, r2 (+5) makes 12, replaying r1 returns 7 and leaves 12",
        points: 1,
        files: APPLY_ONLY,
        tracks: EVERYWHERE,
    },
    Claim {
        id: "L4.3",
        text: "the same request id with a different delta is a conflict and changes nothing",
        points: 1,
        files: APPLY_ONLY,
        tracks: EVERYWHERE,
    },
    Claim {
        id: "L4.4",
        text: "records are keyed by resource and request id: r1 on fund-A and on fund-B are two requests",
        points: 1,
        files: APPLY_ONLY,
        tracks: EVERYWHERE,
    },
    Claim {
        id: "L4.5",
        text: "the generation is not a deduplication key: two request ids under one generation both apply",
        points: 1,
        files: APPLY_ONLY,
        tracks: EVERYWHERE,
    },
    Claim {
        id: "L4.6",
        text: "the generation is checked before the record: a stale replay is rejected as stale",
        points: 1,
        files: APPLY_ONLY,
        tracks: EVERYWHERE,
    },
    Claim {
        id: "L4.7",
        text: "the same request under a newer installed generation is a replay, not a second effect",
        points: 1,
        files: APPLY_ONLY,
        tracks: EVERYWHERE,
    },
    Claim {
        id: "L4.8",
        text: "rejections store nothing: no record after a stale, never-issued, conflicting or failed apply",
        points: 1,
        files: APPLY_ONLY,
        tracks: EVERYWHERE,
    },
    Claim {
        id: "L4.9",
        text: "a lost response: the worker's retry gets the stored result, and nothing applies twice",
        points: 1,
        files: APPLY_ONLY,
        tracks: EVERYWHERE,
    },
    Claim {
        id: "L4.10",
        text: "the same request on two connections at once, at every interleaving the checkpoints \
               allow, in both journal modes on SQLite: each gets the original result (or \
               contention, and tries again), never another error, and the effect happens once",
        points: 1,
        files: APPLY_ONLY,
        tracks: EVERYWHERE,
    },
    Claim {
        id: "L4.11",
        text: "the request id is opaque: ids that differ in any way (case, whitespace, unicode \
               form, one more byte, a longer id with the same start) are two requests",
        points: 1,
        files: APPLY_ONLY,
        tracks: EVERYWHERE,
    },
    Claim {
        id: "L5.1",
        text: "a fault between the value and the record rolls back both; the retry applies once",
        points: 1,
        files: APPLY_ONLY,
        tracks: EVERYWHERE,
    },
    Claim {
        id: "L5.2",
        text: "an external call made inside apply is not undone by the rollback",
        points: 1,
        files: APPLY_ONLY,
        tracks: EVERYWHERE,
    },
    Claim {
        id: "L5.3",
        text: "a direct SQL write bypasses the contract even though a newer generation is installed",
        points: 1,
        files: BOTH,
        tracks: EVERYWHERE,
    },
    Claim {
        id: "L5.4",
        text: "restoring an old generation makes that generation's requests accepted again",
        points: 1,
        files: BOTH,
        tracks: BOTH_DESTINATIONS,
    },
    Claim {
        id: "L5.5",
        text: "closing every connection and connecting again keeps committed values and records \
               (not a crash test)",
        points: 1,
        files: BOTH,
        tracks: EVERYWHERE,
    },
    Claim {
        id: "L5.6",
        text: "a process killed between the value and the record leaves neither; \
               killed after commit keeps both",
        points: 1,
        files: APPLY_ONLY,
        tracks: SQLITE,
    },
    Claim {
        id: "L5.7",
        text: "the sqlite3 shell's direct UPDATE changes the value behind the contract",
        points: 1,
        files: BOTH,
        tracks: SQLITE,
    },
    Claim {
        id: "L6.1",
        text: "bad input gets a typed error and changes nothing",
        points: 1,
        files: BOTH,
        tracks: EVERYWHERE,
    },
    Claim {
        id: "L7.1",
        text: "a worker process frozen (SIGSTOP) after installing its token loses its lease; \
               a second worker takes the lock and writes; the first, resumed (SIGCONT), is \
               refused as stale (or stops itself before apply) and the value holds only the \
               new holder's effect",
        points: 1,
        files: WORKER_ONLY,
        tracks: ETCD,
    },
    Claim {
        id: "L7.2",
        text: "the counterexample: a worker that trusts \"I hold the lock\" and presents no \
               token of its own lets the resumed write through; yours, in the same schedule, \
               is refused",
        points: 1,
        files: WORKER_ONLY,
        tracks: ETCD,
    },
    Claim {
        id: "L7.3",
        text: "tokens keep rising across a leader failure: after the leader's process is \
               killed, the next holder's token is higher, and the frozen old holder is still \
               refused",
        points: 1,
        files: WORKER_ONLY,
        tracks: ETCD,
    },
    Claim {
        id: "L7.4",
        text: "a holder frozen right after taking the lock, that finds a newer generation \
               installed when it wakes, stops without calling apply; so does a worker whose \
               lease is lost before the lock is granted",
        points: 1,
        files: WORKER_ONLY,
        tracks: ETCD,
    },
    Claim {
        id: "L7.5",
        text: "a request whose response was lost (its worker killed after the commit) gets \
               its original result when retried, after the lock changed hands",
        points: 1,
        files: WORKER_ONLY,
        tracks: ETCD,
    },
    Claim {
        id: "L7.6",
        text: "the token comes from the lock, not the worker: a worker that took its lease \
               first but the lock second still acts, and every holder raises the installed \
               generation",
        points: 1,
        files: WORKER_ONLY,
        tracks: ETCD,
    },
    Claim {
        id: "L8.1",
        text: "a worker's own UPDATE of the value is refused by the database as permission \
               denied, not as stale or contention, and changes nothing; through apply it lands",
        points: 1,
        files: BOTH,
        tracks: SQL_FUNCTIONS,
    },
    Claim {
        id: "L8.2",
        text: "only the authority installs: a worker's call of install_generation is refused \
               as permission denied and changes nothing; the authority's call installs",
        points: 1,
        files: BOTH,
        tracks: SQL_FUNCTIONS,
    },
    Claim {
        id: "L8.3",
        text: "a generation never goes backwards: a restore that writes an old generation \
               back, even by the tables' owner, is refused by a rule of the schema",
        points: 1,
        files: BOTH,
        tracks: SQL_FUNCTIONS,
    },
    Claim {
        id: "L8.4",
        text: "what stays open: the tables' owner can lift the schema's rules and write around \
               apply, and an external call made inside apply is not undone when its transaction \
               rolls back",
        points: 1,
        files: BOTH,
        tracks: SQL_FUNCTIONS,
    },
    Claim {
        id: "L8.5",
        text: "the worker cannot redirect the functions: with its own temporary relations named \
               resources and requests in place, its stale request is still refused and changes \
               nothing, and its current one lands in the lab's tables",
        points: 1,
        files: BOTH,
        tracks: SQL_FUNCTIONS,
    },
    Claim {
        id: "L8.6",
        text: "the authority may install and nothing else: its call of apply and its own UPDATE, \
               INSERT and DELETE on the tables are refused as permission denied and change \
               nothing; its install still lands",
        points: 1,
        files: BOTH,
        tracks: SQL_FUNCTIONS,
    },
];

/// Looks a claim up by id (`"L4.2"`).
pub fn claim(id: &str) -> Option<&'static Claim> {
    CLAIMS.iter().find(|claim| claim.id == id)
}

/// The claim a graded test belongs to, from its name: in
/// `l4_duplicates::l4_2_replay_returns_…` (or an rstest case below it) a path
/// segment starts with `l4_2_`.
pub fn claim_of_test(test_name: &str) -> Option<&'static Claim> {
    test_name.split("::").find_map(|segment| {
        CLAIMS
            .iter()
            .find(|claim| segment.starts_with(&claim.test_prefix()))
    })
}

/// Why a claim checked on SQLite alone runs on neither server track, as
/// the book's PostgreSQL chapter lists them (`cargo book` writes the list
/// from here). Every claim on SQLite and on no server track has its line;
/// a unit test holds the two together.
pub const ONLY_ON_SQLITE: &[(&str, &str)] = &[
    ("L1.3", "the explorer drives SQLite connections"),
    ("L3.4", "journal modes"),
    ("L3.5", "the `sqlite3` shell"),
    ("L3.6", "the load test"),
    ("L5.6", "a process crash against SQLite's recovery"),
    ("L5.7", "the `sqlite3` shell"),
];

/// The total points of the lab.
pub fn total_points() -> u32 {
    total_points_on(Track::Sqlite)
}

/// The points of one track.
pub fn total_points_on(track: Track) -> u32 {
    CLAIMS
        .iter()
        .filter(|claim| claim.on(track))
        .map(|claim| claim.points)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_names_the_file_of_the_function_that_panicked() {
        let l1 = claim("L1.1").unwrap();
        assert_eq!(l1.files_on(Track::Sqlite).len(), 2);
        let got = "apply panicked: boom (at exercises/apply.rs:3:5)";
        assert_eq!(l1.files_for_step(Track::Sqlite, got), [APPLY]);
        assert_eq!(
            l1.files_for_step(Track::Postgres, got),
            ["exercises/postgres/apply.rs"]
        );
        let got = "install_generation panicked: boom";
        assert_eq!(l1.files_for_step(Track::Sqlite, got), [INSTALL]);
        // A wrong answer may come from what the other function wrote.
        let got = "applied, result 5";
        assert_eq!(l1.files_for_step(Track::Sqlite, got).len(), 2);
    }

    #[test]
    fn a_claims_command_runs_its_own_track_only() {
        let l3_2 = claim("L3.2").unwrap();
        assert_eq!(l3_2.test_command(Track::Sqlite, []), "cargo test l3_2_");
        let on_postgres = [
            "postgres::l3_between_transactions::l3_2_apply_decides",
            "postgres::row_locks::l3_2_no_install::case_1_after_generation_read",
            "postgres::row_locks::l3_2_no_install::case_2_before_effect",
        ];
        assert_eq!(
            l3_2.test_command(Track::Postgres, on_postgres),
            "cargo test --features postgres -- postgres::l3_between_transactions::l3_2_ \
             postgres::row_locks::l3_2_"
        );
        // Without the names, the prefix with the track's feature.
        assert_eq!(
            l3_2.test_command(Track::Postgres, []),
            "cargo test --features postgres l3_2_"
        );
        // A claim no other compiled track has: its prefix is enough.
        let l8_3 = claim("L8.3").unwrap();
        assert_eq!(
            l8_3.test_command(Track::PostgresSql, ["postgres_sql::l8::l8_3_x"]),
            "cargo test --features postgres-sql l8_3_"
        );
        let l7_1 = claim("L7.1").unwrap();
        assert_eq!(
            l7_1.test_command(Track::Etcd, []),
            "cargo test --features etcd l7_1_"
        );
    }

    #[test]
    fn every_claim_on_sqlite_alone_says_why() {
        let alone: Vec<&str> = CLAIMS
            .iter()
            .filter(|claim| {
                claim.on(Track::Sqlite)
                    && !claim.on(Track::Postgres)
                    && !claim.on(Track::PostgresSql)
            })
            .map(|claim| claim.id)
            .collect();
        let said: Vec<&str> = ONLY_ON_SQLITE.iter().map(|(id, _)| *id).collect();
        assert_eq!(
            said, alone,
            "ONLY_ON_SQLITE must name, in the catalogue's order, each claim on SQLite and on no \
             server track"
        );
    }
}
