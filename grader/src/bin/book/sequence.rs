//! The lesson's sequence diagram (`book/src/sequence.svg`), drawn from the
//! L1 transcript.

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The diagram's width, in pixels.
const WIDTH: usize = 800;
/// The distance between two lanes.
const LANE_GAP: usize = 250;
/// Where the lanes start, under their heads.
const TOP: usize = 70;

/// The middle of a lane.
fn x(lane: usize) -> usize {
    110 + lane * LANE_GAP
}

/// The lesson as a picture: L1.1's lines of the L1 transcript as a
/// sequence diagram, one lane per actor, the destination on the right; a
/// call is an arrow to the destination and its answer an arrow back, a
/// refusal in red, a pause a gap on the worker's lane.
pub fn sequence_svg(stories: &BTreeMap<String, Vec<String>>) -> Result<String, String> {
    let steps = steps(stories)?;
    let mut lanes: Vec<String> = Vec::new();
    for (actor, _) in &steps {
        if actor != "observer" && !lanes.contains(actor) {
            lanes.push(actor.clone());
        }
    }
    lanes.push("destination (SQLite)".to_owned());
    let mut drawing = Drawing {
        destination: lanes.len() - 1,
        body: String::new(),
        y: TOP + 40,
        paused: Vec::new(),
    };
    for (actor, text) in &steps {
        if actor == "observer" {
            drawing.note(text);
        } else {
            let lane = lanes.iter().position(|name| name == actor).unwrap_or(0);
            drawing.step(lane, text);
        }
    }
    Ok(frame(&lanes, &drawing.body, drawing.y + 20))
}

/// L1.1's lines of the L1 transcript: each one's actor (its first ten
/// characters) and what it did.
fn steps(stories: &BTreeMap<String, Vec<String>>) -> Result<Vec<(String, String)>, String> {
    let lines = stories
        .get("L1")
        .ok_or("no committed L1 transcript to draw")?;
    let steps: Vec<(String, String)> = lines
        .iter()
        .filter_map(|line| line.trim_start().strip_prefix("[L1.1] "))
        .map(|rest| {
            let (actor, text) = rest.split_at(rest.len().min(10));
            (actor.trim().to_owned(), text.trim().to_owned())
        })
        .filter(|(actor, _)| !actor.is_empty())
        .collect();
    if steps.is_empty() {
        return Err("the L1 transcript has no [L1.1] lines to draw".to_owned());
    }
    Ok(steps)
}

/// The diagram's lines so far, drawn down the page.
struct Drawing {
    /// The destination's lane, the last.
    destination: usize,
    /// The SVG so far.
    body: String,
    /// How far down the page it has come.
    y: usize,
    /// Lanes paused now, with the height their gap starts at.
    paused: Vec<(usize, usize)>,
}

impl Drawing {
    /// What an observer read: a note beside the destination.
    fn note(&mut self, text: &str) {
        let (x, y) = (x(self.destination), self.y);
        let _ = writeln!(
            self.body,
            r##"<rect x="{}" y="{}" width="300" height="34" fill="#f4f1de" stroke="#999"/><text x="{}" y="{}" class="note">an observer reads it:</text><text x="{}" y="{}" class="note">{}</text>"##,
            x - 150,
            y - 12,
            x - 142,
            y + 2,
            x - 142,
            y + 16,
            escape(text)
        );
        self.y += 60;
    }

    /// An actor's step on its lane: its call to the destination, the
    /// answer if it got one, and its pause if it pauses there.
    fn step(&mut self, lane: usize, text: &str) {
        self.resume(lane);
        let (call, answer) = match text.split_once(" -> ") {
            Some((call, answer)) => (call.to_owned(), Some(answer.to_owned())),
            None => (text.to_owned(), None),
        };
        let (call, pauses) = match call.split_once(", then pauses") {
            Some((call, _)) => (call.to_owned(), true),
            None => (call, false),
        };
        let (from, to, y) = (x(lane), x(self.destination), self.y);
        let _ = writeln!(
            self.body,
            r##"<line x1="{from}" y1="{y}" x2="{}" y2="{y}" class="call" marker-end="url(#arrow)"/><text x="{}" y="{}" class="label">{}</text>"##,
            to - 6,
            from + 8,
            y - 6,
            escape(&call)
        );
        self.y += 28;
        if let Some(answer) = answer {
            self.answer(from, to, &answer);
        }
        if pauses {
            self.pause(lane, from);
        }
    }

