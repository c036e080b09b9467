//! What the watch screen offers besides the next failing claim: `s`, the
//! reference's lines for a lesson at full marks beside the learner's, with
//! the pitfalls its claims catch ([`crate::learner::explain`]); and `x`, one exercise
//! file back to its stub after a `y` ([`crate::learner::reset`]).
//!
//! Kept apart from `watch`, which draws the screen and owns the loop: this
//! is the state of those two views and what each key does in them.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::engine::score::Score;
use crate::learner::explain;
use crate::learner::reference;
use crate::learner::reset;
use lab_claims::{LESSONS, Track};

/// What the screen shows below the bars.
#[derive(Debug, Clone, PartialEq, Eq)]
enum View {
    /// The next failing claim (the watch screen as it always was).
    Next,
    /// The explanation of `full[index]`, scrolled down by `scroll` lines.
    Explain { index: usize, scroll: usize },
    /// Which file to reset?
    Choose,
    /// Reset this file? y/N.
    Confirm(&'static str),
}

/// What a key asks of the watch loop.
#[derive(Debug, PartialEq, Eq)]
pub enum Action {
    /// Draw the screen again.
    Draw,
    /// Not a key of these views: the loop decides.
    Pass,
}

/// The two offers of one run's screen, and which view is up.
pub struct Extras {
    checkout: PathBuf,
    /// The lessons at full marks, track by track, in order.
    full: Vec<(Track, &'static str)>,
    /// The lesson `s` shows first: the one that reached full marks in this
    /// run, or else the last at full marks on the track being worked on.
    offered: Option<usize>,
    /// Whether the offered lesson reached full marks in this run.
    newly: bool,
    /// The exercise files of the graded tracks.
    files: Vec<&'static str>,
    view: View,
    /// What the last reset did, until the next run's screen is drawn.
    pub notice: Option<String>,
}

impl Extras {
    /// The offers of a run scored as `score`, after a run that had
    /// `before` at full marks (`None` for the first run: nothing is new).
    pub fn new(checkout: &Path, score: Option<&Score>, before: Option<&[(Track, &str)]>) -> Extras {
        let mut full = Vec::new();
        let mut files: Vec<&'static str> = Vec::new();
        let mut working_on = None;
        for track in score
            .map(|score| score.tracks.as_slice())
            .unwrap_or_default()
        {
            for lesson in explain::full_lessons(track) {
                full.push((track.track, lesson));
            }
            if working_on.is_none() {
                working_on = track
                    .first_not_passing()
                    .map(|claim| (track.track, claim.claim.lesson().id));
            }
            for (_, file) in reference::files(track.track) {
                if let Some(file) = reset::files().find(|known| *known == file) {
                    if !files.contains(&file) {
                        files.push(file);
                    }
                }
            }
        }
        let new = before.and_then(|before| {
            full.iter()
                .position(|(track, lesson)| !before.contains(&(*track, *lesson)))
        });
        // Else the last lesson at full marks before the one being worked
        // on, on its track; with nothing left to work on, the last of all.
        let order = |lesson: &str| LESSONS.iter().position(|known| known.id == lesson);
        let last = match working_on {
            Some((track, lesson)) => full
                .iter()
                .rposition(|(on, full)| *on == track && order(full) < order(lesson)),
            None => full.len().checked_sub(1),
        };
        Extras {
            checkout: checkout.to_owned(),
            offered: new.or(last),
            newly: new.is_some(),
            full,
            files,
            view: View::Next,
            notice: None,
        }
    }

    /// The lessons at full marks, for the next run's [`Extras::new`].
    pub fn full(&self) -> Vec<(Track, &'static str)> {
        self.full.clone()
    }

    /// Whether the screen shows the next failing claim (and its hint).
    pub fn shows_next(&self) -> bool {
        self.view == View::Next
    }

    /// A line above the next claim: what the last reset did, and a lesson
    /// that has just reached full marks.
    pub fn banner(&self) -> String {
        let mut out = String::new();
        if let Some(notice) = &self.notice {
            let _ = writeln!(out, "\n{notice}");
        }
        if let (true, Some((track, lesson))) = (self.newly, self.offered_lesson()) {
            let _ = writeln!(
                out,
                "\n{lesson} is at full marks on {} now: [s] shows how the reference does it, \
                 beside yours, and the mistakes its claims catch",
                track.name()
            );
        }
        out
    }

