//! A failing step's run drawn as a sequence diagram: a lane per connection
//! and one for the destination, each call as an arrow to the destination,
//! each read, write and end of a transaction on the connection's lane, and
//! each answer as an arrow back, in the order they happened at the
//! destination (on SQLite a commit's place is the database's own, from its
//! commit hook). A call the test held at a checkpoint while others acted
//! is shaded from where it was held to where it went on.
//!
//! Drawn from the facts the test sent on the verdict channel
//! (`lab_claims::facts::wire`), never from the words of its message. The
//! picture says in words what it shows: a `<title>` and a `<desc>` that
//! tell the same run as the failure's `happened:` line, so a screen reader
//! and a text-only page get the same facts.
//!
//! Beside a failure's run, [`beside`] draws the reference's run of the
//! same step (`engine::reference_runs`) and marks, in both, the first event
//! where they differ, and says it in words.
//!
//! `cargo book` (`.ci/xtask/src/book/`) draws the book's pictures of the
//! reference's runs with this same module.

use std::fmt::Write as _;

use lab_claims::facts::{Checkpoint, Coordination, Event, Facts, wire};

use crate::instructor::html::text::escape;

/// Width of a connection's lane.
const LANE: usize = 230;
/// Height of one event's row.
const ROW: usize = 24;
/// Height of the lanes' heads.
const HEAD: usize = 40;

/// The picture's own style, so that it looks the same on a report's page,
/// in the book and opened alone.
const STYLE: &str = "<style>\
svg.run { font: 12px system-ui, sans-serif; background: #fff; }\
.lane line { stroke: #888; stroke-dasharray: 4 3; }\
.lane text { font-weight: 600; }\
.call line, .answer line { stroke: #222; }\
.call polygon, .answer polygon { fill: #222; }\
.answer line { stroke-dasharray: 5 3; }\
.step line { stroke: #ccc; }\
.commit line { stroke: #2a7d2a; stroke-width: 2; }\
.commit text { fill: #1d5e1d; font-weight: 600; }\
.rollback line { stroke: #b33; stroke-width: 2; }\
.rollback text { fill: #8e2222; font-weight: 600; }\
.signal line { stroke: #6b3fa0; stroke-width: 1.5; }\
.signal polygon { fill: #6b3fa0; }\
.signal text { fill: #4b2a73; font-weight: 600; }\
.coordinated circle { fill: #6b3fa0; }\
.coordinated text { fill: #4b2a73; }\
rect.held { fill: #fff3c4; fill-opacity: .55; stroke: #d9b84a; }\
text.held { fill: #7a5d00; font-style: italic; }\
rect.differs { fill: none; stroke: #c0392b; stroke-width: 2; }\
text.differs { fill: #a52a1b; font-weight: 700; }\
</style>";

/// Where the lanes are: the connections in the order they first act, then
/// the destination.
struct Layout {
    actors: Vec<usize>,
    names: Vec<(usize, String)>,
}

impl Layout {
    fn x(&self, actor: usize) -> usize {
        let at = self.actors.iter().position(|a| *a == actor).unwrap_or(0);
        LANE / 2 + at * LANE
    }

    fn destination(&self) -> usize {
        LANE / 2 + self.actors.len() * LANE
    }

    fn name(&self, actor: usize) -> String {
        name(&self.names, actor)
    }
}

/// The SVG of the run the test sent (`line`), titled `title`; `None` for a
/// line that does not decode or holds no call.
pub fn svg(line: &str, title: &str) -> Option<String> {
    let (names, events) = wire::decode(line)?;
    if events.is_empty() {
        return None;
    }
    Some(draw(names, &events, title, "run", None))
}

