//! The outcomes a claim expects, spelled the way the destination's answers
//! read ([`crate::describe`]), for the scenes and the graded tests alike.

pub use crate::facts::{answer, install_answer, records_fact, refusal, state_fact};
use crate::{LabError, Outcome, Record, describe, describe_error};

/// What a successful install reads.
pub const INSTALLED: &str = "installed";

/// How an install's result reads.
pub fn describe_install(result: &Result<(), LabError>) -> String {
    match result {
        Ok(()) => INSTALLED.to_owned(),
        Err(error) => describe_error(error),
    }
}

/// A record as the observer prints it.
pub fn rec(resource: &str, request_id: &str, delta: i64, result: i64, generation: i64) -> String {
    Record {
        resource: resource.to_owned(),
        request_id: request_id.to_owned(),
        delta,
        result,
        generation,
    }
    .to_string()
}

/// A list of records as a check compares it.
pub fn list(items: &[String]) -> String {
    if items.is_empty() {
        "no records".to_owned()
    } else {
        items.join("; ")
    }
}

/// Applied now, with the new value `result`.
pub fn applied(result: i64) -> String {
    Outcome::Applied { result }.to_string()
}

/// Replayed, with the original `result`.
pub fn replayed(result: i64) -> String {
    Outcome::Replayed { result }.to_string()
}

/// Refused with `error`.
pub fn rejected(error: LabError) -> String {
    describe_error(&error)
}

/// Refused as stale.
pub fn stale(presented: i64, installed: i64) -> String {
    rejected(LabError::Stale {
        presented,
        installed,
    })
}

/// Refused as never issued.
pub fn never_issued(presented: i64, installed: i64) -> String {
    rejected(LabError::NeverIssued {
        presented,
        installed,
    })
}

/// An install refused as not higher.
pub fn not_higher(requested: i64, installed: i64) -> String {
    rejected(LabError::NotHigher {
        requested,
        installed,
    })
}

/// A request id reused with another delta.
pub fn conflict(request_id: &str, recorded_delta: i64, presented_delta: i64) -> String {
    rejected(LabError::Conflict {
        request_id: request_id.to_owned(),
        recorded_delta,
        presented_delta,
    })
}

/// Another connection holds the lock.
pub fn contention() -> String {
    rejected(LabError::Contention)
}

/// What [`super::probe_and_install`] must see while the write lock is held.
pub fn locked_out() -> String {
    format!("install: {}", contention())
}

/// What [`super::probe_and_install`] saw when the install got in.
pub fn let_in() -> String {
    format!("install: {INSTALLED}")
}

/// How an apply reads when the fault between its two writes stopped it
/// ([`crate::checkpoint::between_writes`]).
pub fn faulted() -> String {
    rejected(LabError::InjectedFault(crate::checkpoint::BETWEEN_WRITES))
}

/// Whether the words of every kind of answer read back as the answer they
/// print ([`crate::claims::facts::words`]): what lets `cargo xtask premises`,
/// which has only the printed failures, check the facts a hint was chosen
/// on. A graded failure checks this first (`tests/lab/support.rs`), so a
/// reader that drifted from the answers stops every failure with a message
/// about the harness.
///
/// # Errors
///
/// The first answer whose words read back as another, with both.
pub fn reads_back() -> Result<(), String> {
    use crate::claims::facts::words;
    let applies = [
        Ok(Outcome::Applied { result: -12 }),
        Ok(Outcome::Replayed { result: 10 }),
        Err(LabError::Stale {
            presented: 9,
            installed: 10,
        }),
        Err(LabError::NeverIssued {
            presented: 11,
            installed: 10,
        }),
        Err(LabError::Conflict {
            request_id: "r; 1 (x)".to_owned(),
            recorded_delta: 5,
            presented_delta: 6,
        }),
        Err(LabError::UnknownResource("fund-Z".to_owned())),
        Err(LabError::EmptyRequestId),
        Err(LabError::GenerationBelowOne(0)),
        Err(LabError::RequestIdTooLong),
        Err(LabError::Overflow {
            value: i64::MAX,
            delta: 1,
        }),
        Err(LabError::Contention),
        Err(LabError::SerializationFailure),
        Err(LabError::NotAllowed("CREATE TRIGGER".to_owned())),
        Err(LabError::InjectedFault(crate::checkpoint::BETWEEN_WRITES)),
        Err(LabError::NotImplemented {
            function: "apply",
            file: "exercises/apply.rs",
        }),
        Err(LabError::Panicked {
            function: "apply",
            message: "boom (at exercises/apply.rs:3:5)".to_owned(),
        }),
    ];
    let installs = [
        Ok(()),
        Err(LabError::NotHigher {
            requested: 2,
            installed: 3,
        }),
    ];
    let printed = applies
        .iter()
        .map(|result| (describe(result), answer(result)))
        .chain(
            installs
                .iter()
                .map(|result| (describe_install(result), install_answer(result))),
        );
    for (words, answer) in printed {
        let read = words::answer(&words);
        if read != answer {
            return Err(format!("{words:?} reads as {read:?}, not {answer:?}"));
        }
    }
    Ok(())
}
