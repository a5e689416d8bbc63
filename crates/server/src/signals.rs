//! SIGINT and SIGTERM, caught so that `turnstile serve` stops cleanly.

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use std::io;

/// SIGINT and SIGTERM, registered: from [`TerminationSignals::register`] on
/// they no longer kill the process; [`TerminationSignals::wait`] returns
/// when one arrives.
pub struct TerminationSignals {
    signals: Signals,
}

impl TerminationSignals {
    /// Catches SIGINT and SIGTERM from now on.
    pub fn register() -> io::Result<Self> {
        Ok(TerminationSignals { signals: Signals::new([SIGINT, SIGTERM])? })
    }

    /// Blocks until SIGINT or SIGTERM; returns its name.
    pub fn wait(&mut self) -> &'static str {
        loop {
            if let Some(sig) = self.signals.forever().next() {
                return if sig == SIGINT { "SIGINT" } else { "SIGTERM" };
            }
        }
    }
}