    fn offered_lesson(&self) -> Option<(Track, &'static str)> {
        self.full.get(self.offered?).copied()
    }

    /// Whether the screen asks a question, which any key but its answers
    /// cancels: the loop's own keys (`r`, `q`) are not offered then.
    pub fn asks(&self) -> bool {
        matches!(self.view, View::Choose | View::Confirm(_))
    }

    /// The keys line's part for these views.
    pub fn keys(&self) -> String {
        match &self.view {
            View::Next => {
                let see = match self.offered_lesson() {
                    Some((_, lesson)) => format!("[s] the reference for {lesson}  "),
                    None => String::new(),
                };
                format!("{see}[x] reset a file  ")
            }
            View::Explain { .. } => {
                let more = if self.full.len() > 1 {
                    "[s] next lesson  "
                } else {
                    ""
                };
                format!("{more}[j/k] scroll  [b] back  ")
            }
            View::Choose | View::Confirm(_) => "any other key: nothing changes  ".to_owned(),
        }
    }

    /// The text below the bars when the view is not the next claim's, for
    /// a terminal `width` columns wide; `None` in that view. The second
    /// value tells whether the bars should give way.
    pub fn text(&self, width: Option<usize>) -> Option<(String, bool)> {
        match &self.view {
            View::Next => None,
            View::Explain { index, scroll } => {
                let (track, lesson) = self.full.get(*index)?;
                let lesson = explain::lesson(lesson)?;
                let text = explain::render(&self.checkout, lesson, *track, width);
                let shown: Vec<&str> = text.lines().skip(*scroll).collect();
                Some((shown.join("\n"), true))
            }
            View::Choose => {
                let mut out = String::from(
                    "\nReset which file to its stub? Yours is kept beside it, as FILE.bak:\n",
                );
                for (index, file) in self.files.iter().enumerate() {
                    let _ = writeln!(out, "  [{}] {file}", index + 1);
                }
                Some((out, false))
            }
            View::Confirm(file) => {
                let backup = reset::backup_path(&self.checkout.join(file));
                Some((
                    format!(
                        "\nReset {file} to its stub? Yours is kept as {}. [y/N]",
                        reset::shown(&self.checkout, &backup)
                    ),
                    false,
                ))
            }
        }
    }

