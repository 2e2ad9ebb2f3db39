//! fio options a job file may not hand to fio either (`--engine fio`): each deletes, writes or
//! reads files that disktier's target checks never see, or runs a program as root. The checks
//! (a device holding data, a file that existed before the run, only created files removed:
//! docs/engine.md, "Safety") cover the job's `filename=` or `directory=` target alone.

/// fio's options (fio HOWTO) that act on files or programs other than the job's target, each
/// with what it does.
const OPTIONS: &[(&str, &str)] = &[
    (
        "unlink",
        "makes fio delete the job's files when it is done, also files that existed before the run",
    ),
    (
        "unlink_each_loop",
        "makes fio delete the job's files after every loop, also files that existed before the run",
    ),
    (
        "opendir",
        "makes fio read and write every file under a directory",
    ),
    ("filename_format", "makes fio name the job's files itself"),
    (
        "read_iolog",
        "makes fio replay the I/O of a log to the files and devices it names",
    ),
    (
        "replay_redirect",
        "makes fio replay a log's I/O to another device",
    ),
    (
        "exec_prerun",
        "makes fio run a command (as disktier's user) before the job",
    ),
    (
        "exec_postrun",
        "makes fio run a command (as disktier's user) after the job",
    ),
];

/// fio's I/O engines that act on files or programs rather than I/O on the target.
const ENGINES: &[(&str, &str)] = &[
    ("filedelete", "deletes the job's files"),
    ("filecreate", "creates and truncates the job's files"),
    ("filestat", "opens every file of the job"),
    ("exec", "runs a program"),
    ("external", "loads an engine from a shared object"),
];

/// The option as written and what it does, when `key` (fio's canonical name) with `value` is
/// refused.
pub fn why(key: &str, value: Option<&str>) -> Option<(String, String)> {
    if let Some((k, what)) = OPTIONS.iter().find(|(k, _)| *k == key) {
        return Some((k.to_string(), what.to_string()));
    }
    let engine = value.filter(|_| key == "ioengine")?;
    let name = engine.split(':').next().unwrap_or(engine).trim();
    let (_, what) = ENGINES.iter().find(|(e, _)| *e == name)?;
    Some((
        format!("ioengine={engine}"),
        format!("selects fio's {name} engine, which {what}"),
    ))
}
