//! fio's `write_iolog` files (fio(1), "I/O REPLAY"): version 2 (`fio version 2 iolog`, lines
//! `filename action [offset length]`, time only from `wait` lines in microseconds) and version
//! 3 (`fio version 3 iolog`, fio 3.31+, every line led by a timestamp; fio 3.33 writes it in
//! microseconds since the start of the run, checked against a rate-limited run). Actions
//! `add`/`open`/`close` are skipped; `read`, `write`, `trim` carry data; `sync` and `datasync`
//! become syncs. The stream is the file's index in order of `add`.

use super::{len32, num, scaled, LineParser, Parsed};
use crate::trace::{Op, Record};
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

/// The most files one iolog may name: 2^20, far above fio's jobs times `nrfiles`. The names are
/// kept as 64-bit hashes (two of 2^20 names collide with odds of about 3e-8), so the table
/// holds at most a few tens of MiB whatever the input: before, every distinct name was kept in
/// full and a 400 MB iolog of `add` lines took 420 MB of memory.
pub(crate) const MAX_FILES: usize = 1 << 20;

#[derive(Default)]
pub(crate) struct FioIolog {
    version: Option<u8>,
    /// Each file's index (the stream), by the hash of its name.
    files: HashMap<u64, u32>,
    /// Version 2: time accumulated from `wait` actions.
    clock_ns: u64,
}

impl FioIolog {
    fn stream(&mut self, file: &str) -> Result<u32, String> {
        // SipHash with fixed keys: the same name gives the same index in every run.
        let mut h = DefaultHasher::new();
        file.hash(&mut h);
        let n = self.files.len();
        match self.files.get(&h.finish()) {
            Some(&i) => Ok(i),
            None if n >= MAX_FILES => {
                // A name may be 4 KiB long: the error quotes its start.
                let shown: String = file.chars().take(64).collect();
                Err(format!(
                    "file {shown:?}{} is one more than the {MAX_FILES} files an iolog may name",
                    if shown.len() < file.len() { "..." } else { "" }
                ))
            }
            None => {
                self.files.insert(h.finish(), n as u32);
                Ok(n as u32)
            }
        }
    }
}

impl LineParser for FioIolog {
    fn parse(&mut self, line: &str) -> Result<Parsed, String> {
        let t = line.trim();
        if t.is_empty() {
            return Ok(Parsed::Skip);
        }
        let Some(version) = self.version else {
            return match t {
                "fio version 2 iolog" => {
                    self.version = Some(2);
                    Ok(Parsed::Skip)
                }
                "fio version 3 iolog" => {
                    self.version = Some(3);
                    Ok(Parsed::Skip)
                }
                _ => Err(match t
                    .strip_prefix("fio version ")
                    .and_then(|v| v.strip_suffix(" iolog"))
                {
                    Some(v) => format!(
                        "fio iolog version {v:?} is not supported: disktier reads versions 2 and 3 (`fio version 2 iolog`, `fio version 3 iolog`)"
                    ),
                    None => {
                        "the first line must be `fio version 2 iolog` or `fio version 3 iolog`"
                            .into()
                    }
                }),
            };
        };
        let mut f: Vec<&str> = t.split_whitespace().collect();
        let mut t_ns = self.clock_ns;
        if version == 3 {
            if f.len() < 3 {
                return Err(format!(
                    "{} fields, a v3 line has a timestamp, a file and an action",
                    f.len()
                ));
            }
            t_ns = scaled(num(f[0], "timestamp")?, 1000, "timestamp", "µs")?;
            f.remove(0);
        }
        if f.len() < 2 {
            return Err("expected `filename action`".into());
        }
        let (file, action) = (f[0], f[1]);
        match action {
            "add" | "open" | "close" => {
                self.stream(file)?;
                return Ok(Parsed::Skip);
            }
            _ => {}
        }
        if f.len() != 4 {
            return Err(format!("action {action:?} needs an offset and a length"));
        }
        let offset = num(f[2], "offset")?;
        let length = num(f[3], "length")?;
        let op = match action {
            "read" => Op::Read,
            "write" => Op::Write,
            "trim" => Op::Discard,
            "sync" | "datasync" => Op::Sync,
            "wait" if version == 2 => {
                // fio: "Wait for `offset' microseconds ... relative to the previous wait".
                self.clock_ns = scaled(offset, 1000, "wait time", "µs")?
                    .checked_add(self.clock_ns)
                    .ok_or("the waits add up past 2^64 ns")?;
                return Ok(Parsed::Skip);
            }
            a => return Err(format!("unknown action {a:?}")),
        };
        let len = if op == Op::Sync {
            0
        } else {
            len32(length, "length")?
        };
        let mut r = Record::new(t_ns, if op == Op::Sync { 0 } else { offset }, len, op);
        r.stream = self.stream(file)?;
        r.sync = op == Op::Sync;
        Ok(Parsed::Record(r))
    }
}

#[cfg(test)]
mod tests {
    use super::super::{tests::parse_all, Format, LineParser};
    use crate::trace::Op;

    #[test]
    fn version_2_with_waits() {
        let text = "fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n/dev/sdb write 0 4096\n/dev/sdb wait 500 0\n/dev/sdb read 4096 4096\n/dev/sdb sync 0 0\n/dev/sdb close\n";
        let (rep, recs) = parse_all(Format::FioIolog, text);
        assert_eq!(rep.malformed, 0);
        assert_eq!(recs.len(), 3);
        assert_eq!(
            (recs[1].op, recs[1].offset, recs[1].t_ns),
            (Op::Read, 4096, 500_000)
        );
        assert_eq!(recs[2].op, Op::Sync);
    }

    #[test]
    fn version_3_timestamps() {
        let text = "fio version 3 iolog\n14 /tmp/f add\n109 /tmp/f open\n113 /tmp/f read 0 4096\n460 /tmp/f write 28672 4096\n4328 /tmp/f close\n";
        let (_, recs) = parse_all(Format::FioIolog, text);
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[1].t_ns, (460 - 113) * 1000);
    }

    /// Regression (QA): every distinct file name was kept in full, so an iolog of 200,000
    /// `add` lines of 2 KB names took 420 MB. Names are kept as hashes, at most `MAX_FILES`;
    /// a file past that is a malformed line and the files already named keep their streams.
    #[test]
    fn the_files_an_iolog_names_are_bounded() {
        let mut p = super::FioIolog {
            version: Some(2),
            ..Default::default()
        };
        let long = "x".repeat(2000);
        for i in 0..super::MAX_FILES {
            let name = if i == 7 {
                format!("/f7{long}")
            } else {
                format!("/f{i}")
            };
            assert!(matches!(
                p.parse(&format!("{name} add")),
                Ok(super::Parsed::Skip)
            ));
        }
        let e = p.parse("/another add").err().unwrap();
        assert!(e.contains("one more than the 1048576 files"), "{e}");
        let e = p.parse(&format!("/g{long} read 0 4096")).err().unwrap();
        assert!(e.contains("...") && e.len() < 200, "{e}");
        let Ok(super::Parsed::Record(r)) = p.parse(&format!("/f7{long} read 0 4096")) else {
            panic!("a named file still reads")
        };
        assert_eq!(r.stream, 7);
    }

    #[test]
    fn missing_header_is_malformed() {
        let (rep, _) = parse_all(
            Format::FioIolog,
            "/dev/sdb read 0 4096\nfio version 2 iolog\n/dev/sdb read 0 4096\n",
        );
        assert_eq!((rep.malformed, rep.records), (1, 1));
    }
}
