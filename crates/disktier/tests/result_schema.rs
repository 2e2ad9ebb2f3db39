//! docs/result.schema.json is generated from the documents' types (`ResultDocument`: a run
//! `RunDoc`, a job file's `JobFileDoc`, `--repeat`'s `RepeatDoc`, and what they hold, with
//! schemars), not written by hand: this test fails when the checked-in file differs from what
//! the types give. After changing the types, rewrite the file with
//! `DISKTIER_BLESS=1 cargo test -p disktier --test result_schema` and review the diff.
//! (engine_cli, jobfile_cli, repeat_cli and import_etcd_perf_cli validate real documents
//! against the same file.)

use disktier_engine::result::{ResultDocument, SCHEMA_VERSION};
use disktier_engine::RunDoc;
use serde_json::{json, Value};

const PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/result.schema.json");

/// The schema of every document a measuring command prints, draft-07, from the types (the
/// constants and enumerations the string fields take are on the types too).
fn generated() -> Value {
    let generator = schemars::generate::SchemaSettings::draft07().into_generator();
    let mut s = generator
        .into_root_schema_for::<ResultDocument>()
        .to_value();
    s["$id"] = json!("https://github.com/disktier/disktier/docs/result.schema.json");
    s["title"] = json!(format!(
        "disktier result documents (schema_version {SCHEMA_VERSION})"
    ));
    s["description"] = json!(format!(
        "What bench, check, import and their --repeat and job-file forms print with --format json \
         and keep in the store: a run (RunDoc), a fio job file's run (JobFileDoc, kind \
         \"jobfile\") or a --repeat series (RepeatDoc, kind \"repeat\"). Generated from the \
         types (crates/engine/src/result.rs); fields may be added in version {SCHEMA_VERSION}, \
         never renamed or removed; readers ignore fields they do not know. See \
         docs/result-schema.md."
    ));
    s
}

fn pretty(v: &Value) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap();
    s.push('\n');
    s
}

#[test]
fn docs_result_schema_is_the_generated_one() {
    let want = pretty(&generated());
    if std::env::var_os("DISKTIER_BLESS").is_some() {
        std::fs::write(PATH, &want).unwrap();
        return;
    }
    let have = std::fs::read_to_string(PATH).unwrap();
    assert!(
        have == want,
        "docs/result.schema.json is not what the types generate: run \
         DISKTIER_BLESS=1 cargo test -p disktier --test result_schema and review the diff"
    );
}

#[test]
fn the_schema_names_every_field_of_a_document() {
    // A document with every optional part filled: each of its keys is in the schema.
    let doc: RunDoc = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../store/tests/fixtures/ocp-recipe-ebs.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let v = serde_json::to_value(&doc).unwrap();
    let s = generated();
    let run = &s["definitions"]["RunDoc"];
    for k in v.as_object().unwrap().keys() {
        assert!(
            run["properties"].get(k).is_some(),
            "{k} is not in the schema"
        );
    }
    // The root is any of the three documents.
    let roots: Vec<&str> = s["anyOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["$ref"].as_str().unwrap())
        .collect();
    assert_eq!(
        roots,
        [
            "#/definitions/RunDoc",
            "#/definitions/JobFileDoc",
            "#/definitions/RepeatDoc"
        ]
    );
    assert_eq!(
        run["properties"]["engine"]["enum"],
        json!(["disktier", "fio", "etcd-perf"])
    );
    let required: Vec<&str> = run["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    for k in ["schema_version", "engine", "target", "results"] {
        assert!(required.contains(&k), "{k} is not required: {required:?}");
    }
}
