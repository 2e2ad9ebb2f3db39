//! The application's services, below the command line: measure a workload with either engine,
//! judge a result, save it to the store (or the spool), and log the I/O as a trace; run a fio
//! job file, import other tools' results, aggregate repeated runs, plan storage within a budget,
//! price a volume, simulate and describe traces, choose a report's runs and write it, look up an
//! instance type's local disks, write rendered files and set up (or undo) local disks. They take
//! plain typed requests, so `bench`, `check`, `assess`, `import`, `trace record`, `interfere`,
//! `fleet`'s node command and a job-file runner share one path: the `cmd` modules parse
//! options, call one of these, and print. (`job::JobOptions` derives clap's parser, so the commands and job files read fio's
//! options through one definition, but it is a plain struct of `Option`s any caller fills.)

pub mod assess;
pub mod check;
pub mod fleet;
pub mod import;
pub mod interfere;
pub mod job;
pub mod jobfile;
pub mod judge;
pub mod measure;
pub mod plan;
pub mod price;
pub mod render;
pub mod repeat;
pub mod report;
pub mod save;
pub mod setup;
pub mod simulate;
pub mod target;
pub mod tracelog;
pub mod traceread;
pub mod tracestats;

/// The version of every JSON document disktier prints or stores (`schema_version`): one
/// constant, the result document's.
pub use disktier_engine::result::SCHEMA_VERSION;
