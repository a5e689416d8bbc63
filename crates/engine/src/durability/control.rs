//! The `control` file: where recovery starts (PostgreSQL's `pg_control`,
//! reduced to what turnstile needs). Written by every checkpoint to a
//! temporary file, fsynced, renamed over `control`, and the directory
//! fsynced, so after a crash it is the old or the new one, whole; a CRC-32C
//! guards against anything else.

use std::fs::File;
use std::io::Write;
use std::path::Path;

/// What the last checkpoint recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Control {
    /// The redo point: every change before it is in the data files.
    pub redo: u64,
    /// Where the oldest transaction running at the checkpoint began in the
    /// log (its undo information starts there; `redo` when none ran).
    pub undo_start: u64,
    /// Whether the server shut down cleanly after this checkpoint (nothing
    /// changed since): unlogged tables keep their rows; after a crash
    /// they are emptied.
    pub clean: bool,
}

const NAME: &str = "control";

impl Control {
    /// The oldest position recovery reads from.
    pub fn start(&self) -> u64 {
        self.redo.min(self.undo_start)
    }

    /// Reads `dir/control`; `None` when there is none (a new directory).
    pub fn read(dir: &Path) -> std::io::Result<Option<Control>> {
        let path = dir.join(NAME);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let bad =
            |why: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{}: {why}", path.display()));
        let (body, crc) = text.trim_end().rsplit_once("\ncrc ").ok_or_else(|| bad("no checksum line"))?;
        if crc.parse::<u32>().ok() != Some(crc32c::crc32c(body.as_bytes())) {
            return Err(bad("checksum mismatch: the control file is damaged"));
        }
        let field = |name: &str| {
            body.lines()
                .find_map(|l| l.strip_prefix(name).and_then(|v| v.strip_prefix(' ')))
                .and_then(|v| v.parse::<u64>().ok())
                .ok_or_else(|| bad(&format!("no {name}")))
        };
        let clean = body.lines().any(|l| l == "state shut down");
        Ok(Some(Control { redo: field("redo")?, undo_start: field("undo_start")?, clean }))
    }

    /// Writes `dir/control` atomically and durably.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        let state = if self.clean { "shut down" } else { "in production" };
        let body = format!("turnstile control\nredo {}\nundo_start {}\nstate {state}", self.redo, self.undo_start);
        let text = format!("{body}\ncrc {}\n", crc32c::crc32c(body.as_bytes()));
        let tmp = dir.join("control.tmp");
        let mut f = File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, dir.join(NAME))?;
        File::open(dir)?.sync_all()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_control_file_round_trips_and_damage_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Control::read(dir.path()).unwrap(), None);
        let c = Control { redo: 1 << 24, undo_start: (1 << 24) - 100, clean: true };
        c.write(dir.path()).unwrap();
        assert_eq!(Control::read(dir.path()).unwrap(), Some(c));
        assert_eq!(c.start(), (1 << 24) - 100);
        let path = dir.path().join("control");
        let text = std::fs::read_to_string(&path).unwrap().replace("redo 1", "redo 2");
        std::fs::write(&path, text).unwrap();
        assert!(Control::read(dir.path()).is_err());
    }
}
