//! From test verdicts to claims and points, by the catalogue in
//! `lab_claims`: a test belongs to the claim its name starts with,
//! and a claim passes only when it has at least one result and every one of
//! its tests passed. A test that never reported (the run timed out, crashed
//! or exited first) is not a pass.
//!
//! Each track is scored on its own: a claim's result on a track comes from
//! that track's tests only (`postgres::…` for PostgreSQL), and a track scores
//! only the claims checked on it. The SQLite track is always graded; the
//! PostgreSQL track when the grader is given `--postgres`, the etcd track
//! when it is given `--etcd` (either, or both).
//!
//! A test's verdict is the one it sent on the verdict channel
//! ([`Verdicts`]); what it printed is only shown, as its output.

use lab_claims::{CLAIMS, Claim, Track};

use crate::engine::lesson_or_claim::Part;
use crate::engine::libtest::{Failure, TestOutput, Verdict};
use crate::engine::verdicts::Verdicts;

/// This checkout graded: what the scorecard prints, what `--watch` shows
/// and what `--gradescope` writes.
pub struct Graded {
    /// The claims, track by track.
    pub score: Score,
    /// What kept the run from scoring every claim (a compile error, a
    /// timeout), said once for every track.
    pub problem: Option<String>,
    /// Why the run went without the sandbox, if it did.
    pub unsandboxed: Option<String>,
    /// What the review would put on hold in a class.
    pub held: Vec<crate::engine::review::Flag>,
    /// Whether the reference was graded (`--solutions`), not the exercises.
    pub solutions: bool,
}

/// The tracks graded: SQLite always, and the server tracks the command
/// line names (`--postgres`, `--etcd`, `--postgres-sql`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tracks {
    /// The PostgreSQL track (`--postgres`).
    pub postgres: bool,
    /// The etcd track (`--etcd`).
    pub etcd: bool,
    /// The SQL functions' track, lesson 8 (`--postgres-sql`).
    pub postgres_sql: bool,
}

impl Tracks {
    /// Grades `track` too (SQLite is always graded).
    pub fn add(&mut self, track: Track) {
        match track {
            Track::Sqlite => {}
            Track::Postgres => self.postgres = true,
            Track::Etcd => self.etcd = true,
            Track::PostgresSql => self.postgres_sql = true,
        }
    }

    /// The tracks graded, in the order they are reported: SQLite,
    /// PostgreSQL, etcd, then the SQL functions.
    pub fn list(self) -> &'static [Track] {
        use Track::{Etcd as E, Postgres as P, PostgresSql as Q, Sqlite as S};
        const BY_FLAGS: [&[Track]; 8] = [
            &[S],
            &[S, P],
            &[S, E],
            &[S, P, E],
            &[S, Q],
            &[S, P, Q],
            &[S, E, Q],
            &[S, P, E, Q],
        ];
        let flag = |on: bool, bit: usize| usize::from(on) << bit;
        BY_FLAGS[flag(self.postgres, 0) | flag(self.etcd, 1) | flag(self.postgres_sql, 2)]
    }

    /// Whether `track` is graded.
    pub fn has(self, track: Track) -> bool {
        self.list().contains(&track)
    }
}

/// What one run grades: its tracks, and on them every claim or, with
/// `--lesson` or `--claim`, one part's (see [`crate::engine::lesson_or_claim`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Scope {
    /// The tracks graded.
    pub tracks: Tracks,
    /// The part graded, if only one.
    pub part: Option<Part>,
}

impl Scope {
    /// Whether `claim` is scored: every claim, or the part's.
    pub fn claim_graded(self, claim: &Claim) -> bool {
        self.part.is_none_or(|part| part.holds(claim))
    }

    /// Whether the test `name` is run: a test of a claim scored here, on a
    /// track graded here.
    pub fn test_graded(self, name: &str) -> bool {
        lab_claims::claim_of_test(name).is_some_and(|claim| self.claim_graded(claim))
            && self.tracks.has(Track::of_test(name))
    }
}

/// How one claim came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Every test of the claim passed.
    Pass,
    /// At least one of its tests failed.
    Fail,
    /// None failed, but some never reported (or the suite never ran).
    NoResult,
}

/// One claim's result.
#[derive(Debug, Clone)]
pub struct ClaimScore {
    /// The claim, from the catalogue.
    pub claim: &'static Claim,
    /// How it came out.
    pub status: Status,
    /// Its points if it passed, else 0.
    pub earned: u32,
    /// Its tests on the track, as the test binary listed them.
    pub tests: Vec<String>,
    /// Its tests that failed.
    pub failed: Vec<String>,
    /// Its tests that never reported.
    pub missing: Vec<String>,
    /// The first failed test, with its message and output.
    pub first_failure: Option<(String, Failure)>,
    /// Why no test of the claim ran, when the suite never did.
    pub never_ran: Option<NeverRan>,
}

