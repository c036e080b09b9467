//! The terminal the grader draws on, when there is one.

/// The terminal's columns and rows, if standard output is one.
pub fn size() -> Option<(usize, usize)> {
    #[cfg(unix)]
    {
        let size = rustix::termios::tcgetwinsize(std::io::stdout()).ok()?;
        (size.ws_col > 0 && size.ws_row > 0)
            .then_some((usize::from(size.ws_col), usize::from(size.ws_row)))
    }
    #[cfg(not(unix))]
    None
}
