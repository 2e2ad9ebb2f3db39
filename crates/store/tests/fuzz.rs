//! Fuzz targets (bolero) for everything the store reads from outside: spooled documents, stored
//! documents as the report and `compare` read them back (a corrupt or hostile row), and
//! database locations (parsing and credential redaction).
//!
//! In `cargo test` each target replays its checked-in corpus (`tests/__fuzz__/<target>/corpus`)
//! and then runs random inputs for a short, capped time; `bench/fuzz.sh TARGET MINUTES` (or
//! `BOLERO_RANDOM_TEST_TIME_MS=...`) runs one long. Each input must finish within
//! [`WATCHDOG_LIMIT`](disktier_testkit::fuzz::WATCHDOG_LIMIT) (a watchdog aborts the process otherwise) and inputs are at most
//! [`MAX_INPUT`](disktier_testkit::fuzz::MAX_INPUT) bytes, which bounds the memory any one input can ask for.

use disktier_catalog::plan::StoragePlan;
use disktier_store::pgconn::{self, PgTarget};
use disktier_store::report::{render, ReportInput};
use disktier_store::spool::Spooled;
use disktier_store::{NewRun, StoredRun};
use disktier_testkit::bolero_check;
use disktier_testkit::fuzz::guarded;
use serde_json::Value;

/// Memory is capped as in the other crates' targets (docs/fuzzing.md, "Limits in the harness"):
/// an input that allocates past it aborts the run instead of taking the machine's memory.
#[global_allocator]
static ALLOC: disktier_testkit::fuzz::CappedAlloc =
    disktier_testkit::fuzz::CappedAlloc::new(1 << 30);

use disktier_testkit::cli::store_fixture as fixture;

fn stored(id: &str, kind: &str, doc: &Value) -> StoredRun {
    NewRun {
        kind,
        group_id: None,
        doc,
    }
    .to_row(id.into(), "2026-01-01T00:00:00.000000Z".into())
}

/// A page must never carry a tag that came from a document: every `<` from input is escaped.
fn assert_escaped(page: &str) {
    assert!(
        !page.contains("<fuzz"),
        "an injected tag reached the page unescaped"
    );
}

#[test]
fn fuzz_spooled() {
    bolero_check!().for_each(|input: &[u8]| {
        guarded(|| {
            if let Ok(s) = Spooled::parse(input) {
                assert!(disktier_store::spool::is_run_id(&s.id));
                assert!(s.doc.is_object());
            }
        })
    });
}

#[test]
fn fuzz_stored_doc() {
    // A stored document is whatever JSON a row holds: the report and compare read it back.
    let base = stored("base", "check", &fixture("quick-etcd"));
    bolero_check!().for_each(|input: &[u8]| {
        guarded(|| {
            let Ok(doc) = serde_json::from_slice::<Value>(input) else {
                return;
            };
            for kind in ["check", "interfere"] {
                let runs = [base.clone(), stored("fuzzed", kind, &doc)];
                if let Ok(page) = render(&ReportInput::new(&runs, "now")) {
                    assert_escaped(&page);
                }
            }
            if let Ok(d) = serde_json::from_value::<disktier_engine::RunDoc>(doc.clone()) {
                let a: disktier_engine::RunDoc =
                    serde_json::from_value(fixture("quick-etcd")).unwrap();
                let side = |id, doc| disktier_store::compare::Compared {
                    id,
                    kind: "check",
                    doc,
                };
                let _ = disktier_store::compare::compare(&[side("a", &a), side("b", &d)], true);
            }
            // As a plan document too, when it reads as one.
            if let Ok(plan) = serde_json::from_value::<StoragePlan>(doc.clone()) {
                let _ = render(&ReportInput {
                    plan: Some(&plan),
                    ..ReportInput::new(std::slice::from_ref(&base), "now")
                })
                .map(|p| assert_escaped(&p));
            }
        })
    });
}

/// Every leaf of a JSON value, as a JSON pointer.
fn leaves(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, c) in m {
                leaves(
                    c,
                    format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                    out,
                )
            }
        }
        Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                leaves(c, format!("{at}/{i}"), out)
            }
        }
        _ => out.push(at),
    }
}