/// A failure's run (`yours`) and the reference's run of the same step
/// (`reference`), side by side, each titled, the first event where they
/// differ marked in both and told in words under them; `None` if either
/// line does not decode or holds no call.
pub fn beside(yours: &str, reference: &str, title: &str) -> Option<String> {
    let (your_names, your_events) = wire::decode(yours)?;
    let (their_names, their_events) = wire::decode(reference)?;
    if your_events.is_empty() || their_events.is_empty() {
        return None;
    }
    // Two rows are the same if they show the same words on the same lane:
    // the numbers of the connections are each lab's own.
    let rows = |names: &[(usize, String)], events: &[Event]| -> Vec<String> {
        events
            .iter()
            .map(|event| format!("{}: {}", name(names, event.actor()), label(names, event)))
            .collect()
    };
    let (your_rows, their_rows) = (
        rows(&your_names, &your_events),
        rows(&their_names, &their_events),
    );
    let differs = your_rows
        .iter()
        .zip(&their_rows)
        .position(|(a, b)| a != b)
        .or_else(|| {
            (your_events.len() != their_events.len())
                .then(|| your_events.len().min(their_events.len()))
        });
    let told = |rows: &[String], at: usize| -> String {
        rows.get(at)
            .map_or("nothing more happened", String::as_str)
            .to_owned()
    };
    let said = match differs {
        Some(at) => format!(
            "The runs part at event {}: yours, {}; the reference, {}.",
            at + 1,
            told(&your_rows, at),
            told(&their_rows, at)
        ),
        None => "The two runs are the same, event for event.".to_owned(),
    };
    let mine = draw(
        your_names,
        &your_events,
        &format!("{title}: your run"),
        "yours",
        differs.map(|at| (at, said.as_str())),
    );
    let theirs = draw(
        their_names,
        &their_events,
        &format!("{title}: the reference's run of the same step"),
        "reference",
        differs.map(|at| (at, said.as_str())),
    );
    Some(format!(
        "<div class=\"runs\">\n<figure class=\"run yours\">{mine}<figcaption>your run</figcaption></figure>\n\
         <figure class=\"run reference\">{theirs}<figcaption>the reference's run of the same step</figcaption></figure>\n\
         </div>\n<p class=\"differs\">{}</p>\n",
        escape(&said)
    ))
}

/// The SVG of `events`, its title and description ids starting `id`, the
/// event `mark.0` outlined as the first that differs from the other run
/// (`mark.1` saying how, in the description).
fn draw(
    names: Vec<(usize, String)>,
    events: &[Event],
    title: &str,
    id: &str,
    mark: Option<(usize, &str)>,
) -> String {
    let mut actors: Vec<usize> = Vec::new();
    for event in events {
        if !actors.contains(&event.actor()) {
            actors.push(event.actor());
        }
    }
    let layout = Layout { actors, names };
    let width = layout.destination() + LANE / 2;
    // A mark past the last event (one run is longer) sits on the row after
    // it.
    let rows = events.len().max(mark.map_or(0, |(at, _)| at + 1));
    let height = HEAD + (rows + 1) * ROW;
    let said = Facts {
        events: events.to_vec(),
        names: layout.names.clone(),
        // The line is the run to draw, whole.
        whole: true,
        ..Facts::read("", "", "")
    }
    .happened()
    .unwrap_or_default();
    let said = match mark {
        Some((_, differs)) => format!("{said} {differs}"),
        None => said,
    };
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        "<svg class=\"run\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" \
         viewBox=\"0 0 {width} {height}\" width=\"{width}\" height=\"{height}\" \
         aria-labelledby=\"{id}-title {id}-desc\">\n<title id=\"{id}-title\">{}</title>\n\
         <desc id=\"{id}-desc\">{}</desc>",
        escape(title),
        escape(&said)
    );
    svg.push_str(STYLE);
    svg.push('\n');
    lanes(&mut svg, &layout, height);
    held(&mut svg, &layout, events);
    if let Some((at, _)) = mark {
        let y = HEAD + (at + 1) * ROW;
        let _ = writeln!(
            svg,
            "<g class=\"differs\"><rect class=\"differs\" x=\"2\" y=\"{}\" width=\"{}\" height=\"{ROW}\" rx=\"4\"/>\
             <text class=\"differs\" x=\"{}\" y=\"{}\" text-anchor=\"end\">first difference</text></g>",
            y - ROW / 2 - 4,
            width - 4,
            width - 8,
            y + ROW / 2 - 8
        );
    }
    for (i, event) in events.iter().enumerate() {
        step(&mut svg, &layout, HEAD + (i + 1) * ROW, event);
    }
    svg.push_str("</svg>\n");
    svg
}

/// What the test calls `actor`.
fn name(names: &[(usize, String)], actor: usize) -> String {
    names
        .iter()
        .find(|(a, _)| *a == actor)
        .map_or_else(|| format!("connection {actor}"), |(_, name)| name.clone())
}

