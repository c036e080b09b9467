//! Text for the pages: escaped, as a link's segment, as a rate.

use std::fmt::Write as _;

/// "83%", or "-" for an empty class.
pub(super) fn percent(passed: usize, of: usize) -> String {
    match (passed * 100 + of / 2).checked_div(of) {
        Some(rate) => format!("{rate}%"),
        None => "-".to_owned(),
    }
}

/// Text for HTML.
pub(super) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// A folder name as one segment of a relative link.
pub(super) fn url_segment(name: &str) -> String {
    let mut out = String::new();
    for byte in name.bytes() {
        if byte.is_ascii_alphanumeric() || b"-_.~".contains(&byte) {
            out.push(byte as char);
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_escaped_and_linked_as_one_segment() {
        assert_eq!(escape("<a&\"b'>"), "&lt;a&amp;&quot;b&#39;&gt;");
        assert_eq!(url_segment("a b/#?"), "a%20b%2F%23%3F");
    }
}