#[test]
fn fuzz_report() {
    // Real documents with fuzz-chosen leaves replaced: numbers at their extremes, strings with
    // markup, wrong types. The report must render or refuse, never panic, and escape.
    let docs: Vec<(&str, Value)> = vec![
        ("check", fixture("quick-etcd")),
        ("check", fixture("ocp-recipe-ebs")),
        ("bench", fixture("read-iops")),
        ("interfere", fixture("interfere")),
    ];
    let paths: Vec<Vec<String>> = docs
        .iter()
        .map(|(_, d)| {
            let mut p = Vec::new();
            leaves(d, String::new(), &mut p);
            p
        })
        .collect();
    let plan = fixture("plan");
    bolero_check!().for_each(|input: &[u8]| {
        guarded(|| {
            let mut docs = docs.clone();
            let mut plan = plan.clone();
            for chunk in input.chunks(12) {
                if chunk.len() < 4 {
                    break;
                }
                let which = chunk[0] as usize % (docs.len() + 1);
                let (doc, pl) = if which == docs.len() {
                    (&mut plan, None)
                } else {
                    (&mut docs[which].1, Some(&paths[which]))
                };
                let mut plan_paths = Vec::new();
                let ps = match pl {
                    Some(p) => p,
                    None => {
                        leaves(doc, String::new(), &mut plan_paths);
                        &plan_paths
                    }
                };
                if ps.is_empty() {
                    continue;
                }
                let at = &ps[u16::from_le_bytes([chunk[1], chunk[2]]) as usize % ps.len()];
                let payload = &chunk[4..];
                let mut n = [0u8; 8];
                n[..payload.len()].copy_from_slice(payload);
                let new = match chunk[3] % 8 {
                    0 => Value::from(f64::from_le_bytes(n)), // NaN/inf become null
                    1 => Value::from(i64::from_le_bytes(n)),
                    2 => Value::from(u64::MAX),
                    3 => Value::from(0),
                    4 => Value::from(format!("<fuzz>{}\"'&", String::from_utf8_lossy(payload))),
                    5 => Value::Null,
                    6 => Value::Array(vec![]),
                    _ => Value::from(-1.0e300),
                };
                if let Some(slot) = doc.pointer_mut(at) {
                    *slot = new;
                }
            }
            let runs: Vec<StoredRun> = docs
                .iter()
                .enumerate()
                .map(|(i, (k, d))| stored(&format!("r{i}"), k, d))
                .collect();
            // A mutated plan that no longer reads as one is refused before the report.
            let plan = serde_json::from_value::<StoragePlan>(plan).ok();
            if let Ok(page) = render(&ReportInput {
                plan: plan.as_ref(),
                ..ReportInput::new(&runs, "now")
            }) {
                assert_escaped(&page);
                assert!(page.len() < 64 << 20);
            }
        })
    });
}

#[test]
fn fuzz_db_location() {
    // Arbitrary strings: parsing and redaction never panic, and redaction is stable.
    bolero_check!().for_each(|input: &[u8]| {
        guarded(|| {
            let s = String::from_utf8_lossy(input);
            let shown = pgconn::redact(&s);
            let _ = pgconn::is_postgres(&s);
            if let Ok(t) = PgTarget::parse(&s) {
                assert_eq!(t.shown, shown);
            }
            let _ = pgconn::conninfo_pairs(&s);
        })
    });
}

#[test]
fn fuzz_redaction() {
    // Generated locations with a password in each form: the password never survives redaction
    // or a parse error.
    bolero_check!()
        .with_type::<(String, String, String, u8)>()
        .for_each(|(user, pw, rest, form)| {
            guarded(|| {
                // A password that cannot occur elsewhere in the string by chance.
                let pw: String = pw.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
                if pw.len() < 6 {
                    return;
                }
                let pw = format!("Q{pw}Z");
                let user: String = user
                    .chars()
                    .filter(|c| c.is_ascii_alphanumeric())
                    .take(16)
                    .collect();
                let rest: String = rest.chars().filter(|c| !c.is_control()).take(64).collect();
                if rest.contains(&pw) || user.contains(&pw) {
                    return;
                }
                let q = |v: &str| format!("'{}'", v.replace('\\', "\\\\").replace('\'', "\\'"));
                // URL delimiters in the password, unencoded (the driver takes `#` and `?`).
                let seps = ["#", "?", "@", "/", ":", "?&=#", "@:"];
                let sep = seps[usize::from(form / 6) % seps.len()];
                let loc = match form % 6 {
                    0 => format!("postgres://{user}:{pw}@h/db{rest}"),
                    5 => format!("postgres://{user}:{pw}{sep}{pw}@h/db{rest}"),
                    1 => format!("postgresql://{user}@h/db?password={pw}&x={rest}"),
                    2 => format!("postgres://h/db?a=1&password={pw}"),
                    3 => format!("host=h user={user} password={pw} dbname=x"),
                    _ => format!(
                        "host=h password={} dbname={}",
                        q(&format!("{pw} {rest}")),
                        q(&rest)
                    ),
                };
                let shown = pgconn::redact(&loc);
                assert!(!shown.contains(&pw), "{loc} -> {shown}");
                if let Err(e) = PgTarget::parse(&loc) {
                    let m = e.to_string();
                    assert!(!m.contains(&pw), "{loc} -> {m}");
                }
            })
        });
}
