//! The state of a run: what its screen says (the bars, what kept it from
//! scoring, the next failing claim and its step), its hint and how far the
//! learner has asked into it, and the views of a lesson at full marks.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use super::extras::Extras;
use crate::engine::score::{ClaimScore, Graded, Status, TrackScore};
use crate::learner::scorecard;
use lab_claims::{LESSONS, Track, hints};

/// One run's state: what its screen says, and how far the learner has
/// asked into its hint.
pub(super) struct State {
    /// The bars, and what kept the run from scoring (above the claim).
    pub(super) text: String,
    /// The next failing claim, or that every claim passes.
    pub(super) next: String,
    /// The last line's end: what is watched, how long the run took.
    pub(super) keys: String,
    /// The next failing claim's hint and its track, if a claim fails.
    pub(super) hint: Option<hints::Hint>,
    /// The hint's level shown, 1 to 3: where `cargo grade --hint` (or an
    /// earlier run of this screen) left it for the claim and the hint.
    pub(super) level: usize,
    /// The claim whose hint it is.
    claim: Option<&'static str>,
    passed: bool,
    /// The run's score, if it ran.
    pub(super) score: Option<crate::engine::score::Score>,
    /// The reference for a lesson at full marks, and a reset.
    pub(super) extras: Extras,
}

impl State {
    pub(super) fn new(
        graded: Result<Graded, String>,
        folder: &str,
        took: Duration,
        report: Option<&Path>,
    ) -> State {
        let (mut text, mut next_text) = (String::new(), String::new());
        let (mut hint, mut passed, mut score) = (None, false, None);
        let mut claim_id = None;
        match graded {
            Err(error) => {
                let _ = writeln!(text, "the grader could not run: {error}");
            }
            Ok(graded) => {
                passed = graded.score.full_marks();
                for track in &graded.score.tracks {
                    text.push_str(&bars(track, graded.solutions));
                }
                if let Some(why) = &graded.unsandboxed {
                    let _ = writeln!(text, "\ngraded WITHOUT the sandbox ({why})");
                }
                if let Some(problem) = &graded.problem {
                    // This screen grades again on every save.
                    let problem =
                        problem.replace(scorecard::AGAIN, "then save: this screen grades again");
                    let _ = writeln!(text, "\n{problem}");
                }
                let next = graded
                    .score
                    .tracks
                    .iter()
                    .find_map(|track| Some((track.track, track.first_not_passing()?)));
                match next {
                    Some((track, claim)) => {
                        let (told, found) = next_claim(track, claim);
                        next_text.push_str(&told);
                        hint = found;
                        claim_id = Some(claim.claim.id);
                    }
                    None => {
                        for track in &graded.score.tracks {
                            let _ = writeln!(
                                next_text,
                                "\n{}: {}",
                                track.track.name(),
                                scorecard::all_pass(track)
                            );
                        }
                    }
                }
                score = Some(graded.score);
            }
        }
        if let Some(page) = report {
            let _ = writeln!(
                next_text,
                "\n{}: {}",
                scorecard::REPORT_LINE,
                page.display()
            );
        }
        let keys = format!("watching {folder}/, last run {:.1} s", took.as_secs_f64());
        State {
            text,
            next: next_text,
            keys,
            level: hint.map_or(1, |hint: hints::Hint| {
                crate::learner::hint::shown_level(claim_id, hint.id).clamp(1, 3)
            }),
            hint,
            claim: claim_id,
            passed,
            score,
            extras: Extras::new(Path::new("."), None, None),
        }
    }

    pub(super) fn passed(&self) -> bool {
        self.passed
    }

    pub(super) fn next_hint(&mut self) {
        if let Some(hint) = self.hint.filter(|_| self.level < 3) {
            self.level += 1;
            crate::learner::hint::remember_level(self.claim, hint.id, self.level);
        }
    }
}

/// A bar per lesson of one track: points earned of the lesson's points.
fn bars(track: &TrackScore, solutions: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {}    points {}/{}",
        track.track.name(),
        scorecard::implementation(track.track, solutions),
        track.earned(),
        track.total()
    );
    for lesson in LESSONS {
        let claims: Vec<&ClaimScore> = track
            .claims
            .iter()
            .filter(|claim| claim.claim.lesson().id == lesson.id)
            .collect();
        if claims.is_empty() {
            continue;
        }
        let total: u32 = claims.iter().map(|claim| claim.claim.points).sum();
        let earned: u32 = claims.iter().map(|claim| claim.earned).sum();
        let passing = claims
            .iter()
            .filter(|claim| claim.status == Status::Pass)
            .count();
        crate::learner::bar::lesson_line(
            &mut out,
            &lesson,
            (earned, total),
            (passing, claims.len()),
        );
    }
    out
}

/// The next failing claim: its statement, the step that failed as the test
/// told it, and the hint that step asked for (level 1 is in the test's own
/// message); no hint for a stub, which has nothing to hint at yet.
fn next_claim(track: Track, claim: &ClaimScore) -> (String, Option<hints::Hint>) {
    let mut out = String::new();
    let statement = claim.claim;
    let _ = writeln!(
        out,
        "\nnext: {} {} ({})",
        statement.id,
        statement.text,
        track.name()
    );
    let mut hint = hints::for_claim(statement, track);
    match &claim.first_failure {
        Some((test, failure)) => {
            let _ = writeln!(out, "  test:     {test}");
            let mut hinted = false;
            for line in failure.message.lines().map(str::trim_end) {
                let trimmed = line.trim_start();
                if trimmed.is_empty() {
                    continue;
                }
                // The heading repeats the statement; a stub's one line
                // says what to open instead.
                if trimmed.starts_with("claim ") {
                    if let Some((_, said)) = trimmed.split_once(": ") {
                        if said != statement.text {
                            let _ = writeln!(out, "  {said}");
                        }
                    }
                    continue;
                }
                if let Some(id) = hint_id(trimmed) {
                    if let Some(found) = hints::by_id(id, track) {
                        hint = found;
                    }
                    continue;
                }
                hinted |= trimmed.starts_with("hint:");
                let _ = writeln!(out, "  {trimmed}");
            }
            if failure.message.contains(" is not implemented yet: open ") {
                // A stub: the claim's hint would speak of code not written.
                let _ = writeln!(out, "  write it, save, and this screen grades again");
                return (out, None);
            }
            if !hinted {
                let _ = writeln!(out, "  hint:     {}", hint.level(1));
            }
        }
        None => match claim.never_ran {
            // The problem above says why; a hint would speak of code the
            // tests never ran.
            Some(why) => {
                let _ = writeln!(out, "  {}", why.no_result());
                return (out, None);
            }
            None => {
                let _ = writeln!(
                    out,
                    "  no result yet: its tests never reported\n  hint:     {}",
                    hint.level(1)
                );
            }
        },
    }
    (out, Some(hint))
}

/// The hint id at the end of a failure's `more:` line (`[hint record-missing]`).
fn hint_id(line: &str) -> Option<&str> {
    let (_, tail) = line.rsplit_once("[hint ")?;
    tail.strip_suffix(']')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hint_id_is_read_from_the_more_line() {
        assert_eq!(
            hint_id("more:     cargo grade --hint L4.9   [hint stale-replayed]"),
            Some("stale-replayed")
        );
        assert_eq!(hint_id("got:      applied"), None);
    }
}
