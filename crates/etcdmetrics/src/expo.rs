//! The Prometheus text exposition format (version 0.0.4, what etcd's `/metrics` serves), parsed
//! into samples. The input comes from the network, so the parser is bounded: a body over
//! [`MAX_BODY_BYTES`], a line over [`MAX_LINE_BYTES`], more than [`MAX_SAMPLES`] samples or
//! [`MAX_LABELS`] labels on one sample is an error, never a panic or an unbounded allocation.
//! Format reference: prometheus.io, "Exposition formats", text-based format.

use crate::error::Error;

/// Largest body read or parsed: 16 MiB. An etcd member's /metrics is around 100-300 KiB.
pub const MAX_BODY_BYTES: usize = 16 << 20;
/// Longest line: 64 KiB (the longest etcd line is under 1 KiB).
pub const MAX_LINE_BYTES: usize = 64 << 10;
/// Most samples in one body (etcd serves about 1,500-3,000).
pub const MAX_SAMPLES: usize = 200_000;
/// Most labels on one sample.
pub const MAX_LABELS: usize = 64;

/// One sample line: `name{label="value",...} value [timestamp]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub name: String,
    pub labels: Vec<(String, String)>,
    pub value: f64,
}

impl Sample {
    /// The value of label `key`, if present.
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// Parses a whole exposition body. Comment lines (`# HELP`, `# TYPE`, others) and blank lines
/// are skipped; any malformed sample line is an error naming its line number.
pub fn parse(body: &str) -> Result<Vec<Sample>, Error> {
    if body.len() > MAX_BODY_BYTES {
        return Err(Error::TooLarge {
            what: "metrics body",
            limit: MAX_BODY_BYTES,
        });
    }
    let mut out = Vec::new();
    for (i, line) in body.split('\n').enumerate() {
        let lineno = i + 1;
        if line.len() > MAX_LINE_BYTES {
            return Err(Error::TooLarge {
                what: "metrics line",
                limit: MAX_LINE_BYTES,
            });
        }
        let line = line.trim_end_matches('\r').trim_start_matches([' ', '\t']);
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if out.len() >= MAX_SAMPLES {
            return Err(Error::TooLarge {
                what: "number of metrics samples",
                limit: MAX_SAMPLES,
            });
        }
        out.push(parse_line(line).map_err(|why| Error::Parse { line: lineno, why })?);
    }
    Ok(out)
}

fn is_name_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c == b':'
}

fn is_name_char(c: u8) -> bool {
    is_name_start(c) || c.is_ascii_digit()
}

fn parse_line(line: &str) -> Result<Sample, String> {
    let b = line.as_bytes();
    let mut i = 0;
    if b.is_empty() || !is_name_start(b[0]) {
        return Err("a sample line must start with a metric name".into());
    }
    while i < b.len() && is_name_char(b[i]) {
        i += 1;
    }
    let name = line[..i].to_string();
    let mut labels = Vec::new();
    if i < b.len() && b[i] == b'{' {
        i += 1;
        loop {
            while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
                i += 1;
            }
            if i >= b.len() {
                return Err("unterminated label set".into());
            }
            if b[i] == b'}' {
                i += 1;
                break;
            }
            let start = i;
            if !is_name_start(b[i]) || b[i] == b':' {
                return Err(format!("bad label name at column {}", i + 1));
            }
            while i < b.len() && is_name_char(b[i]) && b[i] != b':' {
                i += 1;
            }
            let key = line[start..i].to_string();
            if i + 1 >= b.len() || b[i] != b'=' || b[i + 1] != b'"' {
                return Err(format!("label {key} needs =\"value\""));
            }
            i += 2;
            let mut val = String::new();
            loop {
                // Byte-wise scan; the value is re-sliced on char boundaries (quotes and
                // backslashes are ASCII, so they never fall inside a multi-byte char).
                let seg = i;
                while i < b.len() && b[i] != b'"' && b[i] != b'\\' {
                    i += 1;
                }
                val.push_str(&line[seg..i]);
                if i >= b.len() {
                    return Err(format!("unterminated value of label {key}"));
                }
                if b[i] == b'"' {
                    i += 1;
                    break;
                }
                // Backslash escape: \\, \" and \n are the only ones the format defines.
                match b.get(i + 1) {
                    Some(b'\\') => val.push('\\'),
                    Some(b'"') => val.push('"'),
                    Some(b'n') => val.push('\n'),
                    _ => return Err(format!("bad escape in the value of label {key}")),
                }
                i += 2;
            }
            if labels.len() >= MAX_LABELS {
                return Err(format!("more than {MAX_LABELS} labels"));
            }
            labels.push((key, val));
            while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
                i += 1;
            }
            match b.get(i) {
                Some(b',') => i += 1,
                Some(b'}') => {}
                _ => return Err("expected , or } after a label".into()),
            }
        }
    }
    let rest = &line[i..];
    if !rest.starts_with([' ', '\t']) {
        return Err(format!("expected a space and a value after {name}"));
    }
    let mut fields = rest.split_ascii_whitespace();
    let value = fields
        .next()
        .ok_or_else(|| format!("no value for {name}"))
        .and_then(parse_value)?;
    if let Some(ts) = fields.next() {
        ts.parse::<i64>()
            .map_err(|_| format!("bad timestamp {ts:?} for {name}"))?;
    }
    if fields.next().is_some() {
        return Err(format!("trailing text after the value of {name}"));
    }
    Ok(Sample {
        name,
        labels,
        value,
    })
}

