//! `--fill GRADEBOOK`: a committed gradebook given the columns of claims
//! added since it was written, each graded alone over the whole class,
//! instead of grading every claim again. The one command that derives a new
//! claim's files (`cargo xtask regenerate`) runs it for each committed class.
//!
//! Only missing columns are graded: the cells already there are kept as
//! they are, so a change to what an existing test checks needs the class
//! graded whole. A gradebook with a column no claim of the catalogue has
//! now, or other submissions than the class's, is refused for the same
//! reason. A track's total is the sum of its claims again, except for a
//! submission on hold, whose total waits for an instructor.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use crate::engine::score::Tracks;
use crate::instructor::report::{self, ON_HOLD, Row};
use lab_claims::{CLAIMS, Track};

/// A committed gradebook being filled: read, checked against the class,
/// given the cells of the claims it lacked, written again.
pub struct Filling {
    table: Table,
    tracks: Tracks,
}

impl Filling {
    /// Reads `gradebook`, and checks that only claims are missing from it:
    /// every column one the catalogue has on `tracks`, a row for each
    /// submission of `class` and no other.
    pub fn read(gradebook: &Path, tracks: Tracks, class: &[String]) -> Result<Filling, String> {
        let text = fs::read_to_string(gradebook)
            .map_err(|error| format!("cannot read {}: {error}", gradebook.display()))?;
        let table = Table::read(&text, gradebook)?;
        let header = report::gradebook_header(tracks);
        let whole = "grade the class whole instead";
        if let Some(stray) = table.header.iter().find(|column| !header.contains(column)) {
            return Err(format!(
                "{} has a column {stray:?} that no claim graded here has: {whole}",
                gradebook.display()
            ));
        }
        let mut names: Vec<&String> = table.rows.keys().collect();
        names.sort();
        if names
            .iter()
            .map(|name| name.as_str())
            .ne(class.iter().map(String::as_str))
        {
            return Err(format!(
                "{} does not hold a row for each submission of the class: {whole}",
                gradebook.display()
            ));
        }
        Ok(Filling { table, tracks })
    }

    /// The claims whose column is missing on one of the tracks, in the
    /// catalogue's order.
    pub fn missing(&self) -> Vec<&'static str> {
        CLAIMS
            .iter()
            .filter(|claim| {
                self.tracks.list().iter().any(|&track| {
                    claim.on(track)
                        && !self
                            .table
                            .header
                            .contains(&report::gradebook_column(track, claim.id))
                })
            })
            .map(|claim| claim.id)
            .collect()
    }

    /// Takes the cells of every claim graded in `rows`.
    pub fn add(&mut self, rows: &[Row]) {
        for row in rows {
            for scores in &row.tracks {
                let Some(track) = Track::ALL.into_iter().find(|t| t.key() == scores.track) else {
                    continue;
                };
                for (claim, _, earned) in &scores.claims {
                    self.table
                        .set(&row.name, report::gradebook_column(track, claim), *earned);
                }
            }
        }
    }

    /// The gradebook filled, totals summed again.
    pub fn write(mut self) -> Result<Vec<u8>, String> {
        self.table.total(self.tracks.list());
        self.table.write(&report::gradebook_header(self.tracks))
    }
}

/// A gradebook as cells: its header, and each submission's row by column.
struct Table {
    header: Vec<String>,
    rows: BTreeMap<String, BTreeMap<String, String>>,
}

impl Table {
    fn read(text: &str, path: &Path) -> Result<Table, String> {
        let mut records = report::parse_csv(text.as_bytes())
            .ok_or_else(|| format!("cannot read {}: it is not CSV", path.display()))?
            .into_iter();
        let header = records.next().unwrap_or_default();
        let rows = records
            .map(|record| {
                let cells: BTreeMap<String, String> = header.iter().cloned().zip(record).collect();
                (cells.get("submission").cloned().unwrap_or_default(), cells)
            })
            .collect();
        Ok(Table { header, rows })
    }

    fn set(&mut self, submission: &str, column: String, earned: u32) {
        if let Some(row) = self.rows.get_mut(submission) {
            row.insert(column, earned.to_string());
        }
    }

    /// Each track's total as the sum of its claims, but on hold.
    fn total(&mut self, tracks: &[Track]) {
        for row in self.rows.values_mut() {
            for &track in tracks {
                let column = report::gradebook_column(track, "total");
                if row.get(&column).map(String::as_str) == Some(ON_HOLD) {
                    continue;
                }
                let sum: u32 = CLAIMS
                    .iter()
                    .filter(|claim| claim.on(track))
                    .filter_map(|claim| row.get(&report::gradebook_column(track, claim.id)))
                    .filter_map(|cell| cell.parse::<u32>().ok())
                    .sum();
                row.insert(column, sum.to_string());
            }
        }
    }

    /// The gradebook again, its columns in `header`'s order.
    fn write(&self, header: &[String]) -> Result<Vec<u8>, String> {
        let bad = |error: csv::Error| format!("cannot write the gradebook: {error}");
        let mut writer = csv::Writer::from_writer(Vec::new());
        writer.write_record(header).map_err(bad)?;
        for row in self.rows.values() {
            let cells = header
                .iter()
                .map(|column| row.get(column).map_or("", String::as_str));
            writer.write_record(cells).map_err(bad)?;
        }
        writer
            .into_inner()
            .map_err(|error| format!("cannot write the gradebook: {error}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filled_column_joins_the_total_but_on_hold() {
        let text = "submission,L1.1,total\nheld,1,on hold\nmutant,0,0\n";
        let mut table = Table::read(text, Path::new("gradebook.csv")).unwrap();
        table.set("mutant", "L1.2".to_owned(), 1);
        table.set("held", "L1.2".to_owned(), 1);
        table.set("nobody", "L1.2".to_owned(), 1);
        table.total(&[Track::Sqlite]);
        let header: Vec<String> = ["submission", "L1.1", "L1.2", "total"]
            .map(str::to_owned)
            .to_vec();
        let written = String::from_utf8(table.write(&header).unwrap()).unwrap();
        assert_eq!(
            written,
            "submission,L1.1,L1.2,total\nheld,1,1,on hold\nmutant,0,1,1\n"
        );
    }
}
