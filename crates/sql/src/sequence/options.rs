//! A sequence's definition ([`SeqDef`]) and how `CREATE SEQUENCE`,
//! `ALTER SEQUENCE` and an identity column's options build and change it,
//! with PostgreSQL's defaults and its `22023` checks (`init_params` in
//! `sequence.c`).
//!
//! Defaults: `INCREMENT 1`; an ascending sequence runs from `MINVALUE 1`
//! to its type's maximum, a descending one from `MAXVALUE -1` down to its
//! type's minimum; `START` is `MINVALUE` (ascending) or `MAXVALUE`
//! (descending); `CACHE 1`; `NO CYCLE`; type `bigint`.
//!
//! ```
//! use turnstile_sql::sequence::{SeqDef, SeqOption, SeqType};
//! let mut d = SeqDef::new(SeqType::Int4);
//! d.apply(&[SeqOption::Increment(-2)]).unwrap();
//! assert_eq!((d.min, d.max, d.start), (i64::from(i32::MIN), -1, -1));
//! assert!(d.apply(&[SeqOption::Cache(0)]).is_err());
//! ```

use crate::error::SqlError;
use turnstile_lock::SqlState;

/// A sequence's data type (`AS smallint | integer | bigint`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeqType {
    /// `smallint`.
    Int2,
    /// `integer` (`SERIAL`).
    Int4,
    /// `bigint` (the default, `BIGSERIAL`).
    Int8,
}

impl SeqType {
    /// The type's range.
    pub fn bounds(self) -> (i64, i64) {
        match self {
            SeqType::Int2 => (i64::from(i16::MIN), i64::from(i16::MAX)),
            SeqType::Int4 => (i64::from(i32::MIN), i64::from(i32::MAX)),
            SeqType::Int8 => (i64::MIN, i64::MAX),
        }
    }

    /// PostgreSQL's name of the type, as its messages print it.
    pub fn name(self) -> &'static str {
        match self {
            SeqType::Int2 => "smallint",
            SeqType::Int4 => "integer",
            SeqType::Int8 => "bigint",
        }
    }

    /// The type named `name` (`int4`, `integer`, …), if it is one a
    /// sequence may have.
    pub fn named(name: &str) -> Option<SeqType> {
        match name.trim().to_ascii_lowercase().as_str() {
            "smallint" | "int2" => Some(SeqType::Int2),
            "integer" | "int" | "int4" => Some(SeqType::Int4),
            "bigint" | "int8" => Some(SeqType::Int8),
            _ => None,
        }
    }
}

/// One option of `CREATE`/`ALTER SEQUENCE` (or of an identity column).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SeqOption {
    /// `AS type`.
    Type(SeqType),
    /// `INCREMENT [BY] n`.
    Increment(i64),
    /// `MINVALUE n` (`None`: `NO MINVALUE`, the default).
    Min(Option<i64>),
    /// `MAXVALUE n` (`None`: `NO MAXVALUE`).
    Max(Option<i64>),
    /// `START [WITH] n`.
    Start(i64),
    /// `RESTART [WITH n]` (ALTER only; `None`: the start value).
    Restart(Option<i64>),
    /// `CACHE n`.
    Cache(i64),
    /// `[NO] CYCLE`.
    Cycle(bool),
    /// `OWNED BY table.column` (`None`: `OWNED BY NONE`); not part of the
    /// definition ([`SeqDef::apply`] leaves it), it sets the sequence's
    /// owner.
    OwnedBy(Option<(String, String)>),
}

/// A sequence's definition (`pg_sequence`'s row).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeqDef {
    /// `seqtypid`.
    pub ty: SeqType,
    /// `seqincrement`, never 0.
    pub increment: i64,
    /// `seqmin`.
    pub min: i64,
    /// `seqmax`, above `min`.
    pub max: i64,
    /// `seqstart`, within `min..=max`.
    pub start: i64,
    /// `seqcache`, at least 1: values a session takes at once.
    pub cache: i64,
    /// `seqcycle`.
    pub cycle: bool,
}

/// What [`SeqDef::apply`] asks of the sequence's state besides the new
/// definition: `Some(v)` restarts it at `v` (its next value).
pub type Restart = Option<i64>;

fn invalid(message: String) -> SqlError {
    SqlError::new(SqlState::INVALID_PARAMETER_VALUE, message)
}

impl SeqDef {
    /// PostgreSQL's defaults for a sequence of type `ty`.
    pub fn new(ty: SeqType) -> SeqDef {
        let (_, max) = ty.bounds();
        SeqDef { ty, increment: 1, min: 1, max, start: 1, cache: 1, cycle: false }
    }