/// Why a suite never ran, so that no claim has a result: said in the
/// claim's place instead of "its tests never reported", which reads like a
/// hang.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NeverRan {
    /// The code did not compile.
    DidNotCompile,
    /// The build took longer than its limit and was stopped.
    BuildTimedOut,
    /// Nothing was built yet (a class's submission before its build).
    NotBuilt,
}

impl NeverRan {
    /// What happened, for a page about someone else's code (the class
    /// report, Gradescope's tests): lowercase, no period.
    pub fn what(self) -> &'static str {
        match self {
            NeverRan::DidNotCompile => "the code did not compile",
            NeverRan::BuildTimedOut => "the build was stopped before any test ran",
            NeverRan::NotBuilt => "nothing was built",
        }
    }

    /// What a claim without a result says on the learner's own screens
    /// (the scorecard, the watch mode), below the problem they print:
    /// lowercase, no period.
    pub fn no_result(self) -> &'static str {
        match self {
            NeverRan::DidNotCompile => {
                "no result: your code did not compile, see the compiler's message above"
            }
            NeverRan::BuildTimedOut => {
                "no result: the build was stopped before any test ran, see above"
            }
            NeverRan::NotBuilt => "no result: nothing was built",
        }
    }
}

/// A whole run: one score per graded track, in [`Tracks::list`]' order.
#[derive(Debug, Clone)]
pub struct Score {
    /// One entry per graded track.
    pub tracks: Vec<TrackScore>,
}

impl Score {
    /// Scores a run on every graded track. `listed` is what the test
    /// binary's `--list` printed, so a test that never reported is known to
    /// be missing. Without that list no claim can be shown complete, so none
    /// is passed.
    pub fn of_run(
        scope: Scope,
        listed: Option<&[String]>,
        verdicts: &Verdicts,
        run: &TestOutput,
    ) -> Score {
        Score {
            tracks: scope
                .tracks
                .list()
                .iter()
                .map(|&track| match listed {
                    Some(listed) => TrackScore::of_run(track, scope, listed, verdicts, run),
                    None => TrackScore::nothing(track, scope, None),
                })
                .collect(),
        }
    }

    /// The score of a suite that never ran, and why: every claim without a
    /// result.
    pub fn nothing(scope: Scope, why: NeverRan) -> Score {
        Score {
            tracks: scope
                .tracks
                .list()
                .iter()
                .map(|&track| TrackScore::nothing(track, scope, Some(why)))
                .collect(),
        }
    }

    /// Whether every graded claim passed on every graded track.
    pub fn full_marks(&self) -> bool {
        self.tracks.iter().all(TrackScore::full_marks)
    }

    /// Drops what the code under test printed or made its tests say: each
    /// failed test's message and output become [`WITHHELD`]. For a
    /// submission on hold, whose code may have read what it should not
    /// have, until an instructor has read what the review held: its
    /// verdicts and points stay, its words wait for the acceptance.
    pub fn withhold_output(&mut self) {
        let first_failures = self
            .tracks
            .iter_mut()
            .flat_map(|track| &mut track.claims)
            .filter_map(|claim| claim.first_failure.as_mut());
        for (_, failure) in first_failures {
            failure.message = WITHHELD.to_owned();
            failure.output.clear();
            failure.facts.clear();
            failure.reference.clear();
        }
    }
}

/// What a failed test of a submission on hold says in place of its own
/// message and output.
pub const WITHHELD: &str = "its message and output are not quoted while the submission is on \
                            hold for review (accepted, its report quotes them)";

/// One track's result, claim by claim in the catalogue's order.
#[derive(Debug, Clone)]
pub struct TrackScore {
    /// The destination the tests ran against.
    pub track: Track,
    /// One entry per claim checked on the track.
    pub claims: Vec<ClaimScore>,
}

