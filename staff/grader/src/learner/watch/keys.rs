//! Terminal key events: standard input read a byte at a time, on a
//! terminal in raw mode (no echo, no line editing, Ctrl-C as a byte).

use std::io::Read;
use std::sync::mpsc::Sender;

use super::Event;

/// Keys from standard input, one byte at a time on a terminal (no echo, no
/// line editing, Ctrl-C as a byte) until dropped, when the terminal gets its
/// settings back.
pub(super) struct Keys {
    #[cfg(unix)]
    saved: Option<rustix::termios::Termios>,
}

impl Keys {
    pub(super) fn start(tx: Sender<Event>) -> Keys {
        #[cfg(unix)]
        let saved = raw_terminal();
        std::thread::spawn(move || {
            let mut stdin = std::io::stdin().lock();
            let mut byte = [0u8; 1];
            loop {
                match stdin.read(&mut byte) {
                    Ok(1) if byte[0] == b'\n' || byte[0] == b'\r' => {}
                    Ok(1) => {
                        if tx.send(Event::Key(byte[0])).is_err() {
                            return;
                        }
                    }
                    _ => {
                        let _ = tx.send(Event::Closed);
                        return;
                    }
                }
            }
        });
        Keys {
            #[cfg(unix)]
            saved,
        }
    }
}

impl Drop for Keys {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(saved) = &self.saved {
            let _ = rustix::termios::tcsetattr(
                std::io::stdin(),
                rustix::termios::OptionalActions::Now,
                saved,
            );
        }
    }
}

/// Turns off echo, line editing and the interrupt keys of the terminal on
/// standard input, and returns its settings as they were; `None` when
/// standard input is not a terminal.
#[cfg(unix)]
fn raw_terminal() -> Option<rustix::termios::Termios> {
    use rustix::termios::{LocalModes, OptionalActions, tcgetattr, tcsetattr};
    let stdin = std::io::stdin();
    let saved = tcgetattr(&stdin).ok()?;
    let mut raw = saved.clone();
    raw.local_modes
        .remove(LocalModes::ICANON | LocalModes::ECHO | LocalModes::ISIG);
    tcsetattr(&stdin, OptionalActions::Now, &raw).ok()?;
    Some(saved)
}