/// A sample value: a Go float, `+Inf`, `-Inf` or `NaN`.
pub fn parse_value(s: &str) -> Result<f64, String> {
    match s {
        "+Inf" | "Inf" => Ok(f64::INFINITY),
        "-Inf" => Ok(f64::NEG_INFINITY),
        "NaN" => Ok(f64::NAN),
        _ if s.len() <= 64
            && s.bytes()
                .all(|c| c.is_ascii_digit() || b"+-.eE".contains(&c)) =>
        {
            s.parse::<f64>().map_err(|_| format!("bad value {s:?}"))
        }
        _ => Err(format!("bad value {:?}", truncate(s, 40))),
    }
}

fn truncate(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_etcd_lines() {
        let body = "# HELP etcd_disk_wal_fsync_duration_seconds The latency distributions of fsync called by WAL.\n\
# TYPE etcd_disk_wal_fsync_duration_seconds histogram\n\
etcd_disk_wal_fsync_duration_seconds_bucket{le=\"0.001\"} 12\n\
etcd_disk_wal_fsync_duration_seconds_bucket{le=\"+Inf\"} 20\n\
etcd_disk_wal_fsync_duration_seconds_sum 0.125\n\
etcd_server_leader_changes_seen_total 1\n\
go_info{version=\"go1.19 \\\"x\\\"\\\\ \\n\",a=\"\"} 1 1700000000000\r\n\
\n";
        let s = parse(body).unwrap();
        assert_eq!(s.len(), 5);
        assert_eq!(s[0].label("le"), Some("0.001"));
        assert_eq!(s[0].value, 12.0);
        assert_eq!(s[1].label("le"), Some("+Inf"));
        assert_eq!(s[2].value, 0.125);
        assert!(s[3].labels.is_empty());
        assert_eq!(s[4].label("version"), Some("go1.19 \"x\"\\ \n"));
        assert_eq!(s[4].label("a"), Some(""));
    }

    #[test]
    fn values() {
        assert_eq!(parse_value("+Inf").unwrap(), f64::INFINITY);
        assert_eq!(parse_value("-Inf").unwrap(), f64::NEG_INFINITY);
        assert!(parse_value("NaN").unwrap().is_nan());
        assert_eq!(parse_value("1.5e-3").unwrap(), 0.0015);
        assert!(parse_value("infinity").is_err());
        assert!(parse_value("0x10").is_err());
    }

    #[test]
    fn malformed_lines_name_their_line() {
        for bad in [
            "x{le=\"1\" 3",
            "x{le=1} 3",
            "x 3 4 5",
            "x",
            "x{le=\"\\q\"} 1",
            "9x 1",
            "x{a=\"1\",} ",
        ] {
            let e = parse(&format!("ok 1\n{bad}\n")).unwrap_err();
            assert!(e.to_string().contains("line 2"), "{bad}: {e}");
        }
        // A trailing comma in a label set is accepted by Prometheus.
        assert_eq!(parse("x{a=\"1\",} 2").unwrap()[0].value, 2.0);
    }

    #[test]
    fn limits_hold() {
        let long = format!("x{{a=\"{}\"}} 1", "y".repeat(MAX_LINE_BYTES));
        assert!(parse(&long).unwrap_err().to_string().contains("line"));
        let many: String = (0..=MAX_SAMPLES).map(|i| format!("m{i} 1\n")).collect();
        assert!(parse(&many).unwrap_err().to_string().contains("samples"));
        let labels: Vec<String> = (0..=MAX_LABELS).map(|i| format!("l{i}=\"v\"")).collect();
        assert!(parse(&format!("x{{{}}} 1", labels.join(","))).is_err());
    }
}