impl TrackScore {
    /// Scores the claims checked on `track` from that track's tests alone.
    fn of_run(
        track: Track,
        scope: Scope,
        listed: &[String],
        verdicts: &Verdicts,
        run: &TestOutput,
    ) -> TrackScore {
        let names: Vec<&str> = listed
            .iter()
            .map(String::as_str)
            .filter(|name| Track::of_test(name) == track)
            .collect();
        let claims = CLAIMS
            .iter()
            .filter(|claim| claim.on(track) && scope.claim_graded(claim))
            .map(|claim| {
                let tests: Vec<String> = names
                    .iter()
                    .copied()
                    .filter(|name| {
                        lab_claims::claim_of_test(name).is_some_and(|c| c.id == claim.id)
                    })
                    .map(str::to_owned)
                    .collect();
                let (mut passed, mut failed, mut missing) = (0, Vec::new(), Vec::new());
                for name in &tests {
                    match verdicts.verdict(name) {
                        Some(Verdict::Passed) => passed += 1,
                        Some(Verdict::Failed) => failed.push(name.to_owned()),
                        Some(Verdict::Ignored) => {}
                        None => missing.push(name.to_owned()),
                    }
                }
                let status = if !failed.is_empty() {
                    Status::Fail
                } else if missing.is_empty() && passed > 0 {
                    Status::Pass
                } else {
                    Status::NoResult
                };
                let first_failure = failed.first().map(|name| {
                    // The message is the one the test sent; the output is
                    // what libtest printed for it, the learner's prints.
                    let section = run.section(name).unwrap_or_default();
                    let message = verdicts.message(name).unwrap_or_default();
                    let facts = verdicts.facts(name).unwrap_or_default().to_owned();
                    let reference = verdicts
                        .step(name)
                        .filter(|_| !facts.is_empty())
                        .and_then(|(ordinal, _)| {
                            crate::engine::reference_runs::find(name, ordinal, &facts)
                        })
                        .unwrap_or_default();
                    let failure = Failure {
                        facts,
                        reference,
                        ..Failure::sent(&section, message)
                    };
                    (name.clone(), failure)
                });
                ClaimScore {
                    claim,
                    status,
                    tests,
                    earned: if status == Status::Pass {
                        claim.points
                    } else {
                        0
                    },
                    failed,
                    missing,
                    first_failure,
                    never_ran: None,
                }
            })
            .collect();
        TrackScore { track, claims }
    }

    /// The track's score when its suite never ran (`why`, when known) or
    /// listed no test: every claim without a result.
    fn nothing(track: Track, scope: Scope, why: Option<NeverRan>) -> TrackScore {
        TrackScore {
            track,
            claims: CLAIMS
                .iter()
                .filter(|claim| claim.on(track) && scope.claim_graded(claim))
                .map(|claim| ClaimScore {
                    claim,
                    status: Status::NoResult,
                    earned: 0,
                    tests: Vec::new(),
                    failed: Vec::new(),
                    missing: Vec::new(),
                    first_failure: None,
                    never_ran: why,
                })
                .collect(),
        }
    }

    /// The points earned.
    pub fn earned(&self) -> u32 {
        self.claims.iter().map(|claim| claim.earned).sum()
    }

    /// The points there are on the track (in the part graded, with
    /// `--lesson` or `--claim`).
    pub fn total(&self) -> u32 {
        self.claims.iter().map(|claim| claim.claim.points).sum()
    }

    /// Whether every graded claim of the track passed. A claim worth 0 points (checked,
    /// not graded, like the load test) decides neither the exit status nor
    /// whether a mutant counts as caught: its verdict on a wrong
    /// implementation may depend on timing.
    pub fn full_marks(&self) -> bool {
        self.claims
            .iter()
            .filter(|claim| claim.claim.points > 0)
            .all(|claim| claim.status == Status::Pass)
    }

    /// The first graded claim (worth points) that did not pass, in the
    /// catalogue's order: what the learner fixes next.
    pub fn first_not_passing(&self) -> Option<&ClaimScore> {
        self.claims
            .iter()
            .find(|claim| claim.claim.points > 0 && claim.status != Status::Pass)
    }

    /// The claims worth 0 points (checked, not graded) that did not pass.
    pub fn ungraded_not_passing(&self) -> Vec<&ClaimScore> {
        self.claims
            .iter()
            .filter(|claim| claim.claim.points == 0 && claim.status != Status::Pass)
            .collect()
    }

    /// The ids of the claims that did not pass.
    pub fn not_passing(&self) -> Vec<&'static str> {
        self.claims
            .iter()
            .filter(|claim| claim.status != Status::Pass)
            .map(|claim| claim.claim.id)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn withholding_leaves_the_verdicts_and_drops_the_words() {
        let mut score = Score::nothing(Scope::default(), NeverRan::NotBuilt);
        let claim = &mut score.tracks[0].claims[0];
        claim.status = Status::Fail;
        claim.failed = vec!["l1_x".to_owned()];
        claim.first_failure = Some((
            "l1_x".to_owned(),
            Failure {
                message: "SECRET in a message".to_owned(),
                output: "SECRET printed".to_owned(),
                facts: String::new(),
                reference: String::new(),
            },
        ));
        score.withhold_output();
        let claim = &score.tracks[0].claims[0];
        let (test, failure) = claim.first_failure.as_ref().unwrap();
        assert_eq!((test.as_str(), claim.status), ("l1_x", Status::Fail));
        assert_eq!(failure.message, WITHHELD);
        assert!(failure.output.is_empty());
    }
}
