//! The learner's functions as the harness calls them: a table of function
//! pointers. The harness never links the learner's crate. The program that
//! runs the lab (the graded test binary, `cargo run`, a worker process)
//! links it, and hands the harness its table
//! (`fencing_lab_exercises::IMPLEMENTATION`) before the first call; so a
//! save under `exercises/` rebuilds that crate and the program, never the
//! harness. Nothing here is of use to an exercise.

use crate::{Destination, LabError, Outcome};

/// The SQLite track's `install_generation`.
pub type InstallGeneration = fn(&mut Destination<'_>, &str, i64) -> Result<(), LabError>;
/// The SQLite track's `apply`.
pub type Apply = fn(&mut Destination<'_>, &str, i64, &str, i64) -> Result<Outcome, LabError>;

/// One implementation of the exercises: the learner's, or the reference.
/// Made with [`Implementation::new`] and the server tracks' `with_…`, so
/// that a crate built without a track this crate has (`cargo clippy
/// --workspace --features postgres` builds the reference on its own, with
/// no features) still makes one: its missing track's functions panic,
/// and no program of the lab ever calls them.
#[derive(Clone, Copy)]
pub struct Implementation {
    /// Which it is, in words, for the transcript's header.
    pub name: &'static str,
    /// `exercises/install_generation.rs`.
    pub install_generation: InstallGeneration,
    /// `exercises/apply.rs`.
    pub apply: Apply,
    /// `exercises/postgres/`.
    #[cfg(feature = "postgres")]
    pub postgres: Postgres,
    /// `exercises/etcd/worker.rs`.
    #[cfg(feature = "etcd")]
    pub etcd_work: EtcdWork,
}

/// The etcd track's `work`.
#[cfg(feature = "etcd")]
pub type EtcdWork =
    fn(&mut crate::etcd::Worker<'_>, &crate::etcd::Job) -> Result<Outcome, LabError>;

impl Implementation {
    /// The SQLite track's two functions, and no server track's.
    pub const fn new(
        name: &'static str,
        install_generation: InstallGeneration,
        apply: Apply,
    ) -> Implementation {
        Implementation {
            name,
            install_generation,
            apply,
            #[cfg(feature = "postgres")]
            postgres: Postgres {
                install_generation: |_, _, _| not_built("postgres"),
                apply: |_, _, _, _, _| not_built("postgres"),
                contract: "",
            },
            #[cfg(feature = "etcd")]
            etcd_work: |_, _| not_built("etcd"),
        }
    }

    /// With the PostgreSQL track's functions.
    #[cfg(feature = "postgres")]
    pub const fn with_postgres(mut self, postgres: Postgres) -> Implementation {
        self.postgres = postgres;
        self
    }

    /// With the etcd track's worker.
    #[cfg(feature = "etcd")]
    pub const fn with_etcd(mut self, work: EtcdWork) -> Implementation {
        self.etcd_work = work;
        self
    }
}

/// A track's function in a table made without that track.
#[cfg(any(feature = "postgres", feature = "etcd"))]
fn not_built<T>(track: &str) -> T {
    panic!("this implementation was built without the feature {track}, which the API has")
}

/// The PostgreSQL track's exercises.
#[cfg(feature = "postgres")]
#[derive(Clone, Copy)]
pub struct Postgres {
    /// `exercises/postgres/install_generation.rs`.
    pub install_generation:
        fn(&mut crate::pg::PgDestination<'_>, &str, i64) -> Result<(), LabError>,
    /// `exercises/postgres/apply.rs`.
    pub apply:
        fn(&mut crate::pg::PgDestination<'_>, &str, i64, &str, i64) -> Result<Outcome, LabError>,
    /// `exercises/postgres/contract.sql`: lesson 8's two SQL functions, the
    /// file's text.
    pub contract: &'static str,
}

/// The table of the crate it is written in (the learner's, or the
/// reference's), whose modules are laid out alike: `install_generation`
/// and `apply`, and with their features `postgres` (with `CONTRACT`) and
/// `etcd`. The crate's own features decide which tracks the table holds.
#[doc(hidden)]
#[macro_export]
macro_rules! implementation_table {
    ($name:expr) => {{
        let table = $crate::implementation::Implementation::new(
            $name,
            install_generation::install_generation,
            apply::apply,
        );
        #[cfg(feature = "postgres")]
        let table = table.with_postgres($crate::implementation::Postgres {
            install_generation: postgres::install_generation,
            apply: postgres::apply,
            contract: postgres::CONTRACT,
        });
        #[cfg(feature = "etcd")]
        let table = table.with_etcd(etcd::work);
        table
    }};
}
