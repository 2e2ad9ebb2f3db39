//! The HTML report from fixture documents: its structure (a golden outline, not the raw SVG),
//! escaping of user strings, and that it references nothing outside itself.

use disktier_store::report::{outline, render, ReportInput};
use disktier_store::{NewRun, StoredRun};

fn fixture(name: &str) -> serde_json::Value {
    let p = format!("{}/tests/fixtures/{name}.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn stored(id: &str, kind: &str, doc: serde_json::Value) -> StoredRun {
    NewRun {
        kind,
        group_id: None,
        doc: &doc,
    }
    .to_row(id.into(), "2023-09-14T10:00:00.000000Z".into())
}

fn runs() -> Vec<StoredRun> {
    vec![
        stored("run-ephemeral", "check", fixture("ocp-recipe-ephemeral")),
        stored("run-ebs", "check", fixture("ocp-recipe-ebs")),
        stored("run-quick", "bench", fixture("quick-etcd")),
        stored("run-read", "bench", fixture("read-iops")),
        stored("run-interfere", "interfere", fixture("interfere")),
    ]
}

/// What a report may not contain: anything that would make a browser fetch.
fn assert_self_contained(page: &str) {
    for bad in [
        "<script", "<link", "@import", "url(", "<iframe", "<object", "<img", "<embed",
    ] {
        assert!(!page.contains(bad), "report contains {bad:?}");
    }
    // Every tag: no attribute that points anywhere but inside the page.
    for tag in page
        .split('<')
        .skip(1)
        .map(|t| t.split('>').next().unwrap_or(""))
    {
        for attr in ["src=", "href=", "xlink:href=", "action="] {
            if let Some(i) = tag.find(attr) {
                let v = &tag[i + attr.len()..];
                assert!(v.starts_with("\"#"), "tag <{tag}> points outside the page");
            }
        }
        assert!(
            !tag.contains("http:") && !tag.contains("https:"),
            "tag <{tag}> holds a URL"
        );
    }
}

#[test]
fn report_structure_golden() {
    let plan: disktier_catalog::plan::StoragePlan =
        serde_json::from_value(fixture("plan")).unwrap();
    let runs = runs();
    let page = render(&ReportInput {
        runs: &runs,
        plan: Some(&plan),
        generated_at: "2023-09-14 10:00 UTC",
    })
    .unwrap();
    assert_self_contained(&page);
    insta::assert_snapshot!("report_outline", outline(&page));
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("fixture-report.html");
    std::fs::write(&out, &page).unwrap();
}

#[test]
fn user_strings_are_escaped() {
    let mut doc = fixture("ocp-recipe-ephemeral");
    doc["target"]["path"] = "<script>alert(1)</script>".into();
    doc["host"]["hostname"] = "h\"><img src=x onerror=alert(2)>".into();
    doc["verdicts"][0]["message"] = "</span><script>alert(3)</script>".into();
    let runs = vec![
        stored("x<y", "check", doc),
        stored("run-ebs", "check", fixture("ocp-recipe-ebs")),
    ];
    let page = render(&ReportInput {
        runs: &runs,
        plan: None,
        generated_at: "<now>",
    })
    .unwrap();
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!page.contains("<script"), "an unescaped script tag");
    assert!(!page.contains("<img"), "an unescaped img tag");
    assert!(page.contains("x&lt;y"));
    assert_self_contained(&page);
}

#[test]
fn an_empty_selection_is_an_error() {
    let e = render(&ReportInput {
        runs: &[],
        plan: None,
        generated_at: "",
    })
    .unwrap_err();
    assert!(e.to_string().contains("disktier assess"), "{e}");
}
