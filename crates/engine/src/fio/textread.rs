//! Reads an fio report (JSON or text) as UTF-8 text, at most a cap, and stops at the first
//! sign the input is not text: a NUL byte (neither fio's JSON nor its text report holds one; JSON
//! forbids raw control characters) or a byte sequence that is not UTF-8. QA (session 29):
//! `import fio /dev/urandom` read 256 MiB (280 MB of memory, 1.6 s) before it said "not UTF-8",
//! and `/dev/zero` the same before "larger than 256 MiB"; a block device named by mistake was
//! read as far.

use std::io::Read;

/// Why [`read_text`] stopped.
#[derive(Debug)]
pub enum TextReadError {
    /// Reading failed (a directory: EISDIR).
    Io(std::io::Error),
    /// More than the cap.
    TooLarge,
    /// Binary data: what gave it away, e.g. "it holds a NUL byte (at byte 0)".
    NotText(String),
}

/// The bytes read per call: small enough that binary input is refused after one.
const CHUNK: usize = 64 << 10;

/// Reads `input` to its end, at most `max` bytes, as UTF-8 text ([`TextReadError`]).
pub fn read_text(mut input: impl Read, max: u64) -> Result<String, TextReadError> {
    let mut buf: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; CHUNK];
    // buf[..valid] is known to be UTF-8; the rest is at most an incomplete character.
    let mut valid = 0usize;
    loop {
        let n = match input.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(TextReadError::Io(e)),
        };
        if let Some(i) = chunk[..n].iter().position(|&b| b == 0) {
            return Err(TextReadError::NotText(format!(
                "it holds a NUL byte (at byte {}): binary data",
                buf.len() + i
            )));
        }
        buf.extend_from_slice(&chunk[..n]);
        if buf.len() as u64 > max {
            return Err(TextReadError::TooLarge);
        }
        match std::str::from_utf8(&buf[valid..]) {
            Ok(_) => valid = buf.len(),
            // A character cut at the chunk's end: the next read completes it.
            Err(e) if e.error_len().is_none() => valid += e.valid_up_to(),
            Err(e) => return Err(not_utf8(valid + e.valid_up_to())),
        }
    }
    String::from_utf8(buf).map_err(|e| not_utf8(e.utf8_error().valid_up_to()))
}

fn not_utf8(at: usize) -> TextReadError {
    TextReadError::NotText(format!("it is not UTF-8 text (at byte {at})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader of endless bytes: `read_text` must stop on its own.
    struct Endless(u8);
    impl Read for Endless {
        fn read(&mut self, b: &mut [u8]) -> std::io::Result<usize> {
            b.fill(self.0);
            Ok(b.len())
        }
    }

    #[test]
    fn binary_input_is_refused_at_its_first_chunk_and_text_is_read_whole() {
        // /dev/zero: a NUL at byte 0, not 256 MiB read first.
        match read_text(Endless(0), 256 << 20) {
            Err(TextReadError::NotText(w)) => assert!(w.contains("NUL byte (at byte 0)"), "{w}"),
            other => panic!("{other:?}"),
        }
        // 0xff is never UTF-8.
        match read_text(Endless(0xff), 256 << 20) {
            Err(TextReadError::NotText(w)) => {
                assert!(w.contains("not UTF-8 text (at byte 0)"), "{w}")
            }
            other => panic!("{other:?}"),
        }
        // Endless text stops at the cap.
        assert!(matches!(
            read_text(Endless(b'{'), 1 << 20),
            Err(TextReadError::TooLarge)
        ));
        // A multi-byte character cut by the chunk boundary is still text.
        let mut s = "a".repeat(CHUNK - 1);
        s.push('é');
        s.push_str("}\n");
        let chunked = std::io::Read::chain(&s.as_bytes()[..CHUNK], &s.as_bytes()[CHUNK..]);
        assert_eq!(read_text(chunked, 1 << 20).unwrap(), s);
        // Exactly the cap is read; one byte more is too large.
        assert_eq!(read_text(&b"{}"[..], 2).unwrap(), "{}");
        assert!(matches!(
            read_text(&b"{} "[..], 2),
            Err(TextReadError::TooLarge)
        ));
    }
}
