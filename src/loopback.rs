//! The one thing the private servers share: a free port on the loopback
//! interface.

use std::net::{Ipv4Addr, TcpListener};

/// A loopback port nobody listens on right now. Another process may take
/// it before the server does; the callers try again on a failed start.
pub(crate) fn free_port() -> Result<u16, String> {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .map_err(|error| format!("cannot find a free loopback port: {error}"))
}
