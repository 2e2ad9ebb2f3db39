//! The job file parser's unit tests.

use super::*;

fn keys(j: &FileJob) -> Vec<(String, Option<String>)> {
    j.options
        .iter()
        .map(|o| (o.key.clone(), o.value.clone()))
        .collect()
}

#[test]
fn globals_apply_to_later_jobs_and_jobs_override_them() {
    let f = parse(
        "; a comment\n[global]\nbs=4k\ndirect=1\nsize=1m\n\n[a]\nrw=randread\n# x\n[b]\nrw=write\nbs=64k\n[global]\niodepth=8\n[c]\nrw=read\n",
        "t.fio",
    )
    .unwrap();
    assert_eq!(f.jobs.len(), 3);
    let s = |k: &str, v: &str| (k.to_string(), Some(v.to_string()));
    assert_eq!(
        keys(&f.jobs[0]),
        vec![
            s("bs", "4k"),
            s("direct", "1"),
            s("size", "1m"),
            s("rw", "randread")
        ]
    );
    assert_eq!(
        keys(&f.jobs[1]),
        vec![
            s("bs", "64k"),
            s("direct", "1"),
            s("size", "1m"),
            s("rw", "write")
        ]
    );
    assert!(keys(&f.jobs[2]).contains(&s("iodepth", "8")));
    assert!(!keys(&f.jobs[1]).contains(&s("iodepth", "8")));
    assert_eq!(f.jobs[1].options[0].line, 12);
    // No stonewall: one run set, one group.
    assert_eq!(f.run_sets(), vec![vec![0, 1, 2]]);
    assert_eq!(f.groups(), vec![vec![0, 1, 2]]);
}

#[test]
fn stonewall_splits_run_sets_and_new_group_only_reporting() {
    let f = parse(
        "[a]\nrw=read\n[b]\nrw=read\n[c]\nstonewall\nrw=write\n[d]\nnew_group\nrw=write\n[e]\nwait_for_previous=1\ngroup_reporting\nrw=read\n",
        "t",
    )
    .unwrap();
    assert_eq!(f.run_sets(), vec![vec![0, 1], vec![2, 3], vec![4]]);
    assert_eq!(f.groups(), vec![vec![0, 1], vec![2], vec![3], vec![4]]);
    assert!(f.jobs[4].group_reporting && !f.jobs[0].group_reporting);
}

#[test]
fn a_global_stonewall_runs_every_job_alone() {
    let f = parse("[global]\nstonewall\n[a]\n[b]\n[c]\n", "t").unwrap();
    assert_eq!(f.run_sets().len(), 3);
    assert_eq!(f.groups().len(), 3);
}

#[test]
fn group_reporting_in_one_job_covers_its_group() {
    let f = parse("[a]\ngroup_reporting\n[b]\n[c]\nstonewall\n", "t").unwrap();
    assert!(f.jobs[0].group_reporting && f.jobs[1].group_reporting);
    assert!(!f.jobs[2].group_reporting);
}

#[test]
fn aliases_targets_and_ignored_options() {
    let f = parse(
        "[j]\nreadwrite=randrw\nblocksize=8k\nfilename=/tmp/x\ndescription=hello world\nthread\nname=other\n",
        "t",
    )
    .unwrap();
    let j = &f.jobs[0];
    assert_eq!(j.name, "other");
    assert_eq!(j.options[0].key, "rw");
    assert_eq!(j.options[1].key, "bs");
    assert_eq!(j.options.len(), 2);
    assert_eq!(j.target.as_ref().unwrap().value.as_deref(), Some("/tmp/x"));
}

#[test]
fn errors_name_the_option_and_line() {
    let cases: &[(&str, &str)] = &[
        (
            "[a]\nrw=read\nrate_iops=100\n",
            "line 3: option `rate_iops`",
        ),
        ("include other.fio\n[a]\n", "line 1: fio's `include`"),
        ("bs=4k\n[a]\n", "line 1: `bs` comes before"),
        ("[a b]\n", "line 1: `[a b]` is not a section"),
        ("[a\n", "not a section"),
        ("[a]\n[a]\n", "line 2: job [a] appears twice"),
        ("[global]\nbs=4k\n", "no job section"),
        ("", "no job section"),
        ("[a]\nstonewall=maybe\n", "line 2: stonewall=maybe"),
        ("[a]\nfilename=/x:/y\n", "line 2: filename=/x:/y"),
        ("[global]\nname=x\n[a]\n", "line 2: name=x"),
    ];
    for (text, want) in cases {
        let e = parse(text, "t.fio").unwrap_err().to_string();
        assert!(e.contains(want), "{text:?}: {e}");
        assert!(e.starts_with("t.fio"), "{e}");
    }
}

#[test]
fn fio_mode_skips_unknown_options_but_keeps_the_structure() {
    let f = parse_for_fio("[a]\nrate_iops=100\nrw=write\n[b]\nstonewall\n", "t").unwrap();
    assert_eq!(f.jobs[0].options.len(), 1);
    assert_eq!(f.run_sets().len(), 2);
    assert!(parse_for_fio("include x\n[a]\n", "t").is_err());
}