    /// A paused lane's gap, which ends where its actor acts again.
    fn resume(&mut self, lane: usize) {
        if let Some(at) = self
            .paused
            .iter()
            .position(|(paused_lane, _)| *paused_lane == lane)
        {
            let (_, since) = self.paused.remove(at);
            let _ = writeln!(
                self.body,
                r##"<rect x="{}" y="{since}" width="12" height="{}" fill="#fff" stroke="#c00" stroke-dasharray="4 3"/>"##,
                x(lane) - 6,
                self.y - 18 - since
            );
        }
    }

    /// The destination's answer, an arrow back from `to` to `from`: red if
    /// it refused.
    fn answer(&mut self, from: usize, to: usize, answer: &str) {
        let (refused, y) = (answer.starts_with("rejected"), self.y);
        let _ = writeln!(
            self.body,
            r##"<line x1="{to}" y1="{y}" x2="{}" y2="{y}" class="{}" marker-end="url(#{})"/><text x="{}" y="{}" class="label{}">{}</text>"##,
            from + 6,
            if refused { "refused" } else { "answer" },
            if refused { "red" } else { "arrow" },
            from + 8,
            y - 6,
            if refused { " bad" } else { "" },
            escape(answer)
        );
        self.y += 28;
    }

    /// A pause on a lane, whose gap starts here.
    fn pause(&mut self, lane: usize, from: usize) {
        let _ = writeln!(
            self.body,
            r##"<text x="{}" y="{}" class="label bad">paused, holding what it read</text>"##,
            from + 12,
            self.y + 6
        );
        self.paused.push((lane, self.y - 10));
        self.y += 24;
    }
}

/// The whole picture: its size, style and arrowheads, a lane per actor with
/// its head, and `body`, the steps drawn on them.
fn frame(lanes: &[String], body: &str, height: usize) -> String {
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="13">"##
    );
    svg.push_str(
        "<!-- Drawn by `cargo book` from the [L1.1] lines of the committed L1 transcript \
         (tests/lab/snapshots/), which CI holds against a real run of the reference. -->\n",
    );
    svg.push_str(concat!(
        "<style>.call,.answer{stroke:#333;stroke-width:1.5}.answer{stroke-dasharray:5 3}",
        ".refused{stroke:#c00;stroke-width:2;stroke-dasharray:5 3}.label{fill:#222}",
        ".bad{fill:#c00;font-weight:bold}.note{fill:#333;font-size:12px}",
        ".lane{stroke:#bbb;stroke-width:1}.head{font-weight:bold}</style>\n",
        "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"8\" ",
        "markerHeight=\"8\" orient=\"auto\"><path d=\"M0,0L10,5L0,10z\" fill=\"#333\"/></marker>",
        "<marker id=\"red\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"8\" ",
        "markerHeight=\"8\" orient=\"auto\"><path d=\"M0,0L10,5L0,10z\" fill=\"#c00\"/></marker></defs>\n",
        "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n"
    ));
    for (lane, name) in lanes.iter().enumerate() {
        let _ = writeln!(
            svg,
            r##"<text x="{}" y="{}" text-anchor="middle" class="head">{}</text><line x1="{}" y1="{}" x2="{}" y2="{}" class="lane"/>"##,
            x(lane),
            TOP - 30,
            escape(name),
            x(lane),
            TOP - 20,
            x(lane),
            height - 10
        );
    }
    svg.push_str(body);
    svg.push_str("</svg>\n");
    svg
}

/// Text for SVG.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
