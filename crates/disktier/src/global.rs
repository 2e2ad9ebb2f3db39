//! The options every command takes, apart from the command tree so that the commands can read
//! them without depending on it.

use clap::builder::TypedValueParser;
use clap::ValueEnum;
use std::ffi::OsStr;
use std::path::PathBuf;

/// Options every command takes.
#[derive(Debug, Clone, clap::Args)]
pub struct Global {
    /// Output format (prometheus: text exposition 0.0.4, for check, bench, assess and fleet run).
    #[arg(long, global = true, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Also write the run's metrics to DIR/disktier_<command>.prom, atomically, for
    /// node_exporter's textfile collector (check, bench, assess, fleet run).
    #[arg(long, global = true, value_name = "DIR")]
    pub textfile_dir: Option<PathBuf>,
    /// No progress line and no notes on stderr.
    #[arg(long, short, global = true)]
    pub quiet: bool,
    /// Result store: a SQLite file path, a postgres://... URL or a libpq key=value string (unset or empty: $XDG_DATA_HOME/disktier/results.db).
    // hide_env_values: --help would otherwise print DISKTIER_DB, password included. An empty
    // value is the default store (disktier_store::location).
    #[arg(long, global = true, env = "DISKTIER_DB", hide_env_values = true, value_parser = StoreLocation)]
    pub db: Option<String>,
    /// Do not save this run in the store.
    #[arg(long, global = true)]
    pub no_save: bool,
    /// A catalog file that overrides or extends the embedded price catalog (empty: none).
    // An empty value (DISKTIER_CATALOG= in a script) is taken and means no overlay
    // (cmd::catalog::overlay), not clap's "a value is required". hide_env_values: clap shows an
    // unset variable as `[env: DISKTIER_CATALOG=]`, which reads as set to empty (QA).
    #[arg(long, global = true, env = "DISKTIER_CATALOG", hide_env_values = true, value_parser = clap::builder::OsStringValueParser::new().map(PathBuf::from))]
    pub catalog: Option<PathBuf>,
    // Last: clap orders help by declaration, and an option declared earlier moved every later
    // one in every help page.
    /// The file's name in --textfile-dir instead of disktier_<command> (.prom is added): one
    /// per target when several checks write into one directory.
    #[arg(long, global = true, value_name = "NAME", value_parser = parse_textfile_name)]
    pub textfile_name: Option<crate::exposition::TextfileName>,
}

fn parse_textfile_name(s: &str) -> Result<crate::exposition::TextfileName, String> {
    crate::exposition::TextfileName::parse(s)
}

/// `--db`/`DISKTIER_DB` as text: every store location (a SQLite path, a PostgreSQL URL or libpq
/// string) is read as UTF-8. One that is not is refused with that reason, not clap's "invalid
/// UTF-8 was detected in one or more arguments", which names neither the option nor the fix;
/// the value is not echoed, as it may hold a password.
#[derive(Debug, Clone, Copy)]
struct StoreLocation;

impl TypedValueParser for StoreLocation {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<String, clap::Error> {
        // `format` adds the usage, as clap's own errors have it.
        value.to_str().map(str::to_owned).ok_or_else(|| {
            clap::Error::raw(clap::error::ErrorKind::InvalidUtf8, NOT_UTF8).format(&mut cmd.clone())
        })
    }
}

pub(crate) const NOT_UTF8: &str = "the result store (--db or DISKTIER_DB) is not UTF-8: disktier reads a store's location as UTF-8 text (a SQLite file path, a postgres:// URL or a key=value string); for a SQLite file whose path is not UTF-8, pass a UTF-8 symlink to it";

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Text for people (the default).
    Text,
    /// JSON for programs (docs/result-schema.md).
    Json,
    /// Prometheus text exposition format 0.0.4 (check, bench, assess, fleet run).
    Prometheus,
}
