//! The output folder: where it may be, one `grade` at a time in it, what
//! goes in it, and the merge of shards.
//!
//! A class's output is `gradebook.csv`, the class report (`index.html`,
//! `by-points.html`, `NAME/index.html` per submission and `claims/` per
//! claim; see `html`), `class.json` (the rows they are made from, which a
//! merge reads back) and `NAME/results.json` per submission; `.work/` is the reusable work folder
//! and `.lock` the lock. Every output is made from the class's rows, sorted
//! by name, with no timing in it: grading a class in one go, or in shards
//! merged afterwards, writes the same bytes.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::engine::score::Tracks;
use crate::instructor::html;
use crate::instructor::report::{self, Row};

/// The version of `class.json`.
const CLASS_VERSION: u64 = 1;

/// A slice of the class: the `index`-th of `count` (`--shard K/N`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// From 1.
    pub index: usize,
    /// From 1; 1 is the whole class.
    pub count: usize,
}

impl Shard {
    /// The whole class.
    pub const WHOLE: Shard = Shard { index: 1, count: 1 };

    /// `K/N`, with 1 <= K <= N.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let parsed = text
            .split_once('/')
            .and_then(|(k, n)| Some((k.parse::<usize>().ok()?, n.parse::<usize>().ok()?)));
        match parsed {
            Some((index, count)) if (1..=count).contains(&index) && count <= 1000 => {
                Ok(Shard { index, count })
            }
            _ => Err(format!(
                "--shard takes K/N, the K-th of N slices with 1 <= K <= N <= 1000, not {text:?}"
            )),
        }
    }

    /// Its slice of the class, sorted by name: consecutive names, the
    /// slices as even as they can be.
    pub fn slice(self, class: &[String]) -> Vec<String> {
        let start = (self.index - 1) * class.len() / self.count;
        let end = self.index * class.len() / self.count;
        class[start..end].to_vec()
    }
}

/// Refuses an output folder that is the submissions folder, holds it, or
/// lies inside one submission (`names`), whether by its path or by where its
/// links lead: nothing inside a submission folder is ever written. Inside
/// the submissions folder, only a hidden folder (`.grades/`), which is no
/// submission, may hold it.
pub fn refuse_inside_submission(
    submissions: &Path,
    names: &[String],
    out: &Path,
) -> Result<(), String> {
    let outs = [out.to_path_buf(), resolved(out)];
    let classes = [submissions.to_path_buf(), resolved(submissions)];
    for (out, class) in outs
        .iter()
        .flat_map(|o| classes.iter().map(move |c| (o, c)))
    {
        if out == class {
            return Err(format!(
                "--out {} is the submissions folder: every submission's folder would get a \
                 results.json; choose a folder outside the class",
                out.display()
            ));
        }
        if class.starts_with(out) {
            return Err(format!(
                "--out {} holds the submissions folder {}; choose a folder outside the class",
                out.display(),
                class.display()
            ));
        }
    }
    // A new folder beside the submissions would pass for one next time.
    for (out, class) in outs
        .iter()
        .flat_map(|o| classes.iter().map(move |c| (o, c)))
    {
        if let Ok(inside) = out.strip_prefix(class) {
            let hidden = inside
                .iter()
                .next()
                .is_some_and(|first| first.to_string_lossy().starts_with('.'));
            if !hidden {
                return Err(format!(
                    "--out {} lies inside the submissions folder {}, where it would pass for a \
                     submission; choose a folder outside the class, or a hidden one (.grades)",
                    out.display(),
                    class.display()
                ));
            }
        }
    }
    for name in names {
        let folder = submissions.join(name);
        for inside in [folder.clone(), resolved(&folder)] {
            if outs.iter().any(|out| out.starts_with(&inside)) {
                return Err(format!(
                    "--out {} lies inside the submission folder {}; nothing inside a \
                     submission is written: choose a folder outside the class",
                    out.display(),
                    inside.display()
                ));
            }
        }
    }
    Ok(())
}

