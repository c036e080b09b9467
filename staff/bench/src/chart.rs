//! The chart: throughput against connections, one panel per destination,
//! one line per path. Plain SVG written by hand: no plotting dependency.

use std::fmt::Write as _;

use crate::{Case, Row, connections_of, find, targets};

const PANEL_W: f64 = 300.0;
const PANEL_H: f64 = 210.0;
const COLUMNS: usize = 3;
/// Inside a panel: room for the y labels on the left, the x labels below.
const LEFT: f64 = 52.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 28.0;
const BOTTOM: f64 = 34.0;
const LEGEND_H: f64 = 64.0;

/// One colour per path, told apart in grey print by the dash pattern too.
fn style(case: Case) -> (&'static str, &'static str) {
    match case {
        Case::Bare => ("#1b9e77", ""),
        Case::Floor => ("#7570b3", "6 3"),
        Case::Apply => ("#d95f02", ""),
        Case::Replay => ("#e7298a", "2 3"),
        _ => ("#666666", "8 3 2 3"),
    }
}

/// The decades that hold every positive throughput in `rows`: one shared
/// logarithmic axis, so panels compare with each other and the replay, which
/// writes nothing, does not flatten the paths that write.
fn decades(rows: &[Row]) -> (i32, i32) {
    let values = rows
        .iter()
        .filter(|row| Case::MAIN.contains(&row.case))
        .map(|row| row.cell.ops_per_sec())
        .filter(|&ops| ops > 0.0);
    let (low, high) = values.fold((f64::MAX, 0.0_f64), |(low, high), ops| {
        (low.min(ops), high.max(ops))
    });
    if high == 0.0 {
        return (0, 1);
    }
    let low = low.log10().floor() as i32;
    let high = (high.log10().ceil() as i32).max(low + 1);
    (low, high)
}

fn short(value: f64) -> String {
    if value >= 1e6 {
        format!("{:.0}M", value / 1e6)
    } else if value >= 1000.0 {
        let thousands = value / 1000.0;
        if thousands.fract() == 0.0 {
            format!("{thousands:.0}k")
        } else {
            format!("{thousands:.1}k")
        }
    } else {
        format!("{value:.0}")
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The chart of every path of `Case::MAIN` in `rows`.
pub fn svg(rows: &[Row]) -> String {
    let targets = targets(rows);
    let panels = targets.len().max(1);
    let rows_of_panels = panels.div_ceil(COLUMNS);
    let width = PANEL_W * COLUMNS as f64;
    let height = LEGEND_H + PANEL_H * rows_of_panels as f64;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(svg, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        svg,
        r#"<text x="10" y="18" font-size="14" font-weight="bold">Throughput (operations/s, logarithmic) against contending connections, one resource</text>"#
    );
    for (index, case) in Case::MAIN.into_iter().enumerate() {
        let (colour, dash) = style(case);
        let x = 10.0 + (index % 3) as f64 * 300.0;
        let y = 36.0 + (index / 3) as f64 * 16.0;
        let _ = writeln!(
            svg,
            r#"<line x1="{x}" y1="{y}" x2="{}" y2="{y}" stroke="{colour}" stroke-width="2.5" stroke-dasharray="{dash}"/><text x="{}" y="{}">{}</text>"#,
            x + 26.0,
            x + 32.0,
            y + 4.0,
            escape(case.label())
        );
    }
    let decades = decades(rows);
    for (index, &target) in targets.iter().enumerate() {
        let x0 = (index % COLUMNS) as f64 * PANEL_W;
        let y0 = LEGEND_H + (index / COLUMNS) as f64 * PANEL_H;
        panel(&mut svg, rows, target, decades, (x0, y0));
    }
    svg.push_str("</svg>\n");
    svg
}

fn panel(
    svg: &mut String,
    rows: &[Row],
    target: crate::Target,
    (low, high): (i32, i32),
    (x0, y0): (f64, f64),
) {
    let connections = connections_of(rows, target);
    let (left, right) = (x0 + LEFT, x0 + PANEL_W - RIGHT);
    let (upper, lower) = (y0 + TOP, y0 + PANEL_H - BOTTOM);
    // Connections on a log-2 axis: 1, 2, 4, 8 evenly spaced.
    let span = connections
        .last()
        .map_or(1.0, |&last| (last as f64).log2().max(1.0));
    let x_of = |n: usize| left + (n as f64).log2() / span * (right - left);
    let y_of = |ops: f64| {
        let position = (ops.max(10_f64.powi(low)).log10() - f64::from(low)) / f64::from(high - low);
        lower - position * (lower - upper)
    };

    let _ = writeln!(
        svg,
        r#"<text x="{}" y="{}" font-weight="bold">{}</text>"#,
        x0 + LEFT,
        y0 + 16.0,
        escape(&target.label())
    );
    for decade in low..=high {
        let value = 10_f64.powi(decade);
        let y = y_of(value);
        let _ = writeln!(
            svg,
            r##"<line x1="{left}" y1="{y:.1}" x2="{right}" y2="{y:.1}" stroke="#d0d0d0"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            left - 5.0,
            y + 4.0,
            short(value)
        );
        if decade < high {
            for factor in [2.0, 5.0] {
                let y = y_of(value * factor);
                let _ = writeln!(
                    svg,
                    r##"<line x1="{left}" y1="{y:.1}" x2="{right}" y2="{y:.1}" stroke="#f0f0f0"/>"##
                );
            }
        }
    }
    for &n in &connections {
        let x = x_of(n);
        let _ = writeln!(
            svg,
            r##"<line x1="{x:.1}" y1="{lower}" x2="{x:.1}" y2="{}" stroke="#999"/><text x="{x:.1}" y="{}" text-anchor="middle">{n}</text>"##,
            lower + 4.0,
            lower + 16.0
        );
    }
    let _ = writeln!(
        svg,
        r##"<line x1="{left}" y1="{lower}" x2="{right}" y2="{lower}" stroke="#999"/><text x="{}" y="{}" text-anchor="middle" fill="#555">connections</text>"##,
        (left + right) / 2.0,
        lower + 29.0
    );
    for case in Case::MAIN {
        let points: Vec<(f64, f64)> = connections
            .iter()
            .filter_map(|&n| {
                find(rows, target, case, n).map(|cell| (x_of(n), y_of(cell.ops_per_sec())))
            })
            .collect();
        if points.is_empty() {
            continue;
        }
        let (colour, dash) = style(case);
        let path: Vec<String> = points
            .iter()
            .map(|(x, y)| format!("{x:.1},{y:.1}"))
            .collect();
        let _ = writeln!(
            svg,
            r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2" stroke-dasharray="{dash}"/>"#,
            path.join(" ")
        );
        for (x, y) in points {
            let _ = writeln!(
                svg,
                r#"<circle cx="{x:.1}" cy="{y:.1}" r="2.5" fill="{colour}"/>"#
            );
        }
    }
}
