//! `cargo grade --classroom`: the GitHub Classroom workflow that gives
//! partial credit, written from the claim catalogue so that it cannot drift
//! from it.
//!
//! Classroom's command grader awards a step's `max-score` when the step's
//! command exits 0, and its reporter sums the steps. So the workflow has one
//! step per claim worth points, `cargo grade --claim L3.2`, each worth the
//! claim's points on the tracks graded (`--classroom=lessons`: one step per
//! lesson, `cargo grade --lesson L3`, all or nothing per lesson). Its sum is
//! the scorecard's `Points X/Y`, and the class gradebook's total for the
//! same code. A claim worth 0 points (L3.6, the load test, whose verdict on
//! a wrong implementation depends on timing) gets no step; in a lesson's
//! step it decides nothing (see [`crate::engine::lesson_or_claim`]).
//!
//! The committed copy is `staff/autograders/classroom.yml` (for the SQLite
//! track); `.ci/classroom` checks it equals this output and runs every
//! step's command on the reference, the stubs and two mutants.

use std::fmt::Write as _;

use crate::engine::lesson_or_claim::Part;
use lab_claims::{CLAIMS, LESSONS, Track};

/// The workflow for the tracks graded (`--postgres`, `--etcd`,
/// `--postgres-sql` add theirs to SQLite), one step per claim or, with
/// `by_lesson`, per lesson.
pub fn workflow(tracks: &[Track], by_lesson: bool) -> String {
    let flags: String = tracks.iter().map(|track| track.grade_flag()).collect();
    let steps = graded_parts(tracks, by_lesson);
    let mut out = head(tracks, by_lesson, &flags, &steps);
    for &(part, points) in &steps {
        out.push_str(&step(part, points, &flags));
    }
    out.push_str(&reporter(&steps));
    out
}

/// The steps: each claim (or, `by_lesson`, each lesson) worth points on
/// `tracks`, and its points.
fn graded_parts(tracks: &[Track], by_lesson: bool) -> Vec<(Part, u32)> {
    let parts: Vec<Part> = if by_lesson {
        LESSONS
            .iter()
            .map(|lesson| Part::Lesson(lesson.id))
            .collect()
    } else {
        CLAIMS.iter().map(|claim| Part::Claim(claim.id)).collect()
    };
    parts
        .into_iter()
        .map(|part| (part, part.points_on(tracks)))
        .filter(|&(_, points)| points > 0)
        .collect()
}

/// The workflow up to its graded steps: what it is, when it runs, and the
/// step that installs and builds before them. `flags` are the track flags
/// of `cargo grade`.
fn head(tracks: &[Track], by_lesson: bool, flags: &str, steps: &[(Part, u32)]) -> String {
    let total: u32 = steps.iter().map(|(_, points)| points).sum();
    let (packages, features) = needs(tracks);
    let mut out = String::new();
    let _ = write!(
        out,
        "\
# GitHub Classroom autograding for fencing-lab, with partial credit: one
# step per {unit} worth points, each awarding its points when its command
# exits 0, {when}; the reporter sums them
# ({total} points in all, the scorecard's `Points X/Y`).
#
# Copy it to .github/workflows/classroom.yml in the assignment's template
# repository. Written from the claim catalogue by
# `cargo grade{flags} --classroom{variant}`: CI (.ci/classroom) checks this
# copy against it and runs its steps. Change the catalogue, not this file.
name: Autograding Tests
\"on\":
  - push
  - repository_dispatch
permissions:
  checks: write
  actions: read
  contents: read
jobs:
  run-autograding-tests:
    runs-on: ubuntu-latest
    if: github.actor != 'github-classroom[bot]'
    steps:
      - name: Checkout code
        uses: actions/checkout@v4
      # Once, before the graded steps: the sandbox, the programs the tracks
      # run, the lab's first build. A learner's compile error shows in each
      # step below, so this one may fail.
      - name: Install and build
        continue-on-error: true
        run: |
          sudo apt-get update -q
          sudo apt-get install -y --no-install-recommends {packages}
          cargo test --no-run --test lab{features}
          cargo build --quiet --package grader --bin grade
",
        unit = if by_lesson { "lesson" } else { "claim" },
        when = if by_lesson {
            "that is when every claim of the lesson worth points passes"
        } else {
            "that is when the claim passes on every track graded"
        },
        variant = if by_lesson { "=lessons" } else { "" },
    );
    out
}

/// One graded step: `cargo grade` for `part` (with the track `flags`),
/// worth `points`.
fn step(part: Part, points: u32, flags: &str) -> String {
    let name = quoted(&step_name(part));
    let kind = match part {
        Part::Lesson(_) => "lesson",
        Part::Claim(_) => "claim",
    };
    format!(
        "      - name: {name}
        id: {id}
        uses: classroom-resources/autograding-command-grader@v1
        with:
          test-name: {name}
          command: cargo grade --{kind} {part}{flags}
          timeout: 10
          max-score: {points}
",
        id = step_id(part),
        part = part.id(),
    )
}

