//! The transcript: what each role did and what came of it, one line each, in
//! plain text. It carries no temporary paths and no timings, so the same code
//! always tells the same story, and the tests snapshot it.

use std::cell::RefCell;
use std::fmt;
use std::rc::Rc;

use crate::claims::Lesson;
use crate::{LabError, describe_error};

/// A growing list of lines. Clones share the list, so a checkpoint hook can
/// write into the story while the destination is paused.
#[derive(Debug, Clone, Default)]
pub struct Transcript {
    /// The lines so far.
    lines: Rc<RefCell<Vec<String>>>,
}

impl Transcript {
    /// An empty transcript.
    pub fn new() -> Transcript {
        Transcript::default()
    }

    /// Opens a lesson with its id and title.
    pub fn lesson(&self, lesson: &Lesson) {
        let mut lines = self.lines.borrow_mut();
        if !lines.is_empty() {
            lines.push(String::new());
        }
        lines.push(format!("{} {}", lesson.id, lesson.title));
    }

    /// A line of prose that explains what comes next.
    pub fn note(&self, text: impl fmt::Display) {
        self.lines.borrow_mut().push(format!("  {text}"));
    }

    /// What `role` did under `claim`, and what came of it.
    pub fn line(&self, claim: &str, role: &str, text: impl fmt::Display) {
        self.lines
            .borrow_mut()
            .push(format!("  [{claim}] {role:<11}{text}"));
    }

    /// The whole transcript as text, one line each, ending in a newline.
    pub fn render(&self) -> String {
        let mut text = self.lines.borrow().join("\n");
        text.push('\n');
        text
    }
}

/// Why a lesson stopped early: an unfinished exercise, or the harness failed.
#[derive(Debug)]
pub struct Halt(pub String);

impl fmt::Display for Halt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<LabError> for Halt {
    fn from(error: LabError) -> Self {
        Halt(describe_error(&error))
    }
}

/// A resource's records as the observer reads them out.
pub(crate) fn records_line(records: &[crate::Record]) -> String {
    if records.is_empty() {
        return "no records".to_owned();
    }
    let listed: Vec<String> = records
        .iter()
        .map(|r| {
            format!(
                "{} ({:+}, result {}, generation {})",
                r.request_id, r.delta, r.result, r.generation
            )
        })
        .collect();
    format!("records {}", listed.join(", "))
}
