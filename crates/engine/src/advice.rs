//! The engine's advice in the caller's words. An error that tells the user what to change names
//! the job option as a typed [`OptionName`] (with the value where it gives one), never as text,
//! and the caller picks the [`Spelling`]: the command line's (`pass --size (e.g. --size 1G)`,
//! `pass --direct=false`) for `bench`, `check` and the rest, a fio job file's (`set size=
//! (e.g. size=1G)`, `set direct=0`) for `bench FILE.fio`. (Until session 25 the job file's
//! words were made by rewriting the rendered message text, which broke whenever a message's
//! wording changed and rewrote a path that happened to hold `--size`.) Options of the command
//! itself (`--destructive`, `--engine`, `--keep-files`) are plain text: a job file is run with
//! them on the command line too.

use std::borrow::Cow;

/// A job option the engine's advice names: fio's option, `--NAME` on the command line (`_`
/// written `-`), `NAME=` in a job file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionName {
    Size,
    Offset,
    Direct,
    Bs,
    Numjobs,
    Iodepth,
    Fsync,
    Fdatasync,
    Runtime,
    RampTime,
    TimeBased,
    Name,
    Nrfiles,
}

impl OptionName {
    /// fio's name, as a job file spells it (`ramp_time`).
    pub fn fio_name(self) -> &'static str {
        match self {
            OptionName::Size => "size",
            OptionName::Offset => "offset",
            OptionName::Direct => "direct",
            OptionName::Bs => "bs",
            OptionName::Numjobs => "numjobs",
            OptionName::Iodepth => "iodepth",
            OptionName::Fsync => "fsync",
            OptionName::Fdatasync => "fdatasync",
            OptionName::Runtime => "runtime",
            OptionName::RampTime => "ramp_time",
            OptionName::TimeBased => "time_based",
            OptionName::Name => "name",
            OptionName::Nrfiles => "nrfiles",
        }
    }

    /// The option given this value, as a word of advice (`--size 1G`, `size=1G`).
    pub fn with(self, value: impl Into<Value>) -> Word {
        Word::Set(self, value.into())
    }
}

/// How the caller writes a job option in advice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Spelling {
    /// `pass --size (e.g. --size 1G)`, `pass --direct=false`: what [`std::fmt::Display`] shows.
    #[default]
    CommandLine,
    /// `set size= (e.g. size=1G)`, `set direct=0`: a fio job file's `key=value` lines.
    JobFile,
}

/// A value advised for an option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// A flag: `--direct=false` on the command line, `direct=0` in a job file.
    Bool(bool),
    /// A size, a count or a duration, written the same in both: `--size 1G`, `size=1G`.
    Text(String),
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::Text(s.to_string())
    }
}

impl From<u64> for Value {
    fn from(n: u64) -> Self {
        Value::Text(n.to_string())
    }
}

/// One word of advice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Word {
    /// Text that names no job option, the same in every spelling.
    Text(Cow<'static, str>),
    /// The verb that gives an option: "pass" on a command line, "set" in a job file.
    Pass,
    /// An option named without a value: `--size`, `size=`.
    Opt(OptionName),
    /// An option with a value: `--size 1G` and `--direct=false`, `size=1G` and `direct=0`.
    Set(OptionName, Value),
    /// A boolean option turned on: the flag alone on the command line (`--direct`), `direct=1`
    /// in a job file.
    On(OptionName),
}

pub use Word::Pass;

impl From<&'static str> for Word {
    fn from(s: &'static str) -> Self {
        Word::Text(Cow::Borrowed(s))
    }
}

impl From<String> for Word {
    fn from(s: String) -> Self {
        Word::Text(Cow::Owned(s))
    }
}

impl From<OptionName> for Word {
    fn from(o: OptionName) -> Self {
        Word::Opt(o)
    }
}

impl Word {
    fn write(&self, sp: Spelling, out: &mut String) {
        let cli = |o: OptionName| o.fio_name().replace('_', "-");
        match (self, sp) {
            (Word::Text(t), _) => out.push_str(t),
            (Word::Pass, Spelling::CommandLine) => out.push_str("pass"),
            (Word::Pass, Spelling::JobFile) => out.push_str("set"),
            (Word::Opt(o), Spelling::CommandLine) => {
                out.push_str("--");
                out.push_str(&cli(*o));
            }
            (Word::Opt(o), Spelling::JobFile) => {
                out.push_str(o.fio_name());
                out.push('=');
            }
            (Word::Set(o, v), Spelling::CommandLine) => {
                out.push_str("--");
                out.push_str(&cli(*o));
                match v {
                    Value::Bool(b) => out.push_str(if *b { "=true" } else { "=false" }),
                    Value::Text(t) => {
                        out.push(' ');
                        out.push_str(t);
                    }
                }
            }
            (Word::On(o), Spelling::CommandLine) => {
                out.push_str("--");
                out.push_str(&cli(*o));
            }
            (Word::On(o), Spelling::JobFile) => {
                out.push_str(o.fio_name());
                out.push_str("=1");
            }
            (Word::Set(o, v), Spelling::JobFile) => {
                out.push_str(o.fio_name());
                out.push('=');
                match v {
                    Value::Bool(b) => out.push(if *b { '1' } else { '0' }),
                    Value::Text(t) => out.push_str(t),
                }
            }
        }
    }
}

/// What to change, as words and the job options they name; shown in the command line's
/// spelling, or in another with [`Advice::render`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Advice(Vec<Word>);

impl Advice {
    pub fn new(words: Vec<Word>) -> Advice {
        Advice(words)
    }

    /// The advice with its options spelled as `sp` spells them.
    pub fn render(&self, sp: Spelling) -> String {
        let mut out = String::new();
        for w in &self.0 {
            w.write(sp, &mut out);
        }
        out
    }
}

/// Advice that names no job option.
impl From<&'static str> for Advice {
    fn from(s: &'static str) -> Self {
        Advice(vec![s.into()])
    }
}

/// Advice that names no job option.
impl From<String> for Advice {
    fn from(s: String) -> Self {
        Advice(vec![s.into()])
    }
}

/// In the command line's spelling.
impl std::fmt::Display for Advice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.render(Spelling::CommandLine))
    }
}

/// An error whose message gives advice: written in the caller's spelling; its `Display` is
/// the command line's.
pub trait Render {
    fn render(&self, sp: Spelling) -> String;
}

/// `advice![Pass, " a smaller ", Size, " or pick another target"]`: [`Advice`] from words
/// (text, [`Pass`], an [`OptionName`], or `OptionName::with(value)`).
#[macro_export]
macro_rules! advice {
    ($($w:expr),* $(,)?) => {
        $crate::advice::Advice::new(vec![$($crate::advice::Word::from($w)),*])
    };
}

#[cfg(test)]
#[path = "advice_tests.rs"]
mod tests;