    /// What `key` does in these views.
    pub fn key(&mut self, key: u8) -> Action {
        match (self.view.clone(), key) {
            // Ctrl-C and Ctrl-D quit from every view.
            (_, 3 | 4) => Action::Pass,
            (View::Choose, b'1'..=b'9') => {
                self.view = match self.files.get(usize::from(key - b'1')) {
                    Some(file) => View::Confirm(file),
                    None => View::Next,
                };
                Action::Draw
            }
            (View::Confirm(file), b'y' | b'Y') => {
                self.notice = Some(match reset::reset(&self.checkout, file) {
                    Ok(reset::Done::AlreadyStub) => format!("{file} is the stub already"),
                    Ok(reset::Done::Reset(backup)) => format!(
                        "{file} is the stub again; your version is in {}",
                        reset::shown(&self.checkout, &backup)
                    ),
                    Err(error) => error,
                });
                self.view = View::Next;
                Action::Draw
            }
            (View::Choose | View::Confirm(_), _) => {
                self.notice = Some("nothing was reset".to_owned());
                self.view = View::Next;
                Action::Draw
            }
            (_, b'x' | b'X') => {
                self.view = View::Choose;
                Action::Draw
            }
            (View::Next, b's' | b'S') => match self.offered {
                Some(index) => {
                    self.view = View::Explain { index, scroll: 0 };
                    Action::Draw
                }
                None => Action::Pass,
            },
            (View::Explain { index, .. }, b's' | b'S') => {
                self.view = View::Explain {
                    index: (index + 1) % self.full.len().max(1),
                    scroll: 0,
                };
                Action::Draw
            }
            (View::Explain { index, scroll }, b'j' | b'J' | b' ') => {
                self.view = View::Explain {
                    index,
                    scroll: scroll + 10,
                };
                Action::Draw
            }
            (View::Explain { index, scroll }, b'k' | b'K') => {
                self.view = View::Explain {
                    index,
                    scroll: scroll.saturating_sub(10),
                };
                Action::Draw
            }
            (View::Explain { .. }, b'b' | b'B' | 27) => {
                self.view = View::Next;
                Action::Draw
            }
            _ => Action::Pass,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::score::{ClaimScore, Status, TrackScore};

    /// A SQLite score where the claims of the lessons `passing` pass and
    /// every other fails.
    fn score(passing: &[&str]) -> Score {
        let claims = lab_claims::CLAIMS
            .iter()
            .filter(|claim| claim.on(Track::Sqlite))
            .map(|claim| {
                let pass = passing.contains(&claim.lesson().id);
                ClaimScore {
                    claim,
                    status: if pass { Status::Pass } else { Status::Fail },
                    earned: if pass { claim.points } else { 0 },
                    tests: Vec::new(),
                    failed: Vec::new(),
                    missing: Vec::new(),
                    first_failure: None,
                    never_ran: None,
                }
            })
            .collect();
        Score {
            tracks: vec![TrackScore {
                track: Track::Sqlite,
                claims,
            }],
        }
    }

    #[test]
    fn s_offers_the_lesson_just_passed_or_the_last_before_the_next_claim() {
        let root = crate::engine::checkout::repository();
        // L1, L2 and L5 pass; L3 is next: L2 is offered, nothing is new.
        let first = Extras::new(&root, Some(&score(&["L1", "L2", "L5"])), None);
        assert_eq!(first.offered_lesson(), Some((Track::Sqlite, "L2")));
        assert!(first.banner().is_empty());
        assert!(
            first
                .keys()
                .starts_with("[s] the reference for L2  [x] reset a file")
        );
        // L3 passes in the next run: it is offered, and said.
        let next = Extras::new(
            &root,
            Some(&score(&["L1", "L2", "L3", "L5"])),
            Some(&first.full()),
        );
        assert_eq!(next.offered_lesson(), Some((Track::Sqlite, "L3")));
        assert!(
            next.banner()
                .contains("L3 is at full marks on SQLite now: [s]")
        );
        // Nothing at full marks: no `s`.
        let none = Extras::new(&root, Some(&score(&[])), None);
        assert!(none.keys().starts_with("[x] reset a file"));
    }

    #[test]
    fn s_shows_the_explanation_and_b_goes_back() {
        let root = crate::engine::checkout::repository();
        let mut extras = Extras::new(&root, Some(&score(&["L1", "L2"])), None);
        assert_eq!(extras.text(Some(120)), None);
        assert_eq!(extras.key(b's'), Action::Draw);
        let (text, alone) = extras.text(Some(120)).unwrap();
        assert!(
            alone && text.starts_with("L2 An explicit contract"),
            "{text}"
        );
        // s again: the next lesson at full marks.
        extras.key(b's');
        assert!(extras.text(None).unwrap().0.starts_with("L1 "));
        assert_eq!(extras.key(b'b'), Action::Draw);
        assert!(extras.shows_next());
        // Keys of the loop pass through.
        assert_eq!(extras.key(b'q'), Action::Pass);
        assert_eq!(extras.key(b'h'), Action::Pass);
    }

    #[test]
    fn x_asks_which_file_then_y_before_it_resets() {
        let root = crate::engine::checkout::repository();
        let mut extras = Extras::new(&root, Some(&score(&[])), None);
        extras.key(b'x');
        let (text, _) = extras.text(None).unwrap();
        assert!(
            text.contains("[1] exercises/install_generation.rs"),
            "{text}"
        );
        assert!(text.contains("[2] exercises/apply.rs"), "{text}");
        extras.key(b'2');
        let (text, _) = extras.text(None).unwrap();
        assert!(
            text.contains("Reset exercises/apply.rs to its stub?"),
            "{text}"
        );
        // Any key but y: nothing changes (the reset itself is reset.rs's test).
        extras.key(b'n');
        assert!(extras.shows_next());
        assert_eq!(extras.notice.as_deref(), Some("nothing was reset"));
    }
}