/// The last step: the reporter, which sums the steps' results.
fn reporter(steps: &[(Part, u32)]) -> String {
    let mut out = String::new();
    out.push_str(
        "      - name: Autograding Reporter
        uses: classroom-resources/autograding-grading-reporter@v1
        env:
",
    );
    for (part, _) in steps {
        let id = step_id(*part);
        let _ = writeln!(
            out,
            "          {}_RESULTS: \"${{{{steps.{id}.outputs.result}}}}\"",
            id.to_uppercase()
        );
    }
    let runners: Vec<String> = steps.iter().map(|(part, _)| step_id(*part)).collect();
    let _ = write!(
        out,
        "        with:
          runners: {}
",
        runners.join(",")
    );
    out
}

/// Prints the workflow for the tracks graded.
pub fn print(tracks: crate::engine::score::Tracks, by_lesson: bool) -> std::process::ExitCode {
    print!("{}", workflow(tracks.list(), by_lesson));
    std::process::ExitCode::SUCCESS
}

/// The Debian packages and Cargo features the tracks need on the runner.
fn needs(tracks: &[Track]) -> (String, String) {
    let mut packages = vec!["bubblewrap", "sqlite3"];
    let mut features = Vec::new();
    for track in tracks {
        match track {
            Track::Sqlite => {}
            Track::Postgres | Track::PostgresSql => {
                if !packages.contains(&"postgresql") {
                    packages.push("postgresql");
                }
                features.push(track.key());
            }
            Track::Etcd => {
                packages.extend(["etcd-server", "protobuf-compiler", "libprotobuf-dev"]);
                features.push(track.key());
            }
        }
    }
    let features = if features.is_empty() {
        String::new()
    } else {
        format!(" --features {}", features.join(","))
    };
    (packages.join(" "), features)
}

/// A step's id, which names its result for the reporter: `l3-2`, `l3`.
fn step_id(part: Part) -> String {
    part.id().to_lowercase().replace('.', "-")
}

/// A step's name: the claim's id and sentence, or the lesson's.
fn step_name(part: Part) -> String {
    match part {
        Part::Claim(id) => {
            let claim = lab_claims::claim(id).map_or("", |claim| claim.text);
            format!("{id} {claim}")
        }
        Part::Lesson(id) => {
            let title = LESSONS
                .iter()
                .find(|lesson| lesson.id == id)
                .map_or("", |lesson| lesson.title);
            format!("{id} {title}")
        }
    }
}

/// A YAML double-quoted scalar.
fn quoted(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each step's command and max-score, as `.ci/classroom` reads them.
    fn steps(workflow: &str) -> Vec<(String, u32)> {
        let commands = workflow
            .lines()
            .filter_map(|line| line.trim().strip_prefix("command: "));
        let scores = workflow
            .lines()
            .filter_map(|line| line.trim().strip_prefix("max-score: "));
        commands
            .zip(scores)
            .map(|(command, score)| (command.to_owned(), score.parse().unwrap()))
            .collect()
    }

    #[test]
    fn the_steps_add_up_to_the_tracks_points() {
        for tracks in [
            &[Track::Sqlite][..],
            &[Track::Sqlite, Track::Postgres],
            &[Track::Sqlite, Track::Etcd],
            &[Track::Sqlite, Track::PostgresSql],
        ] {
            let total: u32 = tracks
                .iter()
                .map(|&track| lab_claims::total_points_on(track))
                .sum();
            for by_lesson in [false, true] {
                let steps = steps(&workflow(tracks, by_lesson));
                assert_eq!(steps.iter().map(|(_, s)| s).sum::<u32>(), total);
                assert!(steps.iter().all(|&(_, score)| score > 0));
            }
        }
    }

    #[test]
    fn a_claim_worth_nothing_has_no_step() {
        let workflow = workflow(&[Track::Sqlite], false);
        assert!(!workflow.contains("--claim L3.6"));
        assert!(workflow.contains("command: cargo grade --claim L3.5\n"));
        assert_eq!(
            steps(&workflow).len(),
            CLAIMS
                .iter()
                .filter(|c| c.on(Track::Sqlite) && c.points > 0)
                .count()
        );
    }

    #[test]
    fn every_step_is_reported() {
        let workflow = workflow(&[Track::Sqlite, Track::Etcd], true);
        assert!(workflow.contains("runners: l1,l2,l3,l4,l5,l6,l7\n"));
        assert!(workflow.contains("L7_RESULTS: \"${{steps.l7.outputs.result}}\"\n"));
        assert!(workflow.contains("command: cargo grade --lesson L7 --etcd\n"));
    }

    #[test]
    fn names_are_quoted() {
        assert_eq!(quoted("a \"b\" \\ c"), "\"a \\\"b\\\" \\\\ c\"");
    }
}
