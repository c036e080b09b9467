//! `cargo grade --lesson L3` and `cargo grade --claim L3.2`: the scorecard
//! of one part of the lab, for a grading step that awards that part's
//! points (GitHub Classroom's command grader awards a step's `max-score`
//! when its command exits 0, see [`crate::instructor::classroom`]).
//!
//! A part is read with the command line, like the tracks, and graded as
//! part of the run's [`crate::engine::score::Scope`]: only its claims' tests are run
//! and only its claims are scored ([`crate::engine::score::Scope::claim_graded`]),
//! so `Points X/Y` is the part's. The exit status is the scorecard's: 0
//! exactly when every claim of the part worth points passes, so a claim
//! worth 0 points (L3.6, the load test) never makes a step unwinnable, and
//! its own step (`--claim L3.6`) always exits 0.

use lab_claims::{CLAIMS, Claim, LESSONS, Track};

/// One part of the lab.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// Every claim of a lesson (`--lesson L3`).
    Lesson(&'static str),
    /// One claim (`--claim L3.2`).
    Claim(&'static str),
}

impl Part {
    /// Reads `--lesson`'s value: a lesson's id, `L1` to `L8`.
    pub fn lesson(text: &str) -> Result<Part, String> {
        LESSONS
            .iter()
            .find(|lesson| lesson.id.eq_ignore_ascii_case(text))
            .map(|lesson| Part::Lesson(lesson.id))
            .ok_or_else(|| {
                let ids: Vec<&str> = LESSONS.iter().map(|lesson| lesson.id).collect();
                format!(
                    "--lesson takes a lesson's id ({}), not {text:?}",
                    ids.join(", ")
                )
            })
    }

    /// Reads `--claim`'s value: a claim's id, like `L3.2`.
    pub fn claim(text: &str) -> Result<Part, String> {
        CLAIMS
            .iter()
            .find(|claim| claim.id.eq_ignore_ascii_case(text))
            .map(|claim| Part::Claim(claim.id))
            .ok_or_else(|| {
                format!("--claim takes a claim's id, like L3.2 (`cargo grade --claims` lists them), not {text:?}")
            })
    }

    /// Whether `claim` belongs to the part.
    pub fn holds(self, claim: &Claim) -> bool {
        match self {
            Part::Lesson(id) => claim.lesson().id == id,
            Part::Claim(id) => claim.id == id,
        }
    }

    /// The part's id, `L3` or `L3.2`.
    pub fn id(self) -> &'static str {
        match self {
            Part::Lesson(id) | Part::Claim(id) => id,
        }
    }

    /// The points the part is worth on `tracks`.
    pub fn points_on(self, tracks: &[Track]) -> u32 {
        tracks
            .iter()
            .flat_map(|&track| {
                CLAIMS
                    .iter()
                    .filter(move |claim| claim.on(track) && self.holds(claim))
            })
            .map(|claim| claim.points)
            .sum()
    }

    /// Whether the part has a claim on one of `tracks`; if not, what to say.
    pub fn check_on(self, tracks: &[Track]) -> Result<(), String> {
        let on = |track: Track| CLAIMS.iter().any(|c| c.on(track) && self.holds(c));
        if tracks.iter().any(|&track| on(track)) {
            return Ok(());
        }
        let flags: Vec<&str> = Track::ALL
            .into_iter()
            .filter(|&track| on(track))
            .map(|track| track.grade_flag().trim_start())
            .collect();
        Err(format!(
            "{} has no claim on the tracks graded here; its track's flag: {}",
            self.id(),
            flags.join(" or ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_is_read_from_its_id() {
        assert_eq!(Part::lesson("l3"), Ok(Part::Lesson("L3")));
        assert_eq!(Part::claim("L3.2"), Ok(Part::Claim("L3.2")));
        assert!(Part::lesson("L9").is_err());
        assert!(Part::claim("L3.99").is_err());
    }

    #[test]
    fn a_lesson_holds_its_claims_only() {
        let l3 = Part::Lesson("L3");
        assert!(l3.holds(lab_claims::claim("L3.6").unwrap()));
        assert!(!l3.holds(lab_claims::claim("L4.1").unwrap()));
        let l3_1 = Part::Claim("L3.1");
        assert!(CLAIMS.iter().filter(|c| l3_1.holds(c)).count() == 1);
    }

    #[test]
    fn the_parts_points_add_up_to_the_tracks() {
        for track in Track::ALL {
            let by_lesson: u32 = LESSONS
                .iter()
                .map(|lesson| Part::Lesson(lesson.id).points_on(&[track]))
                .sum();
            let by_claim: u32 = CLAIMS
                .iter()
                .map(|claim| Part::Claim(claim.id).points_on(&[track]))
                .sum();
            assert_eq!(by_lesson, lab_claims::total_points_on(track));
            assert_eq!(by_claim, lab_claims::total_points_on(track));
        }
    }

    #[test]
    fn a_part_off_the_graded_tracks_names_its_flag() {
        let error = Part::Lesson("L7").check_on(&[Track::Sqlite]).unwrap_err();
        assert!(error.contains("--etcd"), "{error}");
        assert!(Part::Lesson("L3").check_on(&[Track::Sqlite]).is_ok());
    }
}
