//! `index.html` and `by-points.html`: the class, a grid per graded track.

use std::fmt::Write as _;

use super::grid::grid;
use super::{BY_POINTS, Order, head, points};
use crate::instructor::report::Row;
use lab_claims::Track;

/// `index.html` or `by-points.html`.
pub(super) fn class_page(rows: &[Row], sandbox: bool, order: Order, tracks: &[Track]) -> String {
    let mut sorted: Vec<&Row> = rows.iter().collect();
    if order == Order::Points {
        sorted.sort_by(|a, b| points(b).cmp(&points(a)).then_with(|| a.name.cmp(&b.name)));
    }
    let mut page = String::new();
    head(&mut page, "fencing-lab: class report", true);
    let _ = writeln!(page, "<h1>Class report: {} submissions</h1>", rows.len());
    if sandbox {
        page.push_str(
            "<p><span class=\"sandbox-on\">Every build and test run went through the sandbox.</span> ",
        );
    } else {
        page.push_str(
            "<p class=\"sandbox-off\">Graded WITHOUT the sandbox (--no-sandbox): the code under \
             test could read the reference and other submissions.</p>\n<p>",
        );
    }
    let _ = writeln!(
        page,
        "<span class=\"noprint\">Sorted by <span id=\"sorted\">{}</span>; sort by \
         <a href=\"index.html\">name</a>, <a href=\"{BY_POINTS}\">points</a>, or a claim \
         (its head; with JavaScript off, the claim's page lists who failed it).</span></p>",
        match order {
            Order::Name => "name",
            Order::Points => "points",
        }
    );
    for (at, &track) in tracks.iter().enumerate() {
        grid(&mut page, &sorted, track, at, order);
    }
    page.push_str(
        "<p class=\"legend\"><span class=\"pass\">&#10003; pass</span>\
         <span class=\"fail\">&#10007; fail</span>\
         <span class=\"error\">? no result</span> \
         A row's status names the claims it did not pass, each a link to its failure. A lesson's \
         cell holds the points the row earned on it; click it (or its head, or a box above the \
         grid) to show or hide the lesson's claims, where each cell leads to its verdict. The \
         outlined rates are the claim the class passes least and its lesson; claims worth 0 \
         points stand apart, in the last group, and count in no pass rate of a lesson.</p>\n",
    );
    page.push_str("</body>\n</html>\n");
    page
}
