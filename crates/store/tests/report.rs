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

/// The legend entries (swatch HTML, label) under the interference chart of `page`.
/// The report of `runs` alone (no plan).
fn page_of(runs: &[StoredRun]) -> String {
    render(&ReportInput {
        runs,
        plan: None,
        generated_at: "now",
    })
    .unwrap()
}

fn interfere_legend(page: &str) -> Vec<(String, String)> {
    let fig = page
        .find("data-chart=\"interfere:")
        .expect("an interference chart");
    let legend = &page[fig..];
    let legend = &legend[legend.find("<div class=\"legend\">").unwrap()..];
    let legend = &legend[..legend.find("</div>").unwrap()];
    legend
        .split("<span>")
        .skip(1)
        .map(|e| {
            let label_at = e.rfind("</span>").unwrap();
            let swatch_end = e[..label_at].rfind("</span>").unwrap() + "</span>".len();
            (
                e[..swatch_end].to_string(),
                e[swatch_end..label_at].to_string(),
            )
        })
        .collect()
}

/// Regression (QA): past 8 series the chart colours repeated, so a 9th scenario's line could
/// not be told from the 1st. Past the palette each colour comes with another dash pattern and
/// marker, in the chart and in the legend.
#[test]
fn more_than_eight_series_stay_distinguishable() {
    let mut doc = fixture("interfere");
    let one = doc["scenarios"][1].clone();
    let scenarios = doc["scenarios"].as_array_mut().unwrap();
    for i in 0..8 {
        let mut s = one.clone();
        s["name"] = format!("dd/extra-{i}").into();
        scenarios.push(s);
    }
    let runs = vec![stored("run-interfere", "interfere", doc)];
    let page = page_of(&runs);
    // 12 scenarios, one (dd/bfq) unavailable and so not drawn.
    let legend = interfere_legend(&page);
    assert_eq!(legend.len(), 11, "{legend:?}");
    let swatches: std::collections::BTreeSet<&str> =
        legend.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(swatches.len(), legend.len(), "a style repeats: {legend:?}");
    let entry = |label: &str| &legend.iter().find(|(_, l)| l == label).unwrap().0;
    // The 9th scenario has the 1st's colour, dashed and with square markers.
    assert!(entry("dd/extra-4").contains("dashed") && entry("dd/extra-4").contains("■"));
    assert!(!entry("dd/extra-3").contains("dashed"), "{legend:?}");
    let colour = |s: &str| s.split('#').nth(1).unwrap()[..6].to_string();
    assert_eq!(colour(entry("baseline")), colour(entry("dd/extra-4")));
    assert_self_contained(&page);
}

/// Regression (QA): an interrupted interference run drew as if complete. The report says the
/// run was interrupted and marks the scenario whose figures are partial.
#[test]
fn an_interrupted_interference_run_is_marked() {
    let mut doc = fixture("interfere");
    doc["interrupted"] = true.into();
    doc["scenarios"][2]["interrupted"] = true.into();
    let runs = vec![stored("run-interfere", "interfere", doc)];
    let page = page_of(&runs);
    assert!(
        page.contains("This run was interrupted (Ctrl-C or a signal): dd/io.weight stopped early and has partial figures"),
        "{page}"
    );
    assert_eq!(page.matches("interrupted: partial figures").count(), 1);
    assert!(page.contains(" (interrupted)</td>"));
}
