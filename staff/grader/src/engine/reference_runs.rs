//! The reference's runs of the steps of every test where more than one
//! connection acts, as the graded suite recorded them against the
//! reference (`staff/grader/reference-runs.tsv`, written and checked by
//! `cargo xtask reference-runs`): a failure's report draws the learner's
//! run beside the reference's run of the same step.
//!
//! The file holds, per test, its last run (the scene's events to its end)
//! and each step's length in it: a step's run is the start of the last
//! one. A failure's picture starts with a call (its last call, or the
//! scene from its first call), or on the etcd track with what a worker, the
//! test or etcd did; the reference's part beside it starts with the same
//! event by the one of the same name, and ends where the
//! twin step ends. The scenes are code, so the reference and the learner's
//! code make the same calls in the same order up to the step that failed,
//! though a scene may word that step by what happened (`…, paused … and
//! the install got in`) and branch after it: of the steps whose run holds
//! that call, the one whose number (how many steps came before it) is
//! nearest the failed step's is its twin. Where no step holds it (the
//! learner's code took the scene where the reference never goes), nothing
//! is drawn beside the learner's run.

use lab_claims::facts::{Event, wire};

/// The file: `TEST<TAB>run<TAB><TAB>RUN` and `TEST<TAB>N<TAB>STEP<TAB>EVENTS`.
const RUNS: &str = include_str!("../../reference-runs.tsv");

/// The reference's run of the step numbered `ordinal` in `test`, cut to
/// start as `yours`, the learner's picture of it, starts, as
/// `lab_claims::facts::wire` writes it.
pub fn find(test: &str, ordinal: usize, yours: &str) -> Option<String> {
    find_in(RUNS, test, ordinal, yours)
}

fn find_in(runs: &str, test: &str, ordinal: usize, yours: &str) -> Option<String> {
    let (your_names, your_events) = wire::decode(yours)?;
    let first = your_events.first()?;
    let anchor = anchor_of(&your_names, first)?;
    let mut last = None;
    let mut steps = Vec::new();
    for line in runs.lines() {
        let mut fields = line.splitn(4, '\t');
        if fields.next()? != test {
            continue;
        }
        let (number, _, rest) = (fields.next()?, fields.next()?, fields.next()?);
        if number == "run" {
            last = wire::decode(rest);
        } else {
            steps.push((number.parse::<usize>().ok()?, rest.parse::<usize>().ok()?));
        }
    }
    let (names, events) = last?;
    let (start, end) = steps
        .iter()
        .filter_map(|&(number, length)| {
            let run = events.get(..length)?;
            let start = run
                .iter()
                .rposition(|event| anchor_of(&names, event).as_deref() == Some(anchor.as_str()))?;
            Some((number, start, length))
        })
        .min_by_key(|&(number, _, _)| (number.abs_diff(ordinal), number))
        .map(|(_, start, length)| (start, length))?;
    let part = &events[start..end];
    let acting: Vec<usize> = part.iter().map(Event::actor).collect();
    let names: Vec<(usize, String)> = names
        .into_iter()
        .filter(|(actor, _)| acting.contains(actor))
        .collect();
    Some(wire::encode(&names, part))
}

/// What the run calls `actor`, if it names it.
/// What a picture may start with, told the same in any lab: a call by the
/// connection of that name, or (on the etcd track) what a worker, the test
/// or etcd did outside the destination, naming the workers; `None` for
/// anything else.
fn anchor_of(names: &[(usize, String)], event: &Event) -> Option<String> {
    // A connection the scene never named matches another unnamed one: each
    // lab numbers its connections its own way.
    let who = name(names, event.actor()).unwrap_or_default();
    match event {
        Event::Called { call, .. } => Some(format!("{who}: {call}")),
        Event::Coordinated { what, .. } => {
            let named = |actor| name(names, actor).unwrap_or_default().to_owned();
            Some(format!("{who}: {}", what.said(&named)))
        }
        _ => None,
    }
}

fn name(names: &[(usize, String)], actor: usize) -> Option<&str> {
    names
        .iter()
        .find(|(a, _)| *a == actor)
        .map(|(_, name)| name.as_str())
}

#[cfg(test)]
mod tests {
    use super::find_in;

    #[test]
    fn the_twin_is_cut_from_the_same_call_to_the_end_of_the_nearest_step() {
        let runs = "t1\trun\t\tN,1,worker A;N,2,authority;\
                    C,2,install,fund-A,2;A,2,installed;\
                    C,1,apply,fund-A,1,r1,5;A,1,stale,1,2;\
                    C,1,apply,fund-A,1,r1,5;A,1,stale,1,2\n\
                    t1\t0\tinstall\t2\nt1\t1\tapply\t4\nt1\t4\tapply again\t6\n";
        // The learner's connection 7, named worker A, made the same call.
        let yours = "N,7,worker A;C,7,apply,fund-A,1,r1,5;A,7,applied,5";
        assert_eq!(
            find_in(runs, "t1", 1, yours).as_deref(),
            Some("N,1,worker A;C,1,apply,fund-A,1,r1,5;A,1,stale,1,2")
        );
        // From the scene's first call: the whole run to the twin's end.
        let whole =
            "N,9,authority;C,9,install,fund-A,2;A,9,installed;N,7,worker A;C,7,apply,fund-A,1,r1,5";
        assert!(
            find_in(runs, "t1", 1, whole)
                .unwrap()
                .ends_with("A,1,stale,1,2")
        );
        assert!(
            find_in(runs, "t1", 1, whole)
                .unwrap()
                .contains("C,2,install")
        );
        // Another connection's name, another test, no run: nothing.
        // Unnamed on both sides: the same call is the twin.
        let unnamed = "t2\trun\t\tC,1,install,fund-A,2;A,1,installed\nt2\t0\tinstall\t2\n";
        assert_eq!(
            find_in(unnamed, "t2", 0, "C,5,install,fund-A,2;A,5,not-higher").as_deref(),
            Some("C,1,install,fund-A,2;A,1,installed")
        );
        let theirs = "N,7,worker B;C,7,apply,fund-A,1,r1,5";
        assert_eq!(find_in(runs, "t1", 1, theirs), None);
        assert_eq!(find_in(runs, "t2", 0, yours), None);
        assert_eq!(find_in(runs, "t1", 0, "not a run"), None);
    }
}
