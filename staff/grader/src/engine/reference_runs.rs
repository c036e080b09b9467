//! The reference's run of every step that another connection acted in, as
//! the graded suite recorded it against the reference
//! (`staff/grader/reference-runs.tsv`, written and checked by
//! `cargo xtask reference-runs`): a failure's report draws the learner's
//! run beside the reference's run of the same step.
//!
//! A step is known by its test and the call its run starts with: the
//! scenes are code, so the reference and the learner's code make the same
//! calls in the same order up to the step that failed, though a scene may
//! word that step by what happened (`…, paused … and the install got in`)
//! and take another branch after it. Of the test's steps that start with
//! the same call, the one whose number (how many steps came before it) is
//! nearest the failed step's is its twin. Where no step starts so (the
//! learner's code took the scene where the reference never goes), nothing
//! is drawn beside the learner's run.

use lab_claims::facts::{Call, Event, wire};

/// The file, a line per step: `TEST<TAB>N<TAB>STEP<TAB>RUN`.
const RUNS: &str = include_str!("../../reference-runs.tsv");

/// The reference's run of the step numbered `ordinal` in `test`, as
/// `lab_claims::facts::wire` writes it, found by the call that `yours`,
/// the learner's run of it, starts with.
pub fn find(test: &str, ordinal: usize, yours: &str) -> Option<&'static str> {
    find_in(RUNS, test, ordinal, yours)
}

fn find_in<'a>(runs: &'a str, test: &str, ordinal: usize, yours: &str) -> Option<&'a str> {
    let call = first_call(yours)?;
    runs.lines()
        .filter_map(|line| {
            let mut fields = line.splitn(4, '\t');
            let (name, number) = (fields.next()?, fields.next()?.parse::<usize>().ok()?);
            fields.next()?;
            let run = fields.next()?;
            (name == test && first_call(run).as_ref() == Some(&call)).then_some((number, run))
        })
        .min_by_key(|(number, _)| (number.abs_diff(ordinal), *number))
        .map(|(_, run)| run)
}

/// The call a run starts with (whichever connection made it: the numbers
/// of connections are the lab's own).
fn first_call(line: &str) -> Option<Call> {
    match wire::decode(line)?.1.into_iter().next()? {
        Event::Called { call, .. } => Some(call),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::find_in;

    #[test]
    fn a_step_is_found_by_its_test_and_first_call_nearest_its_number() {
        let apply = "C,1,apply,fund-A,1,r1,5";
        let runs = format!(
            "t1\t0\tapply\tN,1,worker A;{apply};A,1,applied,5\n\
             t1\t1\tinstall\tN,2,authority;C,2,install,fund-A,2;A,2,installed\n\
             t1\t4\tapply again\tN,1,worker A;{apply};A,1,replayed,5\n\
             t2\t0\tinstall\tN,3,authority;C,3,install,fund-A,2\n"
        );
        // The learner's connection 7 made the same call at step 1.
        let yours = "N,7,worker A;C,7,apply,fund-A,1,r1,5;A,7,applied,5";
        assert!(
            find_in(&runs, "t1", 1, yours)
                .unwrap()
                .ends_with("A,1,applied,5")
        );
        assert!(
            find_in(&runs, "t1", 3, yours)
                .unwrap()
                .ends_with("A,1,replayed,5")
        );
        // No step of t2 starts with that call: the learner's code went
        // where the reference does not.
        assert_eq!(find_in(&runs, "t2", 0, yours), None);
        assert_eq!(find_in(&runs, "t1", 0, "not a run"), None);
    }
}