#[test]
fn bounds_hold() {
    let long = format!("[a]\nrw={}\n", "x".repeat(MAX_LINE));
    assert!(matches!(
        parse(&long, "t"),
        Err(JobFileError::LineTooLong { line: 2, .. })
    ));
    let many: String = (0..=MAX_SECTIONS).map(|i| format!("[j{i}]\n")).collect();
    assert!(matches!(
        parse(&many, "t"),
        Err(JobFileError::TooManySections { .. })
    ));
    let opts = format!("[a]\n{}", "bs=4k\n".repeat(MAX_OPTIONS + 1));
    assert!(matches!(
        parse(&opts, "t"),
        Err(JobFileError::TooManyOptions { .. })
    ));
    let big = " ".repeat(MAX_FILE_BYTES + 1);
    assert!(matches!(parse(&big, "t"), Err(JobFileError::TooBig { .. })));
}

/// QA: fio cuts a line at its first `;` or `#` (`rw=write ; sequential` is `rw=write`, and a
/// header may carry a comment); disktier refused the first and ran the second on a file whose
/// name held the comment.
#[test]
fn a_comment_may_follow_a_value_or_a_header() {
    let f = parse(
        "[global] ; shared\nsize=1m # one MiB\n[a] # first job\nrw=write ; sequential\nfilename=/mnt/x.dat ; the file\nstonewall;\n",
        "t",
    )
    .unwrap();
    let j = &f.jobs[0];
    assert_eq!(j.name, "a");
    let s = |k: &str, v: &str| (k.to_string(), Some(v.to_string()));
    assert_eq!(keys(j), vec![s("size", "1m"), s("rw", "write")]);
    assert_eq!(
        j.target.as_ref().unwrap().value.as_deref(),
        Some("/mnt/x.dat")
    );
    assert_eq!(content("  # all comment"), "");
    assert_eq!(content("bs=4k#x;y"), "bs=4k");
}

/// QA: fio puts `filename=` under `directory=` when both are given; disktier measured the
/// file in the current directory.
#[test]
fn a_filename_under_a_directory_is_the_file_in_it() {
    let f = parse(
        "[global]\ndirectory=/mnt/data/\n[a]\nfilename=sub/test.dat\n[b]\n[c]\nfilename=x\ndirectory=/srv\n",
        "t",
    )
    .unwrap();
    let t = |i: usize| f.jobs[i].target.clone().unwrap();
    assert_eq!(
        (t(0).key.as_str(), t(0).value.as_deref(), t(0).line),
        ("filename", Some("/mnt/data/sub/test.dat"), 4)
    );
    assert_eq!(t(1).value.as_deref(), Some("/mnt/data/"));
    assert_eq!(t(1).key, "directory");
    assert_eq!(t(2).value.as_deref(), Some("/srv/x"));
    let e = parse("[global]\ndirectory=/mnt\n[a]\nfilename=/dev/sdb\n", "t")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("line 4: filename=/dev/sdb") && e.contains("/mnt/dev/sdb"),
        "{e}"
    );
}

/// QA: fio replaces `${NAME}` in an option line with the environment variable's value
/// (`filename=${DEV}`); disktier ran `filename=${TGT}` on a new file named `${TGT}` in the
/// current directory, not on the file or device the variable named.
#[test]
fn environment_variables_are_expanded_and_an_unset_one_is_refused() {
    let env = |name: &str| match name {
        "DEV" => Some("/dev/loop7".to_string()),
        "SZ" => Some("64m".to_string()),
        _ => None,
    };
    let f = parse_with(
        "[a]\nfilename=${DEV}\nsize=${SZ}\nrw=write\nbs=$pagesize\nname=j${SZ}x\n",
        "t",
        false,
        &env,
    )
    .unwrap();
    let j = &f.jobs[0];
    assert_eq!(
        j.target.as_ref().unwrap().value.as_deref(),
        Some("/dev/loop7")
    );
    let s = |k: &str, v: &str| (k.to_string(), Some(v.to_string()));
    assert_eq!(
        keys(j),
        vec![s("size", "64m"), s("rw", "write"), s("bs", "$pagesize")]
    );
    assert_eq!(j.name, "j64mx");
    assert_eq!(expand_env("a=${x", &env, MAX_LINE).unwrap(), "a=${x");
    for (text, name) in [
        ("[a]\nfilename=${TGT}\n", "${TGT}"),
        ("[a]\nsize=${}\n", "${}"),
    ] {
        let e = parse_with(text, "t.fio", false, &env).unwrap_err();
        assert!(matches!(e, JobFileError::Unset { line: 2, .. }), "{e}");
        let e = e.to_string();
        assert!(e.contains(name) && e.contains("not set"), "{e}");
    }
}

