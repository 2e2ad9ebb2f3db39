//! The short verdict a node command leaves for Kubernetes: when `DISKTIER_TERMINATION_LOG`
//! names a file (fleet's Jobs set it to `/dev/termination-log`), the last thing disktier does is
//! write one line there: `verdict: pass`, `verdict: fail` or `error: <message>`. The kubelet
//! copies that file into the container's terminated state (`message`, at most 4,096 bytes:
//! Kubernetes API reference, ContainerStateTerminated), so `fleet` has the verdict even when the
//! pod's log, which carries the whole document, cannot be read or was cut.

use std::path::Path;

/// The environment variable that names the file.
pub const ENV: &str = "DISKTIER_TERMINATION_LOG";

/// What the kubelet keeps of the file (bytes).
pub const MAX_BYTES: usize = 4096;

/// The line for an outcome: `Ok(true)` pass, `Ok(false)` fail, `Err(message)` an error.
pub fn line(outcome: Result<bool, &str>) -> String {
    let s = match outcome {
        Ok(true) => "verdict: pass".to_string(),
        Ok(false) => "verdict: fail".to_string(),
        Err(e) => {
            let one: String = e
                .chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect();
            format!("error: {}", one.trim())
        }
    };
    cut(s, MAX_BYTES)
}

fn cut(mut s: String, max: usize) -> String {
    if s.len() > max {
        let mut i = max;
        while !s.is_char_boundary(i) {
            i -= 1;
        }
        s.truncate(i);
    }
    s
}

/// Writes the line when the environment asks for it. A failure here must not change the
/// command's own outcome: it is reported on stderr and otherwise ignored.
pub fn write_from_env(outcome: Result<bool, &str>) {
    let Some(path) = std::env::var_os(ENV) else {
        return;
    };
    if path.is_empty() {
        return;
    }
    // O_NONBLOCK: a FIFO at the name with no reader fails at once (ENXIO) instead of holding
    // the command at its exit for ever (QA); a regular file is written as before.
    let written = {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(Path::new(&path))
            .and_then(|mut f| f.write_all(line(outcome).as_bytes()))
    };
    if let Err(e) = written {
        errln!(
            "note: could not write the verdict to {} ({ENV}): {e}",
            Path::new(&path).display()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_one_line_and_fit_the_kubelet_limit() {
        assert_eq!(line(Ok(true)), "verdict: pass");
        assert_eq!(line(Ok(false)), "verdict: fail");
        assert_eq!(line(Err("a\nb")), "error: a b");
        let long = "é".repeat(5000);
        let l = line(Err(&long));
        assert!(l.len() <= MAX_BYTES && l.starts_with("error: é"));
        assert!(!l.contains('\n'));
    }
}
