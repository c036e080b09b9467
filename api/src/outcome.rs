//! What a successful `apply` returns: applied now, or replayed.

use std::fmt;

/// What a successful `apply` returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The delta was applied now; `result` is the new value.
    Applied {
        /// The value after this request.
        result: i64,
    },
    /// The request was applied before; `result` is what that first apply
    /// returned. Nothing changed now.
    Replayed {
        /// The result stored with the original request.
        result: i64,
    },
}

impl Outcome {
    /// The result, applied or replayed.
    pub fn result(self) -> i64 {
        match self {
            Outcome::Applied { result } | Outcome::Replayed { result } => result,
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Applied { result } => write!(f, "applied, result {result}"),
            Outcome::Replayed { result } => write!(f, "replayed, original result {result}"),
        }
    }
}