/// QA on dt-s24: `size=${A}${A}...` (1,022 times, a line of 4,094 bytes) with A set to 131,000
/// bytes was expanded whole, 150 MiB resident, before "the line is 133882005 bytes long" (a
/// length the file does not have); the expansion now stops at the line limit, and the error
/// says the variables made it long.
#[test]
fn a_line_its_variables_make_too_long_is_refused_before_it_is_expanded_whole() {
    let big = "x".repeat(131_000);
    let env = |name: &str| (name == "A").then(|| big.clone());
    let text = format!("[a]\nrw=read\nsize={}\n", "${A}".repeat(1022));
    for lenient in [false, true] {
        let e = parse_with(&text, "t.fio", lenient, &env).unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.fio line 3: with its ${NAME} variables replaced by their values the line is longer than 4096 bytes, which a job file line may be at most: check the variables it names"
        );
    }
    let calls = std::cell::Cell::new(0);
    let counted = |name: &str| {
        calls.set(calls.get() + 1);
        env(name)
    };
    let _ = expand_env(&"${A}".repeat(1022), &counted, MAX_LINE);
    assert_eq!(calls.get(), 1, "expanded past the limit");
    // Up to the limit, as before.
    let small = |_: &str| Some("y".repeat(4000));
    assert_eq!(
        expand_env("size=${A}", &small, MAX_LINE).unwrap().len(),
        4005
    );
    assert_eq!(
        expand_env("size=${A}${A}", &small, MAX_LINE),
        Err(Unexpanded::TooLong)
    );
}

/// With `--engine fio`, an option only fio reads keeps its unset variable (fio's business);
/// a target's is refused all the same.
#[test]
fn fio_mode_refuses_an_unset_variable_only_where_disktier_reads_it() {
    let env = |_: &str| None;
    let f = parse_with("[a]\nwrite_bw_log=${LOGS}/bw\nrw=write\n", "t", true, &env).unwrap();
    assert_eq!(keys(&f.jobs[0]).len(), 1);
    let e = parse_with("[a]\nfilename=${DEV}\n", "t", true, &env).unwrap_err();
    assert!(matches!(e, JobFileError::Unset { line: 2, .. }), "{e}");
}

/// QA: `unlink` was refused with "run the file through fio with --engine fio", where fio then
/// deleted the existing file a read job named. Options that act on files or programs beyond
/// the target are refused in both modes, and so are fio's engines that do.
#[test]
fn options_that_act_beyond_the_target_are_refused_in_both_modes() {
    for (text, option) in [
        ("[a]\nunlink=1\n", "`unlink`"),
        ("[a]\nunlink_each_loop\n", "`unlink_each_loop`"),
        ("[a]\nopendir=/var/lib\n", "`opendir`"),
        ("[a]\nread_iolog=x.log\n", "`read_iolog`"),
        ("[a]\nexec_prerun=true\n", "`exec_prerun`"),
        ("[a]\nioengine=exec\n", "`ioengine=exec`"),
        (
            "[a]\nioengine=external:/x.so\n",
            "`ioengine=external:/x.so`",
        ),
    ] {
        for e in [parse(text, "t"), parse_for_fio(text, "t")] {
            let e = e.unwrap_err();
            assert!(matches!(e, JobFileError::Refused { line: 2, .. }), "{e}");
            let e = e.to_string();
            assert!(e.contains(option) && !e.contains("--engine fio"), "{e}");
        }
    }
    assert!(parse_for_fio("[a]\nioengine=libaio\nrate_iops=10\n", "t").is_ok());
}

/// QA (session 29): `rw=wr\0ite` was refused as "unknown rw `write`" (the NUL unseen), and a
/// NUL in a section header or a value reached the messages raw. A control character but tab is
/// refused naming its line and column, in the file or in a ${VAR}'s value; in a comment it is
/// left alone.
#[test]
fn a_control_character_is_refused_naming_line_and_column() {
    for (text, want) in [
        (
            "[a]\nrw=wr\0ite\n",
            "t.fio line 2: column 6 holds the control character U+0000",
        ),
        (
            "[a\x1bb]\n",
            "t.fio line 1: column 3 holds the control character U+001B",
        ),
        (
            "[a]\nfilename=/x\x7f\n",
            "line 2: column 12 holds the control character U+007F",
        ),
    ] {
        let e = parse(text, "t.fio").unwrap_err().to_string();
        assert!(
            e.starts_with("t.fio line ") && e.contains(want),
            "{text:?}: {e}"
        );
        assert!(!e.contains('\0') && !e.contains('\x1b'), "{e:?}");
    }
    let env = |_: &str| Some("/x\ny".to_string());
    let e = parse_with("[a]\nfilename=${D}\n", "t.fio", false, &env).unwrap_err();
    assert!(e.to_string().contains("line 2: column 12 holds"), "{e}");
    // A tab separates, and a comment may hold anything.
    assert!(parse("[a]\nrw=write\t; \0 \x1b\nsize=1m\n", "t.fio").is_ok());
}
