//! What every command of the lab shares: the error type, the profile
//! argument (the query mode is `crate::workload::Mode`), and the configuration options (`--profile`,
//! `--config FILE`, `--set KEY=VALUE`) with [`build_config`], which turns
//! them into a [`Config`].
//!
//! A new subcommand that opens an engine takes `#[command(flatten)]
//! config: ConfigArgs` and calls [`ConfigArgs::build`]; one that runs
//! several profiles takes a `Vec<ProfileArg>` and [`Overrides`].

use std::fmt;
use std::path::{Path, PathBuf};
use turnstile_sync::config::{Config, Profile};

/// Any failure of a command, printed as one line.
pub type CliError = Box<dyn std::error::Error + Send + Sync>;

/// `--profile`: one of the presets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum ProfileArg {
    /// PostgreSQL 15's behaviour before the write-ups' fixes.
    Classic,
    /// Every fix on.
    Scalable,
}

impl From<ProfileArg> for Profile {
    fn from(p: ProfileArg) -> Profile {
        match p {
            ProfileArg::Classic => Profile::Classic,
            ProfileArg::Scalable => Profile::Scalable,
        }
    }
}

impl fmt::Display for ProfileArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(Profile::from(*self).name())
    }
}

/// Both presets, `classic` first (the default of the commands that compare).
pub const BOTH_PROFILES: [ProfileArg; 2] = [ProfileArg::Classic, ProfileArg::Scalable];

/// The profiles of a list argument, in order.
pub fn profiles(args: &[ProfileArg]) -> Vec<Profile> {
    args.iter().map(|&p| p.into()).collect()
}

/// `--set KEY=VALUE`, repeatable: knobs applied on top of a preset.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct Overrides {
    /// Override one knob, e.g. `--set lock.partitions=64` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
}

/// The configuration of one engine: a preset, a TOML file, overrides.
#[derive(clap::Args, Debug, Clone)]
pub struct ConfigArgs {
    /// Preset to start from.
    #[arg(long, value_enum, default_value_t = ProfileArg::Scalable)]
    pub profile: ProfileArg,
    /// TOML file applied on top of the preset.
    #[arg(long = "config", visible_alias = "file", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The `--set` overrides, applied last.
    #[command(flatten)]
    pub overrides: Overrides,
}

impl ConfigArgs {
    /// The effective configuration (see [`build_config`]).
    pub fn build(&self) -> Result<Config, CliError> {
        build_config(self.profile.into(), self.config.as_deref(), &self.overrides.set)
    }
}

/// A profile's preset, then a TOML file, then `--set` overrides.
pub fn build_config(profile: Profile, file: Option<&Path>, set: &[String]) -> Result<Config, CliError> {
    let mut config = match file {
        Some(path) => Config::from_toml_file(profile, path)?,
        None => Config::preset(profile),
    };
    for assignment in set {
        config.apply_override(assignment)?;
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser, Debug)]
    #[command(no_binary_name = true)]
    struct Line {
        #[command(flatten)]
        config: ConfigArgs,
    }

    #[test]
    fn profile_file_and_overrides_build_one_config() {
        let line = Line::try_parse_from(["--profile", "classic", "--set", "lock.partitions=64"]).unwrap();
        let config = line.config.build().unwrap();
        assert_eq!(config.lock.partitions, 64);
        assert_eq!(config.lock.fast_path_slots, Config::preset(Profile::Classic).lock.fast_path_slots);
        assert!(Line::try_parse_from(["--profile", "fast"]).is_err(), "an unknown profile is refused");
        let bad = Line::try_parse_from(["--set", "lock.partitions=zero"]).unwrap();
        assert!(bad.config.build().is_err(), "a bad value is a typed error");
    }
}
