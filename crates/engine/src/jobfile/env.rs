//! `${NAME}` in a job file's option lines, replaced by the environment variable's value as fio
//! does, within the job file's line length.

/// How `${NAME}` in an option line is looked up: the process environment, as fio does.
pub(super) type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Why a line could not be expanded.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Unexpanded {
    /// The variable of this name is not set (or the name is empty).
    Unset(String),
    /// The line with its variables' values would be longer than the limit.
    TooLong,
}

/// `line` with each `${NAME}` replaced by the variable's value, as fio does for every option
/// line (`option_dup_subs` in fio's parse.c). fio reads a variable that is not set as empty,
/// which turns `filename=${DEV}` into no target and `size=${SIZE}` into no size without a
/// word; here it is an error naming the variable. A `$` without `{NAME}` is left as it is
/// (fio's `$pagesize` and `$mb_memory` are then refused as values).
///
/// The expansion stops once it is longer than `max` bytes: a line of 4 KiB naming a variable of
/// 128 KiB (the kernel's limit for one) a thousand times was expanded whole, 150 MiB resident,
/// before its length was refused, and the error gave the expanded length (133,882,005 bytes)
/// for a line of 4,094.
pub(super) fn expand_env(line: &str, env: Env, max: usize) -> Result<String, Unexpanded> {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some((at, end)) = rest
        .find("${")
        .and_then(|at| Some((at, at + 2 + rest[at + 2..].find('}')?)))
    {
        out.push_str(&rest[..at]);
        let name = &rest[at + 2..end];
        let after = &rest[end..];
        let value = env(name)
            .filter(|_| !name.is_empty())
            .ok_or_else(|| Unexpanded::Unset(name.to_string()))?;
        if out.len() + value.len() > max {
            return Err(Unexpanded::TooLong);
        }
        out.push_str(&value);
        rest = &after[1..];
    }
    out.push_str(rest);
    if out.len() > max {
        return Err(Unexpanded::TooLong);
    }
    Ok(out)
}
