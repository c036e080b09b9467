//! Review flags: lines of a submission that use something an honest
//! solution never needs and that could forge a result (end the test process
//! early, print lookalike verdicts, read the tests' files, keep state between
//! tests). They are for the instructor to read; they change no score.
//!
//! The scan is lexical. Comments and the contents of string and character
//! literals are skipped first, so `// no unsafe here` raises nothing and a
//! string cannot hide the code after it; what remains is matched by
//! identifier, not by substring, so `exit_code` is not `exit`.

use std::collections::BTreeSet;

/// One flagged line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flag {
    /// The exercise file, as `exercises/apply.rs`.
    pub file: String,
    /// Its line number, from 1.
    pub line: usize,
    /// What the construct can do, in a few words.
    pub what: &'static str,
    /// The line itself, trimmed and shortened.
    pub text: String,
}

impl std::fmt::Display for Flag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}: {}: {}",
            self.file, self.line, self.what, self.text
        )
    }
}

const EXIT: &str = "ends the process (process::exit, abort)";
const UNSAFE: &str = "unsafe code";
const ENV: &str = "reads the environment";
const FS: &str = "file-system access";
const NET: &str = "network access";
const COMMAND: &str = "runs another program";
const PRINT: &str = "writes to stdout or stderr directly";
const INCLUDE: &str = "includes another file";
const PATH: &str = "#[path] points a module elsewhere";
const EXTERN: &str = "extern block, crate or ABI";
const LINKER: &str = "linker attribute";
const GLOBAL: &str = "global state shared between tests";
const THREAD: &str = "threads, or the test's thread name";

/// The most lines one submission lists; past that, the point is made.
const MAX_FLAGS: usize = 40;

/// Scans one exercise file.
pub fn scan(file: &str, source: &str) -> Vec<Flag> {
    let tokens = lex(source);
    let lines: Vec<&str> = source.lines().collect();
    let mut seen = BTreeSet::new();
    for (index, (line, token)) in tokens.iter().enumerate() {
        let next = |offset: usize| tokens.get(index + offset).map(|(_, token)| token);
        let before = |offset: usize| {
            index
                .checked_sub(offset)
                .and_then(|at| tokens.get(at))
                .map(|(_, token)| token)
        };
        let path_segment = next(1) == Some(&Tok::Punct(':')) && next(2) == Some(&Tok::Punct(':'));
        let macro_call = next(1) == Some(&Tok::Punct('!'));
        let in_attribute = before(1) == Some(&Tok::Punct('['))
            && (before(2) == Some(&Tok::Punct('#'))
                || (before(2) == Some(&Tok::Punct('!')) && before(3) == Some(&Tok::Punct('#'))));
        let Tok::Ident(word) = token else { continue };
        let what = match word.as_str() {
            "exit" | "abort" => Some(EXIT),
            "process" if path_segment => Some(EXIT),
            "unsafe" => Some(UNSAFE),
            "env" if path_segment || macro_call => Some(ENV),
            "option_env" if macro_call => Some(ENV),
            "fs" if path_segment => Some(FS),
            "File" | "OpenOptions" => Some(FS),
            "net" if path_segment => Some(NET),
            "TcpStream" | "TcpListener" | "UdpSocket" => Some(NET),
            "Command" => Some(COMMAND),
            "println" | "print" | "eprintln" | "eprint" | "dbg" if macro_call => Some(PRINT),
            "stdout" | "stderr" => Some(PRINT),
            "include" | "include_str" | "include_bytes" if macro_call => Some(INCLUDE),
            "path" if in_attribute => Some(PATH),
            "extern" => Some(EXTERN),
            "no_mangle" | "export_name" | "link_section" => Some(LINKER),
            "used" if in_attribute => Some(LINKER),
            "static" | "thread_local" => Some(GLOBAL),
            "thread" if path_segment => Some(THREAD),
            _ => None,
        };
        if let Some(what) = what {
            seen.insert((*line, what));
        }
    }
    seen.into_iter()
        .take(MAX_FLAGS)
        .map(|(line, what)| Flag {
            file: file.to_owned(),
            line,
            what,
            text: shorten(lines.get(line - 1).copied().unwrap_or_default().trim()),
        })
        .collect()
}

fn shorten(text: &str) -> String {
    const MAX: usize = 100;
    if text.chars().count() <= MAX {
        return text.to_owned();
    }
    let mut short: String = text.chars().take(MAX).collect();
    short.push('…');
    short
}

/// A token that matters to the rules: a word, or one punctuation character.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Ident(String),
    Punct(char),
}