/// The path with its existing part's links resolved.
fn resolved(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    while !existing.exists() {
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                existing = parent.to_path_buf();
            }
            _ => break,
        }
    }
    let mut real = fs::canonicalize(&existing).unwrap_or(existing);
    real.extend(rest.iter().rev());
    real
}

/// The output folder's lock, held while the value lives.
pub struct Lock(#[allow(dead_code)] fs::File);

/// Creates the output folder and takes its lock, or says who has it.
pub fn lock(out: &Path) -> Result<Lock, String> {
    fs::create_dir_all(out).map_err(|error| format!("cannot create {}: {error}", out.display()))?;
    let path = out.join(".lock");
    let file = fs::File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|error| format!("cannot open {}: {error}", path.display()))?;
    use rustix::fs::{FlockOperation, flock};
    match flock(&file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(Lock(file)),
        Err(rustix::io::Errno::WOULDBLOCK) => Err(format!(
            "another grade is writing to {} right now (it holds {}); wait for it to finish, \
             or give another --out",
            out.display(),
            path.display()
        )),
        Err(error) => Err(format!("cannot lock {}: {error}", path.display())),
    }
}

/// Writes `NAME/results.json`.
pub fn write_results(out: &Path, name: &str, results: &Value) -> Result<(), String> {
    let folder = out.join(name);
    let path = folder.join("results.json");
    let text = serde_json::to_string_pretty(results)
        .map_err(|error| format!("cannot write {}: {error}", path.display()))?;
    fs::create_dir_all(&folder)
        .and_then(|()| fs::write(&path, text + "\n"))
        .map_err(|error| format!("cannot write {}: {error}", path.display()))
}

/// What [`write_class`] wrote.
pub struct Written {
    /// `gradebook.csv`'s path.
    pub gradebook: PathBuf,
    /// Its bytes, for `--expect`.
    pub gradebook_bytes: Vec<u8>,
    /// `index.html`'s path.
    pub index: PathBuf,
    /// The folders of an earlier class in the output folder that were not
    /// the grader's alone, so were left: each is stale.
    pub stale: Vec<String>,
    /// How many folders of submissions no longer in the class were removed.
    pub removed: usize,
}

impl Written {
    /// What happened to an earlier class's folders, for the summary: empty
    /// when there were none.
    pub fn leftovers(&self) -> String {
        let mut text = String::new();
        if self.removed > 0 {
            text.push_str(&format!(
                "removed the results of {} submissions of an earlier grade, not in this class\n",
                self.removed
            ));
        }
        if !self.stale.is_empty() {
            text.push_str(&format!(
                "stale: these folders of the output folder are no submission of this class and \
                 hold more than the grader wrote, so were left: {}\n",
                self.stale.join(", ")
            ));
        }
        text
    }
}

/// What a submission's folder in the output folder holds when the grader
/// wrote all of it.
const SUBMISSION_FILES: &[&str] = &["results.json", "index.html"];

/// Writes the gradebook, the class report (`html`) and `class.json` from the
/// rows of `shard` of `class`, the report's pages from the rows and the
/// `results.json` written beside them. The folders of submissions not among
/// the rows (an earlier class's) go, when they hold only what the grader
/// writes; the others are listed as stale.
pub fn write_class(
    out: &Path,
    class: &[String],
    shard: Shard,
    sandbox: bool,
    tracks: Tracks,
    rows: &[Row],
) -> Result<Written, String> {
    let write = |name: &str, bytes: &[u8]| {
        let path = out.join(name);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)
                .map_err(|error| format!("cannot create {}: {error}", parent.display()))?;
        }
        fs::write(&path, bytes)
            .map(|()| path.clone())
            .map_err(|error| format!("cannot write {}: {error}", path.display()))
    };
    let gradebook_bytes = report::gradebook(rows, tracks)?;
    let gradebook = write("gradebook.csv", &gradebook_bytes)?;
    let (removed, stale) = tidy(out, rows)?;
    let details: BTreeMap<String, Value> = rows
        .iter()
        .filter_map(|row| {
            let text = fs::read_to_string(out.join(&row.name).join("results.json")).ok()?;
            Some((row.name.clone(), serde_json::from_str(&text).ok()?))
        })
        .collect();
    for page in html::pages(rows, &details, sandbox, tracks.list()) {
        write(&page.path, page.html.as_bytes())?;
    }
    let index = out.join("index.html");
    let manifest = json!({
        "version": CLASS_VERSION,
        "shard": format!("{}/{}", shard.index, shard.count),
        "class": class,
        "sandbox": sandbox,
        "tracks": tracks.list().iter().map(|track| track.key()).collect::<Vec<_>>(),
        "rows": rows.iter().map(Row::to_json).collect::<Vec<_>>(),
    });
    let text = serde_json::to_string_pretty(&manifest)
        .map_err(|error| format!("cannot write class.json: {error}"))?;
    write("class.json", format!("{text}\n").as_bytes())?;
    Ok(Written {
        gradebook,
        gradebook_bytes,
        index,
        stale,
        removed,
    })
}

