//! Drives the engine without the CLI (for bench/vs-fio.sh and debugging):
//! `engine JOB_JSON` runs a job given as JSON with fio's option names, or
//! `engine --profile NAME TARGET [--quick]` runs a built-in profile. Prints the result document.

use disktier_engine::{run, run_workload, Job, Profile, RunOptions};
use std::path::Path;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let keep = args.iter().any(|a| a == "--keep-files");
    let opts = RunOptions {
        quick,
        keep_files: keep,
        progress: std::env::var_os("ENGINE_PROGRESS").map(|_| {
            std::sync::Arc::new(|p: &disktier_engine::Progress| {
                eprintln!(
                    "{:>6.2}s {:<6} {:>10.0} IOPS p99 {:?} eta {:?}",
                    p.elapsed.as_secs_f64(),
                    p.phase,
                    p.iops,
                    p.p99_ns,
                    p.eta
                )
            }) as _
        }),
        ..RunOptions::default()
    };
    let r = if args.first().map(String::as_str) == Some("--profile") {
        let p = Profile::from_name(&args[1]).expect("unknown profile");
        let opts = RunOptions {
            profile: Some(p.name().into()),
            ..opts
        };
        run_workload(&p.workload(Path::new(&args[2]), quick), &opts)
    } else {
        let job: Job = serde_json::from_str(&args[0]).expect("job JSON");
        run(&job, &opts)
    };
    match r {
        Ok(m) => println!("{}", serde_json::to_string_pretty(&m.doc).unwrap()),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