/// An event in the words its row shows.
fn label(names: &[(usize, String)], event: &Event) -> String {
    match event {
        Event::Coordinated { what, .. } => what.said(&|actor| name(names, actor)),
        Event::Called { call, .. } => format!("calls {call}"),
        Event::Answered { answer, .. } => format!("answered {}", answer.short()),
        Event::Reached { at, .. } => reached(*at).unwrap_or("went past a checkpoint").to_owned(),
        Event::Ended {
            committed,
            wrote,
            installed,
            ..
        } => ended(*committed, *wrote, *installed),
        Event::Resumed { .. } => "goes on".to_owned(),
    }
}

/// What a connection did at checkpoint `at`, where a row shows it.
fn reached(at: Checkpoint) -> Option<&'static str> {
    Some(match at {
        Checkpoint::GenerationRead => "reads the generation",
        Checkpoint::RecordRead => "looks the record up",
        Checkpoint::ValueRead => "reads the value",
        Checkpoint::BeforeEffect => "writes the value",
        Checkpoint::BeforeRecord => "writes the record",
        Checkpoint::BeforeInstall => "writes the generation",
        Checkpoint::TransactionEnded => "its transaction ended",
        Checkpoint::CallStarted | Checkpoint::WorkerChecked => return None,
    })
}

/// How a transaction ended, as its row says it.
fn ended(committed: bool, wrote: bool, installed: Option<i64>) -> String {
    match (committed, wrote, installed) {
        (false, _, _) => "ROLLBACK".to_owned(),
        (true, false, _) => "COMMIT (wrote nothing)".to_owned(),
        (true, true, Some(generation)) => format!("COMMIT: generation {generation} installed"),
        (true, true, None) => "COMMIT".to_owned(),
    }
}

/// The lanes and their heads.
fn lanes(svg: &mut String, layout: &Layout, height: usize) {
    let lanes = layout
        .actors
        .iter()
        .map(|&actor| (layout.x(actor), layout.name(actor), "lane"))
        .chain([(
            layout.destination(),
            "destination".to_owned(),
            "lane destination",
        )]);
    for (at, head, class) in lanes {
        let _ = writeln!(
            svg,
            "<g class=\"{class}\"><text x=\"{at}\" y=\"18\" text-anchor=\"middle\">{}</text>\
             <line x1=\"{at}\" y1=\"{HEAD}\" x2=\"{at}\" y2=\"{height}\"/></g>",
            escape(&head)
        );
    }
}

/// Where a call was held: from its last event before others acted to
/// where it went on.
fn held(svg: &mut String, layout: &Layout, events: &[Event]) {
    for (i, event) in events.iter().enumerate() {
        let (actor, held_from, words) = match event {
            Event::Resumed { actor } => {
                let from = events[..i]
                    .iter()
                    .rposition(|earlier| earlier.actor() == *actor)
                    .map_or(i, |at| at + 1);
                (actor, from, "held by the test")
            }
            // A worker frozen by the test, from the signal to the waking.
            Event::Coordinated {
                what: Coordination::Woke { worker },
                ..
            } => {
                let frozen = events[..i].iter().rposition(|earlier| {
                    matches!(earlier, Event::Coordinated { what: Coordination::Froze { worker: w }, .. } if w == worker)
                });
                (worker, frozen.map_or(i, |at| at + 1), "frozen")
            }
            _ => continue,
        };
        let (top, bottom) = (HEAD + held_from * ROW, HEAD + i * ROW + ROW / 2);
        let left = layout.x(*actor) - LANE / 2;
        let _ = writeln!(
            svg,
            "<rect class=\"held\" x=\"{}\" y=\"{top}\" width=\"{}\" height=\"{}\"/>\
             <text class=\"held\" x=\"{}\" y=\"{}\">{words}</text>",
            left + 6,
            LANE - 12,
            bottom - top,
            left + 10,
            top + 14
        );
    }
}

