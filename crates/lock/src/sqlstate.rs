//! [`SqlState`]: PostgreSQL's five-character error codes as a type.
//!
//! Every layer that can fail in a way a client sees says which SQLSTATE its
//! error is, once: the lock manager here ([`crate::LockError::sqlstate`]),
//! the engine in `EngineError::sqlstate`, the SQL layer when it builds its
//! own errors. The constants carry PostgreSQL's condition names
//! (`src/backend/utils/errcodes.txt`), so code reads `SqlState::DEADLOCK_DETECTED`
//! rather than `"40P01"`. It lives in this crate because this is the lowest
//! one with errors a client sees.
//!
//! ```
//! use turnstile_lock::SqlState;
//! assert_eq!(SqlState::DEADLOCK_DETECTED.as_str(), "40P01");
//! assert_eq!(SqlState::DEADLOCK_DETECTED, "40P01");
//! assert_eq!(SqlState::DEADLOCK_DETECTED.class(), "40");
//! ```

use std::fmt;

/// A SQLSTATE: five ASCII digits or upper-case letters.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SqlState([u8; 5]);

macro_rules! states {
    ($($name:ident = $code:literal),* $(,)?) => {
        impl SqlState {
            $(
                #[doc = concat!("`", $code, "`")]
                pub const $name: SqlState = SqlState::from_code($code);
            )*
        }
    };
}

states! {
    SUCCESSFUL_COMPLETION = "00000",
    WARNING = "01000",
    PROTOCOL_VIOLATION = "08P01",
    FEATURE_NOT_SUPPORTED = "0A000",
    CARDINALITY_VIOLATION = "21000",
    STRING_DATA_RIGHT_TRUNCATION = "22001",
    NUMERIC_VALUE_OUT_OF_RANGE = "22003",
    NULL_VALUE_NOT_ALLOWED = "22004",
    INVALID_DATETIME_FORMAT = "22007",
    DATETIME_FIELD_OVERFLOW = "22008",
    SUBSTRING_ERROR = "22011",
    DIVISION_BY_ZERO = "22012",
    SEQUENCE_GENERATOR_LIMIT_EXCEEDED = "2200H",
    INVALID_ROW_COUNT_IN_LIMIT_CLAUSE = "2201W",
    INVALID_ROW_COUNT_IN_RESULT_OFFSET_CLAUSE = "2201X",
    CHARACTER_NOT_IN_REPERTOIRE = "22021",
    UNTRANSLATABLE_CHARACTER = "22P05",
    INVALID_PARAMETER_VALUE = "22023",
    INVALID_TEXT_REPRESENTATION = "22P02",
    BAD_COPY_FILE_FORMAT = "22P04",
    NOT_NULL_VIOLATION = "23502",
    FOREIGN_KEY_VIOLATION = "23503",
    UNIQUE_VIOLATION = "23505",
    CHECK_VIOLATION = "23514",
    INVALID_TRANSACTION_STATE = "25000",
    ACTIVE_SQL_TRANSACTION = "25001",
    READ_ONLY_SQL_TRANSACTION = "25006",
    NO_ACTIVE_SQL_TRANSACTION = "25P01",
    IN_FAILED_SQL_TRANSACTION = "25P02",
    IDLE_IN_TRANSACTION_SESSION_TIMEOUT = "25P03",
    INVALID_SQL_STATEMENT_NAME = "26000",
    DEPENDENT_OBJECTS_STILL_EXIST = "2BP01",
    INVALID_CURSOR_NAME = "34000",
    INVALID_CATALOG_NAME = "3D000",
    INVALID_AUTHORIZATION_SPECIFICATION = "28000",
    INVALID_SCHEMA_NAME = "3F000",
    INVALID_SAVEPOINT_SPECIFICATION = "3B001",
    SERIALIZATION_FAILURE = "40001",
    DEADLOCK_DETECTED = "40P01",
    GENERATED_ALWAYS = "428C9",
    SYNTAX_ERROR = "42601",
    DUPLICATE_COLUMN = "42701",
    AMBIGUOUS_COLUMN = "42702",
    UNDEFINED_COLUMN = "42703",
    UNDEFINED_OBJECT = "42704",
    DUPLICATE_OBJECT = "42710",
    DUPLICATE_ALIAS = "42712",
    GROUPING_ERROR = "42803",
    DATATYPE_MISMATCH = "42804",
    WRONG_OBJECT_TYPE = "42809",
    INVALID_FOREIGN_KEY = "42830",
    CANNOT_COERCE = "42846",
    UNDEFINED_FUNCTION = "42883",
    UNDEFINED_TABLE = "42P01",
    UNDEFINED_PARAMETER = "42P02",
    DUPLICATE_CURSOR = "42P03",
    DUPLICATE_DATABASE = "42P04",
    DUPLICATE_PREPARED_STATEMENT = "42P05",
    DUPLICATE_TABLE = "42P07",
    INVALID_COLUMN_REFERENCE = "42P10",
    INVALID_TABLE_DEFINITION = "42P16",
    INVALID_OBJECT_DEFINITION = "42P17",
    WINDOWING_ERROR = "42P20",
    INSUFFICIENT_RESOURCES = "53000",
    DISK_FULL = "53100",
    OUT_OF_MEMORY = "53200",
    TOO_MANY_CONNECTIONS = "53300",
    PROGRAM_LIMIT_EXCEEDED = "54000",
    OBJECT_NOT_IN_PREREQUISITE_STATE = "55000",
    OBJECT_IN_USE = "55006",
    CANT_CHANGE_RUNTIME_PARAM = "55P02",
    LOCK_NOT_AVAILABLE = "55P03",
    QUERY_CANCELED = "57014",
    ADMIN_SHUTDOWN = "57P01",
    IO_ERROR = "58030",
    UNDEFINED_FILE = "58P01",
    INTERNAL_ERROR = "XX000",
    DATA_CORRUPTED = "XX001",
    INDEX_CORRUPTED = "XX002",
}

