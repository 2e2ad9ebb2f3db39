//! QA: `trace import -o` truncated its output in place. The same file under another name
//! (`./x`, a symlink) destroyed the input, and Ctrl-C left a truncated trace where a good one
//! was. Now the trace goes to a temporary file beside the output and is renamed over it at the
//! end; an output that is the input (by device and inode) is refused before anything is
//! written; an error or a signal leaves the output as it was and no temporary file behind.

use disktier_testkit::cli::disktier;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../cachesim/tests/fixtures/msr.csv")
}

/// `n` well-formed MSR lines (Windows filetime, host, disk, type, offset, size, response).
fn msr_lines(from: u64, n: u64) -> String {
    (from..from + n)
        .map(|i| {
            format!(
                "{},hm,0,Write,{},4096,100\n",
                128166372000000000 + i * 1000,
                i * 4096
            )
        })
        .collect()
}

/// The files in `dir` that are an import's temporary file.
/// `disktier --no-save trace import msr INPUT -o OUT`.
fn import_msr(input: impl AsRef<Path>, out: impl AsRef<Path>) -> assert_cmd::Command {
    let mut c = disktier();
    c.args(["--no-save", "trace", "import", "msr"])
        .arg(input.as_ref())
        .arg("-o")
        .arg(out.as_ref());
    c
}

fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        // The temporary file beside the output (disktier_atomicfile: `.NAME.<random>.tmp`).
        .filter(|n| n.starts_with('.') && n.ends_with(".tmp"))
        .collect()
}

#[test]
fn the_input_under_another_name_is_refused_and_kept() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("in.csv");
    std::fs::copy(fixture(), &input).unwrap();
    let before = std::fs::read(&input).unwrap();
    std::os::unix::fs::symlink("in.csv", d.path().join("link.csv")).unwrap();
    std::fs::hard_link(&input, d.path().join("hard.csv")).unwrap();
    // (input as given, -o as given), run in the directory.
    for (from, to) in [
        ("in.csv", "./in.csv"),
        ("in.csv", "in.csv"),
        ("link.csv", "in.csv"),
        ("in.csv", "link.csv"),
        ("hard.csv", "./in.csv"),
    ] {
        let out = disktier()
            .current_dir(d.path())
            .args(["--no-save", "trace", "import", "msr", from, "-o", to])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{from} -o {to}: {err}");
        assert!(
            err.contains(&format!("-o {to} is the input file {from}")),
            "{from} -o {to}: {err}"
        );
        assert_eq!(std::fs::read(&input).unwrap(), before, "{from} -o {to}");
    }
}

#[test]
fn a_failed_import_leaves_the_output_as_it_was() {
    let d = tempfile::tempdir().unwrap();
    let good = d.path().join("good.dtt");
    import_msr(fixture(), &good).assert().success();
    let before = std::fs::read(&good).unwrap();
    let empty = d.path().join("empty.csv");
    std::fs::write(&empty, "").unwrap();
    let out = import_msr(&empty, &good).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read(&good).unwrap(), before);
    assert_eq!(leftovers(d.path()), Vec::<String>::new());
    // A new name stays absent.
    let new = d.path().join("new.dtt");
    import_msr(&empty, &new).assert().code(2);
    assert!(!new.exists());
}

/// An import from a FIFO the test feeds onto an existing good trace, sent SIGINT after the
/// first 1,000 lines, then `after_signal` with the feed (more input, or its end): the import
/// must end as interrupted, leaving the trace as it was and no temporary file.
fn ctrl_c_during_import(after_signal: impl FnOnce(std::fs::File)) {
    let d = tempfile::tempdir().unwrap();
    let good = d.path().join("good.dtt");
    import_msr(fixture(), &good).assert().success();
    let before = std::fs::read(&good).unwrap();
    let fifo = d.path().join("feed.csv");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let child = Command::new(env!("CARGO_BIN_EXE_disktier"))
        .args(["--no-save", "trace", "import", "msr"])
        .arg(&fifo)
        .arg("-o")
        .arg(&good)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Opening the FIFO for writing waits for the import to open it (after it set up its
    // signal handling).
    let mut feed = std::fs::File::options().write(true).open(&fifo).unwrap();
    feed.write_all(msr_lines(0, 1000).as_bytes()).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap()
        .success());
    std::thread::sleep(std::time::Duration::from_millis(300));
    // The feed stays open until `after_signal` is done with it.
    let wait = std::thread::spawn(move || child.wait_with_output().unwrap());
    after_signal(feed);
    let out = wait.join().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("interrupted by a signal: nothing was written"),
        "{err}"
    );
    assert_eq!(std::fs::read(&good).unwrap(), before, "the trace changed");
    assert_eq!(leftovers(d.path()), Vec::<String>::new());
}

/// SIGINT while the input is still being read (a FIFO the test feeds: the signal lands
/// mid-import, however fast the machine), and more input: the import reads again, sees the
/// stop and ends (a finished import would replace the trace).
#[test]
fn ctrl_c_leaves_the_existing_trace_untouched() {
    ctrl_c_during_import(|mut feed| {
        let _ = feed.write_all(msr_lines(1000, 2000).as_bytes());
        // Open until the import has ended: `feed` drops with the process gone.
        std::thread::sleep(std::time::Duration::from_millis(500));
    });
}