/// Removes what an earlier grade left in `out` that this one does not
/// write: the claims' pages (written afresh), and the folders of submissions
/// not among `rows` that hold only the grader's files. Returns how many
/// such folders went, and the names of the others, left as they are.
fn tidy(out: &Path, rows: &[Row]) -> Result<(usize, Vec<String>), String> {
    let claims = out.join(html::CLAIMS_FOLDER);
    if claims.exists() {
        fs::remove_dir_all(&claims)
            .map_err(|error| format!("cannot remove {}: {error}", claims.display()))?;
    }
    let entries =
        fs::read_dir(out).map_err(|error| format!("cannot read {}: {error}", out.display()))?;
    let (mut removed, mut stale) = (0, Vec::new());
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        if name.starts_with('.')
            || !path.is_dir()
            || path.is_symlink()
            || rows.iter().any(|row| row.name == name)
        {
            continue;
        }
        let ours = fs::read_dir(&path).is_ok_and(|inside| {
            inside.flatten().all(|file| {
                file.path().is_file()
                    && SUBMISSION_FILES.contains(&file.file_name().to_string_lossy().as_ref())
            })
        });
        if ours {
            fs::remove_dir_all(&path)
                .map_err(|error| format!("cannot remove {}: {error}", path.display()))?;
            removed += 1;
        } else {
            stale.push(name);
        }
    }
    stale.sort();
    Ok((removed, stale))
}

/// One shard's output folder, read back.
struct ShardOutput {
    dir: PathBuf,
    shard: Shard,
    class: Vec<String>,
    sandbox: bool,
    tracks: Vec<String>,
    rows: Vec<Row>,
}

fn read_shard(dir: &Path) -> Result<ShardOutput, String> {
    let path = dir.join("class.json");
    let text = fs::read_to_string(&path).map_err(|error| {
        format!(
            "cannot read {}: {error} (is {} a grade output folder?)",
            path.display(),
            dir.display()
        )
    })?;
    let bad = |what: &str| format!("{} is not a grader's class.json: {what}", path.display());
    let value: Value = serde_json::from_str(&text).map_err(|error| bad(&error.to_string()))?;
    if value["version"].as_u64() != Some(CLASS_VERSION) {
        return Err(bad("another version"));
    }
    let shard = Shard::parse(value["shard"].as_str().unwrap_or_default())?;
    let strings = |key: &str| -> Option<Vec<String>> {
        value[key]
            .as_array()?
            .iter()
            .map(|item| item.as_str().map(str::to_owned))
            .collect()
    };
    let rows = value["rows"]
        .as_array()
        .ok_or_else(|| bad("no rows"))?
        .iter()
        .map(|row| Row::from_json(row).ok_or_else(|| bad("a row it cannot read")))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ShardOutput {
        dir: dir.to_path_buf(),
        shard,
        class: strings("class").ok_or_else(|| bad("no class"))?,
        sandbox: value["sandbox"]
            .as_bool()
            .ok_or_else(|| bad("no sandbox"))?,
        tracks: strings("tracks").ok_or_else(|| bad("no tracks"))?,
        rows,
    })
}