impl SqlState {
    /// The SQLSTATE `code`; panics (at compile time for a constant) unless it
    /// is five digits or upper-case ASCII letters.
    pub const fn from_code(code: &str) -> SqlState {
        let b = code.as_bytes();
        assert!(b.len() == 5, "a SQLSTATE has five characters");
        let mut i = 0;
        while i < 5 {
            assert!(b[i].is_ascii_digit() || b[i].is_ascii_uppercase(), "a SQLSTATE is digits and A-Z");
            i += 1;
        }
        SqlState([b[0], b[1], b[2], b[3], b[4]])
    }

    /// The SQLSTATE `code`, or `None` if it is not five digits or A-Z.
    pub fn parse(code: &str) -> Option<SqlState> {
        let b: [u8; 5] = code.as_bytes().try_into().ok()?;
        b.iter().all(|c| c.is_ascii_digit() || c.is_ascii_uppercase()).then_some(SqlState(b))
    }

    /// The five characters.
    pub fn as_str(&self) -> &str {
        // Only ASCII is ever stored (from_code and parse check it).
        std::str::from_utf8(&self.0).unwrap_or("XX000")
    }

    /// The class: the first two characters (`40` for `40P01`).
    pub fn class(&self) -> &str {
        &self.as_str()[..2]
    }
}

impl fmt::Display for SqlState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for SqlState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SqlState({})", self.as_str())
    }
}

impl PartialEq<&str> for SqlState {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<str> for SqlState {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

#[cfg(test)]
mod tests {
    use super::SqlState;

    #[test]
    fn parse_accepts_only_five_digits_or_capitals() {
        assert_eq!(SqlState::parse("40P01"), Some(SqlState::DEADLOCK_DETECTED));
        for bad in ["", "4", "40p01", "40P011", "40P0é", "40 01"] {
            assert_eq!(SqlState::parse(bad), None, "{bad:?}");
        }
    }
}