/// Found by the QA re-test: a signal that came while the import waited for input (a pipe, a
/// FIFO) was lost when the input then ended: the cut-short trace replaced the good one, exit 0.
/// The producer ends too (Ctrl-C reaches it as well): the import sees the end of input.
#[test]
fn ctrl_c_while_waiting_for_input_then_its_end_keeps_the_old_trace() {
    ctrl_c_during_import(drop);
}

/// Found by the QA re-test: `-o /dev/null` renamed a file over the device node (as root, the
/// machine's /dev/null became a regular file). A character device or a FIFO is written into;
/// a block device is refused. Private device nodes stand in for /dev/null, /dev/full and a disk.
#[test]
fn a_device_or_fifo_output_is_written_into_or_refused_never_replaced() {
    use std::os::unix::fs::FileTypeExt;
    let d = tempfile::tempdir().unwrap();
    let mknod = |name: &str, kind: &str, major: &str, minor: &str| {
        let p = d.path().join(name);
        assert!(Command::new("mknod")
            .arg(&p)
            .args([kind, major, minor])
            .status()
            .unwrap()
            .success());
        p
    };
    let kind = |p: &std::path::Path| std::fs::metadata(p).unwrap().file_type();
    // An import into `node` that fails with exit 2 naming `says`.
    let fails = |node: &std::path::Path, says: &str| {
        let out = import_msr(fixture(), node).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains(says));
    };
    let null = mknod("null", "c", "1", "3");
    import_msr(fixture(), &null).assert().success();
    assert!(kind(&null).is_char_device());
    let full = mknod("full", "c", "1", "7");
    fails(
        &full,
        &format!(
            "error: cannot write the trace {}: No space left on device (os error 28): free space there, or write the trace (-o) elsewhere",
            full.display()
        ),
    );
    assert!(kind(&full).is_char_device());
    // A block device node (loop minor 250, which nothing here attaches): refused before any
    // write, and left as it is.
    let disk = mknod("disk", "b", "7", "250");
    fails(&disk, "a block device");
    assert!(kind(&disk).is_block_device());
    // A FIFO gets the trace as it is written.
    let fifo = d.path().join("out.fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let mut child = Command::new(env!("CARGO_BIN_EXE_disktier"))
        .args(["--no-save", "trace", "import", "msr"])
        .arg(fixture())
        .arg("-o")
        .arg(&fifo)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let got = std::fs::read(&fifo).unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(&got[..7], b"DTTRACE", "{:?}", &got[..got.len().min(16)]);
    assert!(kind(&fifo).is_fifo());
    assert_eq!(leftovers(d.path()), Vec::<String>::new());
}

/// QA (session 27): an import onto a full filesystem failed with 'I/O error on the trace
/// stream: No space left on device (os error 28)', naming neither the output nor the fix. It
/// names both now, and leaves neither a partial trace nor its temporary file.
#[test]
fn an_import_onto_a_full_filesystem_names_the_output_and_the_fix() {
    let Some(small) = disktier_testkit::Mount::tmpfs_if_root(64 << 10) else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("in.csv");
    // 100,000 records, about 300 KB of trace.
    std::fs::write(&input, msr_lines(0, 100_000)).unwrap();
    let out = small.dir.join("t.dttrace");
    let run = import_msr(&input, &out).output().unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "error: cannot write the trace {}: No space left on device (os error 28): free space there, or write the trace (-o) elsewhere",
            out.display()
        )),
        "{stderr}"
    );
    assert!(!out.exists());
    assert_eq!(std::fs::read_dir(&small.dir).unwrap().count(), 0);
}

/// `-` reads standard input (a pipe from `blkparse -o -`, or a gzip stream), and gives the
/// same trace as the file; before, `-` was looked for as a file and not found (session 21's
/// left item). Standard input redirected from the output file is still refused.
#[test]
fn dash_reads_standard_input() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("in.csv");
    std::fs::write(&input, msr_lines(0, 500)).unwrap();
    let from_file = d.path().join("file.dttrace");
    import_msr(&input, &from_file).assert().success();
    // Through a pipe, gzip-compressed: nothing to seek, the magic bytes read from the stream.
    let gz = Command::new("gzip")
        .arg("-c")
        .arg(&input)
        .output()
        .unwrap()
        .stdout;
    assert_eq!(gz[..2], [0x1f, 0x8b]);
    let from_pipe = d.path().join("pipe.dttrace");
    let mut child = Command::new(env!("CARGO_BIN_EXE_disktier"))
        .args(["--no-save", "trace", "import", "msr", "-", "-o"])
        .arg(&from_pipe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&gz).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("imported 500 requests"), "{said}");
    assert!(said.contains("compression gzip"), "{said}");
    assert_eq!(
        std::fs::read(&from_pipe).unwrap(),
        std::fs::read(&from_file).unwrap()
    );
    // `< pipe.dttrace -o pipe.dttrace`: the input is the output.
    let before = std::fs::read(&from_pipe).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_disktier"))
        .args(["--no-save", "trace", "import", "msr", "-", "-o"])
        .arg(&from_pipe)
        .stdin(std::fs::File::open(&from_pipe).unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read(&from_pipe).unwrap(), before);
}