/// One event's row at height `y`.
fn step(svg: &mut String, layout: &Layout, y: usize, event: &Event) {
    let (from, destination) = (layout.x(event.actor()), layout.destination());
    match event {
        Event::Called { call, .. } => arrow(svg, from, destination, y, &call.to_string(), "call"),
        Event::Answered { answer, .. } => {
            arrow(svg, destination, from, y, &answer.short(), "answer");
        }
        Event::Reached { at, .. } => {
            if let Some(what) = reached(*at) {
                note(svg, from, destination, y, what, "step");
            }
        }
        Event::Ended {
            committed,
            wrote,
            installed,
            ..
        } => {
            let class = if *committed { "commit" } else { "rollback" };
            note(
                svg,
                from,
                destination,
                y,
                &ended(*committed, *wrote, *installed),
                class,
            );
        }
        Event::Resumed { .. } => note(svg, from, destination, y, "goes on", "step"),
        Event::Coordinated { what, .. } => coordinated(svg, layout, from, y, *what),
    }
}

/// What the test or etcd did, or a worker outside the destination: a
/// signal as an arrow from the test's lane to the worker's, the rest as a
/// mark on the lane of whoever did it.
fn coordinated(svg: &mut String, layout: &Layout, from: usize, y: usize, what: Coordination) {
    let signal = match what {
        Coordination::Froze { worker } => Some((worker, "SIGSTOP: frozen")),
        Coordination::Woke { worker } => Some((worker, "SIGCONT: woken")),
        Coordination::Killed { worker } => Some((worker, "SIGKILL: killed")),
        _ => None,
    };
    if let Some((worker, words)) = signal {
        arrow(svg, from, layout.x(worker), y, words, "signal");
        return;
    }
    let words = match what {
        Coordination::Locked => "takes the lock".to_owned(),
        Coordination::LeaseEnded { worker } => {
            format!("{}'s lease ends: its lock key goes", layout.name(worker))
        }
        _ => "loses its leader, elects another".to_owned(),
    };
    let _ = writeln!(
        svg,
        "<g class=\"coordinated\"><circle cx=\"{from}\" cy=\"{y}\" r=\"4\"/>\
         <text x=\"{}\" y=\"{}\">{}</text></g>",
        from + 8,
        y - 5,
        escape(&words)
    );
}

/// An arrow from lane `from` to lane `to` at height `y`, labelled.
fn arrow(svg: &mut String, from: usize, to: usize, y: usize, label: &str, class: &str) {
    let head = if to > from { to - 6 } else { to + 6 };
    let mid = from.min(to) + from.abs_diff(to) / 2;
    let _ = writeln!(
        svg,
        "<g class=\"{class}\"><line x1=\"{from}\" y1=\"{y}\" x2=\"{head}\" y2=\"{y}\"/>\
         <polygon points=\"{to},{y} {head},{} {head},{}\"/>\
         <text x=\"{mid}\" y=\"{}\" text-anchor=\"middle\">{}</text></g>",
        y - 4,
        y + 4,
        y - 5,
        escape(label)
    );
}