/// Rust source as words and punctuation with their line numbers, without
/// comments, literals' contents or lifetimes (`'static` is not `static`).
fn lex(source: &str) -> Vec<(usize, Tok)> {
    let chars: Vec<char> = source.chars().collect();
    let mut tokens = Vec::new();
    let mut line = 1;
    let mut at = 0;
    let peek = |at: usize| chars.get(at).copied().unwrap_or('\0');
    while at < chars.len() {
        let c = chars[at];
        if c == '\n' {
            line += 1;
            at += 1;
        } else if c.is_whitespace() {
            at += 1;
        } else if c == '/' && peek(at + 1) == '/' {
            while at < chars.len() && chars[at] != '\n' {
                at += 1;
            }
        } else if c == '/' && peek(at + 1) == '*' {
            at = skip_block_comment(&chars, at, &mut line);
        } else if c == '"' {
            at = skip_string(&chars, at + 1, &mut line);
        } else if c == '\'' {
            at = skip_quote(&chars, at, &mut line);
        } else if c == '_' || c.is_alphabetic() {
            let start = at;
            while at < chars.len() && (chars[at] == '_' || chars[at].is_alphanumeric()) {
                at += 1;
            }
            let word: String = chars[start..at].iter().collect();
            let next = peek(at);
            match word.as_str() {
                "r" | "br" | "cr"
                    if next == '"' || (next == '#' && raw_string_ahead(&chars, at)) =>
                {
                    at = skip_raw_string(&chars, at, &mut line);
                }
                "b" | "c" if next == '"' => at = skip_string(&chars, at + 1, &mut line),
                "b" if next == '\'' => at = skip_quote(&chars, at, &mut line),
                // A raw identifier, `r#static`, is a name, never a keyword:
                // kept with its prefix, so no rule takes it for one.
                "r" if next == '#' => {
                    let start = at + 1;
                    at = start;
                    while at < chars.len() && (chars[at] == '_' || chars[at].is_alphanumeric()) {
                        at += 1;
                    }
                    let name: String = chars[start..at].iter().collect();
                    tokens.push((line, Tok::Ident(format!("r#{name}"))));
                }
                _ => tokens.push((line, Tok::Ident(word))),
            }
        } else if c.is_ascii_digit() {
            while at < chars.len() && (chars[at] == '_' || chars[at].is_alphanumeric()) {
                at += 1;
            }
        } else {
            tokens.push((line, Tok::Punct(c)));
            at += 1;
        }
    }
    tokens
}

/// From `/*` to its matching `*/`; block comments nest.
fn skip_block_comment(chars: &[char], mut at: usize, line: &mut usize) -> usize {
    let mut depth = 0;
    while at < chars.len() {
        match (chars[at], chars.get(at + 1).copied()) {
            ('/', Some('*')) => {
                depth += 1;
                at += 2;
            }
            ('*', Some('/')) => {
                depth -= 1;
                at += 2;
                if depth == 0 {
                    return at;
                }
            }
            ('\n', _) => {
                *line += 1;
                at += 1;
            }
            _ => at += 1,
        }
    }
    at
}

/// From just after an opening `"` to just after its closing one.
fn skip_string(chars: &[char], mut at: usize, line: &mut usize) -> usize {
    while at < chars.len() {
        match chars[at] {
            '\\' => {
                if chars.get(at + 1) == Some(&'\n') {
                    *line += 1;
                }
                at += 2;
            }
            '"' => return at + 1,
            '\n' => {
                *line += 1;
                at += 1;
            }
            _ => at += 1,
        }
    }
    at
}

/// Whether `r#…` at `at` (on the `#`) opens a raw string, not a raw
/// identifier.
fn raw_string_ahead(chars: &[char], mut at: usize) -> bool {
    while chars.get(at) == Some(&'#') {
        at += 1;
    }
    chars.get(at) == Some(&'"')
}

/// From the `#`s or `"` after `r` to the end of the raw string.
fn skip_raw_string(chars: &[char], mut at: usize, line: &mut usize) -> usize {
    let mut hashes = 0;
    while chars.get(at) == Some(&'#') {
        hashes += 1;
        at += 1;
    }
    at += 1; // the opening quote
    while at < chars.len() {
        if chars[at] == '\n' {
            *line += 1;
        }
        if chars[at] == '"' && (1..=hashes).all(|k| chars.get(at + k) == Some(&'#')) {
            return at + 1 + hashes;
        }
        at += 1;
    }
    at
}

/// A character literal (`'x'`, `'\n'`, `'\u{1F600}'`) or a lifetime
/// (`'a`, `'static`), starting at the quote; neither is a word to match.
fn skip_quote(chars: &[char], at: usize, line: &mut usize) -> usize {
    let next = chars.get(at + 1).copied();
    if next == Some('\\') {
        // Past the backslash and the character it escapes (which may be a
        // quote), to the closing quote.
        let mut end = at + 3;
        while end < chars.len() && chars[end] != '\'' && chars[end] != '\n' {
            end += 1;
        }
        return end + 1;
    }
    if chars.get(at + 2) == Some(&'\'') {
        if next == Some('\n') {
            *line += 1;
        }
        return at + 3;
    }
    // A lifetime or a label: skip the quote and its name.
    let mut end = at + 1;
    while end < chars.len() && (chars[end] == '_' || chars[end].is_alphanumeric()) {
        end += 1;
    }
    end
}