    /// Applies `opts` as `CREATE SEQUENCE` (on [`SeqDef::new`]) or
    /// `ALTER SEQUENCE` (on the current definition) does: bounds not given
    /// follow the type and the direction when the type or the direction
    /// changed, as `init_params` does; then every `22023` check. Returns
    /// the restart value, if `RESTART` was given.
    pub fn apply(&mut self, opts: &[SeqOption]) -> Result<Restart, SqlError> {
        let (old_ty, old_inc) = (self.ty, self.increment);
        let (mut min, mut max, mut start, mut restart) = (None, None, None, None);
        for o in opts {
            match o {
                SeqOption::Type(t) => self.ty = *t,
                SeqOption::Increment(i) => self.increment = *i,
                SeqOption::Min(m) => min = Some(*m),
                SeqOption::Max(m) => max = Some(*m),
                SeqOption::Start(s) => start = Some(*s),
                SeqOption::Restart(r) => restart = Some(*r),
                SeqOption::Cache(c) => self.cache = *c,
                SeqOption::Cycle(c) => self.cycle = *c,
                SeqOption::OwnedBy(_) => {}
            }
        }
        if self.increment == 0 {
            return Err(invalid("INCREMENT must not be zero".into()));
        }
        let (tmin, tmax) = self.ty.bounds();
        let retyped = self.ty != old_ty || (self.increment > 0) != (old_inc > 0);
        self.max = match max {
            Some(Some(m)) => m,
            Some(None) => self.default_max(),
            None if retyped => self.default_max(),
            None => self.max,
        };
        self.min = match min {
            Some(Some(m)) => m,
            Some(None) => self.default_min(),
            None if retyped => self.default_min(),
            None => self.min,
        };
        let ty = self.ty.name();
        if self.max < tmin || self.max > tmax {
            return Err(invalid(format!("MAXVALUE ({}) is out of range for sequence data type {ty}", self.max)));
        }
        if self.min < tmin || self.min > tmax {
            return Err(invalid(format!("MINVALUE ({}) is out of range for sequence data type {ty}", self.min)));
        }
        if self.min >= self.max {
            return Err(invalid(format!("MINVALUE ({}) must be less than MAXVALUE ({})", self.min, self.max)));
        }
        self.start = match start {
            Some(s) => s,
            None if min.is_some() || max.is_some() || retyped => {
                if self.increment > 0 {
                    self.min
                } else {
                    self.max
                }
            }
            None => self.start,
        };
        self.check_in_range("START value", self.start)?;
        let restart = restart.map(|r| r.unwrap_or(self.start));
        if let Some(r) = restart {
            self.check_in_range("RESTART value", r)?;
        }
        if self.cache < 1 {
            return Err(invalid(format!("CACHE ({}) must be greater than zero", self.cache)));
        }
        Ok(restart)
    }

    fn default_max(&self) -> i64 {
        if self.increment > 0 {
            self.ty.bounds().1
        } else {
            -1
        }
    }

    fn default_min(&self) -> i64 {
        if self.increment > 0 {
            1
        } else {
            self.ty.bounds().0
        }
    }

    fn check_in_range(&self, what: &str, v: i64) -> Result<(), SqlError> {
        if v < self.min {
            return Err(invalid(format!("{what} ({v}) cannot be less than MINVALUE ({})", self.min)));
        }
        if v > self.max {
            return Err(invalid(format!("{what} ({v}) cannot be greater than MAXVALUE ({})", self.max)));
        }
        Ok(())
    }

    /// The definition as `key=value` lines (the sequence's file).
    pub(crate) fn to_text(&self) -> String {
        format!(
            "type={}\nincrement={}\nmin={}\nmax={}\nstart={}\ncache={}\ncycle={}\n",
            self.ty.name(),
            self.increment,
            self.min,
            self.max,
            self.start,
            self.cache,
            self.cycle
        )
    }

    /// Reads [`SeqDef::to_text`]'s form; `None` if it is not one.
    pub(crate) fn from_text(text: &str) -> Option<SeqDef> {
        let mut d = SeqDef::new(SeqType::Int8);
        for line in text.lines() {
            let (k, v) = line.split_once('=')?;
            match k {
                "type" => d.ty = SeqType::named(v)?,
                "increment" => d.increment = v.parse().ok()?,
                "min" => d.min = v.parse().ok()?,
                "max" => d.max = v.parse().ok()?,
                "start" => d.start = v.parse().ok()?,
                "cache" => d.cache = v.parse().ok()?,
                "cycle" => d.cycle = v.parse().ok()?,
                _ => {}
            }
        }
        (d.increment != 0 && d.min < d.max && d.cache >= 1).then_some(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_the_direction_and_the_checks_are_postgresql_s() {
        let mut d = SeqDef::new(SeqType::Int8);
        assert_eq!(d.apply(&[SeqOption::Increment(5), SeqOption::Start(10)]).unwrap(), None);
        assert_eq!((d.min, d.max, d.start), (1, i64::MAX, 10));
        let e = SeqDef::new(SeqType::Int4).apply(&[SeqOption::Max(Some(1 << 40))]).unwrap_err();
        assert_eq!(e.message, "MAXVALUE (1099511627776) is out of range for sequence data type integer");
        let e = SeqDef::new(SeqType::Int8).apply(&[SeqOption::Start(0)]).unwrap_err();
        assert_eq!(e.message, "START value (0) cannot be less than MINVALUE (1)");
        let e = SeqDef::new(SeqType::Int8).apply(&[SeqOption::Increment(0)]).unwrap_err();
        assert_eq!(e.code, SqlState::INVALID_PARAMETER_VALUE);
        let mut d = SeqDef::new(SeqType::Int8);
        assert_eq!(d.apply(&[SeqOption::Restart(None)]).unwrap(), Some(1));
        assert_eq!(SeqDef::from_text(&d.to_text()), Some(d));
    }
}
