//! Why a job file cannot be run; each error names the file and line, and the fix.

/// A job file that cannot be run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JobFileError {
    #[error("{source_name} is {len} bytes: a job file may be at most {max} bytes")]
    TooBig {
        source_name: String,
        len: usize,
        max: usize,
    },
    #[error("{source_name} line {line}: the line is {len} bytes long; a job file line may be at most {max}")]
    LineTooLong {
        source_name: String,
        line: usize,
        len: usize,
        max: usize,
    },
    #[error("{source_name} line {line}: with its ${{NAME}} variables replaced by their values the line is longer than {max} bytes, which a job file line may be at most: check the variables it names")]
    ExpandedTooLong {
        source_name: String,
        line: usize,
        max: usize,
    },
    #[error("{source_name} line {line}: column {column} holds {what}, which no fio option takes: remove it (the file is damaged, or not a job file)")]
    ControlChar {
        source_name: String,
        line: usize,
        column: usize,
        what: String,
    },
    #[error("{source_name} line {line}: more than {max} sections: split the job file")]
    TooManySections {
        source_name: String,
        line: usize,
        max: usize,
    },
    #[error("{source_name} line {line}: more than {max} options in section [{section}]")]
    TooManyOptions {
        source_name: String,
        line: usize,
        section: String,
        max: usize,
    },
    #[error("{source_name} line {line}: `{text}` is not a section header: write [name] with a name of letters, digits, '-', '_' or '.'")]
    BadSection {
        source_name: String,
        line: usize,
        text: String,
    },
    #[error("{source_name} line {line}: `{key}` comes before any [section]: put options under [global] or a job section")]
    OutsideSection {
        source_name: String,
        line: usize,
        key: String,
    },
    #[error("{source_name} line {line}: ${{{name}}} is not set in disktier's environment (fio would read it as empty and run another job): set it (sudo keeps it with `sudo {name}=VALUE disktier ...`) or write the value")]
    Unset {
        source_name: String,
        line: usize,
        name: String,
    },
    #[error("{source_name} line {line}: `{option}` {why}, which disktier's checks of the job's target do not cover, so neither engine runs it here: remove it (or run fio itself)")]
    Refused {
        source_name: String,
        line: usize,
        option: String,
        why: String,
    },
    #[error("{source_name} line {line}: fio's `include` is not supported: paste the included file's sections in")]
    Include { source_name: String, line: usize },
    #[error("{source_name} line {line}: option `{key}` is not supported by disktier's engine: remove it, or run the file through fio with --engine fio (disktier supports {supported})")]
    Unsupported {
        source_name: String,
        line: usize,
        key: String,
        supported: String,
    },
    #[error("{source_name} line {line}: {key}={value}: {fix}")]
    BadValue {
        source_name: String,
        line: usize,
        key: String,
        value: String,
        fix: String,
    },
    #[error("{source_name} line {line}: job [{name}] appears twice: give each job its own name")]
    DuplicateJob {
        source_name: String,
        line: usize,
        name: String,
    },
    #[error("{source_name} has no job section (only [global] or nothing): add a [name] section")]
    NoJobs { source_name: String },
}