/// A mark on the way from lane `from` to the destination at height `y`:
/// what the connection did there.
fn note(svg: &mut String, from: usize, destination: usize, y: usize, label: &str, class: &str) {
    let _ = writeln!(
        svg,
        "<g class=\"{class}\"><line x1=\"{from}\" y1=\"{y}\" x2=\"{destination}\" y2=\"{y}\"/>\
         <text x=\"{}\" y=\"{}\">{}</text></g>",
        from + 8,
        y - 5,
        escape(label)
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use lab_claims::facts::{Answer, Call};

    #[test]
    fn a_frozen_worker_is_drawn_with_the_test_s_signals_and_etcd_s_lane() {
        let (worker1, test, etcd, worker2) = (3, 1, 2, 4);
        let coordinated = |actor, what| Event::Coordinated { actor, what };
        let events = vec![
            coordinated(worker1, Coordination::Locked),
            coordinated(test, Coordination::Froze { worker: worker1 }),
            coordinated(etcd, Coordination::LeaseEnded { worker: worker1 }),
            coordinated(worker2, Coordination::Locked),
            coordinated(test, Coordination::Woke { worker: worker1 }),
            Event::Called {
                actor: worker1,
                call: Call::Apply {
                    resource: "fund-A".to_owned(),
                    generation: 2,
                    request_id: "w1".to_owned(),
                    delta: 5,
                },
            },
            Event::Answered {
                actor: worker1,
                answer: Answer::Stale(Some((2, 4))),
            },
        ];
        let names = vec![
            (test, "test".to_owned()),
            (etcd, "etcd".to_owned()),
            (worker1, "worker 1".to_owned()),
            (worker2, "worker 2".to_owned()),
        ];
        let svg = svg(&wire::encode(&names, &events), "L7.1").unwrap();
        // A lane each, in the order they first act, then the destination.
        let heads: Vec<&str> = svg
            .split("<g class=\"lane")
            .skip(1)
            .filter_map(|lane| lane.split("middle\">").nth(1)?.split('<').next())
            .collect();
        assert_eq!(
            heads,
            ["worker 1", "test", "etcd", "worker 2", "destination"]
        );
        // The signals run from the test's lane to worker 1's (x 115).
        assert!(svg.contains("<g class=\"signal\"><line x1=\"345\" y1=\"88\" x2=\"121\""));
        assert!(svg.contains(">SIGSTOP: frozen<") && svg.contains(">SIGCONT: woken<"));
        // Frozen from the row after the signal to the waking.
        assert!(svg.contains("<text class=\"held\" x=\"10\" y=\"102\">frozen</text>"));
        assert!(svg.contains(">worker 1&#39;s lease ends: its lock key goes<"));
        assert!(svg.contains(
            "test: froze worker 1 (SIGSTOP), etcd: ended worker 1&#39;s lease, worker 2: took the lock"
        ));
    }

    #[test]
    fn a_held_call_is_drawn_with_its_lanes_its_commit_and_its_words() {
        let events = vec![
            Event::Called {
                actor: 1,
                call: Call::Apply {
                    resource: "fund-A".to_owned(),
                    generation: 1,
                    request_id: "r<1>".to_owned(),
                    delta: 5,
                },
            },
            Event::Reached {
                actor: 1,
                at: Checkpoint::GenerationRead,
            },
            Event::Called {
                actor: 2,
                call: Call::Install {
                    resource: "fund-A".to_owned(),
                    generation: 2,
                },
            },
            Event::Ended {
                actor: 2,
                committed: true,
                wrote: true,
                installed: Some(2),
            },
            Event::Answered {
                actor: 2,
                answer: Answer::Installed,
            },
            Event::Resumed { actor: 1 },
            Event::Answered {
                actor: 1,
                answer: Answer::Contention,
            },
        ];
        let names = vec![(1, "worker A".to_owned()), (2, "authority".to_owned())];
        let svg = svg(&wire::encode(&names, &events), "L3.2 on SQLite").unwrap();
        for part in [
            "<title id=\"run-title\">L3.2 on SQLite</title>",
            ">worker A</text>",
            ">authority</text>",
            ">destination</text>",
            "COMMIT: generation 2 installed",
            "held by the test",
            "r&lt;1&gt;",
            "<desc id=\"run-desc\">worker A: apply(fund-A, generation 1, &quot;r&lt;1&gt;&quot;, +5)",
        ] {
            assert!(svg.contains(part), "{part} in {svg}");
        }
        assert_eq!(super::svg("not a run", "x"), None);
    }

    #[test]
    fn beside_the_reference_the_first_difference_is_marked_and_told() {
        // The same call on connections numbered differently: the same rows
        // until the learner's transaction ends early.
        let yours = "N,7,worker A;C,7,apply,fund-A,1,r1,5;R,7,generation-read;E,7,commit,nothing;A,7,applied,5";
        let theirs = "N,1,worker A;C,1,apply,fund-A,1,r1,5;R,1,generation-read;R,1,before-effect;E,1,commit,wrote;A,1,applied,5";
        let html = beside(yours, theirs, "L3.2 on SQLite: the failing call").unwrap();
        assert_eq!(html.matches("<svg").count(), 2);
        assert_eq!(html.matches(">first difference</text>").count(), 2);
        for part in [
            "id=\"yours-title\"",
            "id=\"reference-title\"",
            "the reference&#39;s run of the same step",
            "The runs part at event 3: yours, worker A: COMMIT (wrote nothing); the reference, worker A: writes the value.",
        ] {
            assert!(html.contains(part), "{part} in {html}");
        }
        let same = beside(yours, yours, "x").unwrap();
        assert!(!same.contains("first difference"));
        assert!(same.contains("The two runs are the same, event for event."));
        assert_eq!(beside("not a run", theirs, "x"), None);
    }
}