/// Checks that the shards `read` (`first` among them) are those of one
/// class graded one way, with this merge's `tracks`, each given once.
fn check_shards(first: &ShardOutput, read: &[ShardOutput], tracks: Tracks) -> Result<(), String> {
    let ours: Vec<String> = tracks
        .list()
        .iter()
        .map(|track| track.key().to_owned())
        .collect();
    for shard in read {
        let differs = |what: &str| {
            format!(
                "{} and {} graded different {what}; merge the shards of one run",
                first.dir.display(),
                shard.dir.display()
            )
        };
        if shard.class != first.class {
            return Err(differs("classes"));
        }
        if shard.shard.count != first.shard.count {
            return Err(differs("numbers of shards"));
        }
        if shard.sandbox != first.sandbox {
            return Err(differs("sandbox settings (one with --no-sandbox)"));
        }
        if shard.tracks != ours {
            return Err(format!(
                "{} graded the tracks {}; this merge grades {} (give the same track flags, \
                 --postgres and --etcd, to every grade)",
                shard.dir.display(),
                shard.tracks.join(", "),
                ours.join(", ")
            ));
        }
    }
    for index in 1..=first.shard.count {
        let count = read.iter().filter(|s| s.shard.index == index).count();
        if count != 1 {
            return Err(format!(
                "shard {index}/{} is given {count} times; each shard once",
                first.shard.count
            ));
        }
    }
    Ok(())
}

/// Merges shard output folders into `out`: the gradebook, the class report,
/// `class.json` and every `results.json`, as grading the class in one go
/// writes them. Every shard of one class must be there, once.
pub fn merge(
    shards: &[PathBuf],
    out: &Path,
    tracks: Tracks,
) -> Result<(Written, Vec<Row>), String> {
    let read: Vec<ShardOutput> = shards
        .iter()
        .map(|dir| read_shard(dir))
        .collect::<Result<_, _>>()?;
    let Some(first) = read.first() else {
        return Err("--merge needs the output folders of the shards".to_owned());
    };
    check_shards(first, &read, tracks)?;
    let mut rows: Vec<(Row, PathBuf)> = read
        .iter()
        .flat_map(|shard| {
            shard
                .rows
                .iter()
                .map(|row| (row.clone(), shard.dir.clone()))
        })
        .collect();
    rows.sort_by(|a, b| a.0.name.cmp(&b.0.name));
    let names: Vec<&String> = rows.iter().map(|(row, _)| &row.name).collect();
    if names != first.class.iter().collect::<Vec<_>>() {
        return Err("the shards' rows do not cover the class once each".to_owned());
    }
    let _lock = lock(out)?;
    for (row, dir) in &rows {
        let from = dir.join(&row.name).join("results.json");
        let to = out.join(&row.name);
        let bytes =
            fs::read(&from).map_err(|error| format!("cannot read {}: {error}", from.display()))?;
        fs::create_dir_all(&to)
            .and_then(|()| fs::write(to.join("results.json"), bytes))
            .map_err(|error| format!("cannot write {}: {error}", to.display()))?;
    }
    let rows: Vec<Row> = rows.into_iter().map(|(row, _)| row).collect();
    let written = write_class(
        out,
        &first.class,
        Shard::WHOLE,
        first.sandbox,
        tracks,
        &rows,
    )?;
    Ok((written, rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_cover_the_class_once_in_order() {
        let class: Vec<String> = (0..7).map(|i| format!("s{i}")).collect();
        let joined: Vec<String> = (1..=3)
            .flat_map(|index| Shard { index, count: 3 }.slice(&class))
            .collect();
        assert_eq!(joined, class);
    }

    #[test]
    fn a_shard_outside_its_count_is_refused() {
        assert!(Shard::parse("0/3").is_err());
        assert!(Shard::parse("4/3").is_err());
        assert_eq!(Shard::parse("2/3"), Ok(Shard { index: 2, count: 3 }));
    }
}
