//! Fuzz targets (bolero) for every parser of outside input in cachesim: the DTTRACE reader and
//! each trace importer, plain and through the gzip and zstd wrappers. Each runs over its corpus
//! in `tests/__fuzz__/<target>/corpus` and briefly on random inputs in `cargo test`;
//! `bench/fuzz.sh TARGET MINUTES` runs one long. Property: any input gives records or an error,
//! never a panic, an abort (the allocator cap) or a slow input; every record passes
//! `Record::check`, and a trace written from them reads back the same.

use disktier_cachesim::import::{import_reader, Format};
use disktier_cachesim::trace::Header;
use disktier_cachesim::{Reader, Record, Writer};
use disktier_testkit::fuzz::CappedAlloc;
use disktier_testkit::fuzz_target;
use std::path::Path;

#[global_allocator]
static ALLOC: CappedAlloc = CappedAlloc::new(1 << 30);

fn read_all(bytes: &[u8]) -> Vec<Record> {
    let Ok(r) = Reader::new(bytes, "fuzz") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for rec in r {
        match rec {
            Ok(rec) => {
                assert!(rec.check().is_ok(), "{rec:?}");
                out.push(rec);
            }
            Err(_) => break,
        }
    }
    out
}

#[test]
fn fuzz_dttrace() {
    fuzz_target!("fuzz_dttrace", |input| {
        let recs = read_all(input);
        // What was read writes and reads back the same.
        let mut w = Writer::new(Vec::new(), &Header::new("fuzz", 0, 0)).unwrap();
        for r in &recs {
            w.write(r).unwrap();
        }
        let again = read_all(&w.finish().unwrap());
        assert_eq!(
            again
                .iter()
                .map(|r| (r.t_ns, r.offset, r.len, r.op))
                .collect::<Vec<_>>(),
            recs.iter()
                .map(|r| (r.t_ns, r.offset, r.len, r.op))
                .collect::<Vec<_>>()
        );
    });
}

/// `prefix` selects the wrapper: the gzip or zstd magic makes the importer decompress.
fn import_target(target: &str, format: Format, prefix: &'static [u8]) {
    fuzz_target!(target, |input| {
        let mut bytes = prefix.to_vec();
        bytes.extend_from_slice(input);
        for strict in [false, true] {
            let src = std::io::Cursor::new(bytes.clone());
            if let Ok((rep, out)) =
                import_reader(format, src, Path::new("fuzz"), Vec::new(), strict)
            {
                let recs = read_all(&out);
                assert_eq!(recs.len() as u64, rep.records);
            }
        }
    });
}

/// Declares each importer target as a test named as its target (and corpus): `bench/fuzz.sh`
/// finds a target by its `fn fuzz_NAME()`.
macro_rules! import_targets {
    ($(fn $name:ident() = ($format:expr, $prefix:expr);)*) => {$(
        #[test]
        fn $name() {
            import_target(stringify!($name), $format, $prefix);
        }
    )*};
}

import_targets! {
    fn fuzz_import_blkparse() = (Format::Blkparse, b"");
    fn fuzz_import_msr() = (Format::Msr, b"");
    fn fuzz_import_alibaba() = (Format::Alibaba, b"");
    fn fuzz_import_tencent() = (Format::Tencent, b"");
    fn fuzz_import_fio_iolog() = (Format::FioIolog, b"");
    fn fuzz_import_gzip() = (Format::Msr, &[0x1f, 0x8b]);
    fn fuzz_import_zstd() = (Format::Alibaba, &[0x28, 0xb5, 0x2f, 0xfd]);
}
