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
        plan: Some(&plan),
        ..ReportInput::new(&runs, "2023-09-14 10:00 UTC")
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
    let page = render(&ReportInput::new(&runs, "<now>")).unwrap();
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!page.contains("<script"), "an unescaped script tag");
    assert!(!page.contains("<img"), "an unescaped img tag");
    assert!(page.contains("x&lt;y"));
    assert_self_contained(&page);
}

#[test]
fn an_empty_selection_is_an_error() {
    let e = render(&ReportInput::new(&[], "")).unwrap_err();
    assert!(e.to_string().contains("disktier assess"), "{e}");
}

/// The report of `runs` alone (no plan).
fn page_of(runs: &[StoredRun]) -> String {
    render(&ReportInput::new(runs, "now")).unwrap()
}

/// The legend entries (swatch HTML, label) under the interference chart of `page`.
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
    assert_eq!(
        page.matches("\"badge info\">interrupted: partial figures")
            .count(),
        1
    );
    assert!(page.contains("<td>interfere (interrupted: partial figures)</td>"));
    assert!(page.contains(" (interrupted)</td>"));
}

/// `stored`, saved at `at` (RFC 3339).
fn stored_at(id: &str, kind: &str, doc: serde_json::Value, at: &str) -> StoredRun {
    NewRun {
        kind,
        group_id: None,
        doc: &doc,
    }
    .to_row(id.into(), at.into())
}

/// The card of `target` in `page`, up to the next card or the end of the section.
fn card<'a>(page: &'a str, target: &str) -> &'a str {
    let at = page
        .find(&format!("<div class=\"card\" data-target=\"{target}\">"))
        .expect("a card");
    let rest = &page[at + 1..];
    let end = [rest.find("<div class=\"card\""), rest.find("</section>")]
        .into_iter()
        .flatten()
        .min()
        .unwrap();
    &page[at..at + 1 + end]
}

/// quick-etcd with its fdatasync p99 (and the verdict on it) set to `p99_ns`.
fn etcd_with_p99(p99_ns: u64) -> serde_json::Value {
    let mut doc = fixture("quick-etcd");
    doc["results"]["sync"]["lat_ns"]["percentiles"]["99"] = p99_ns.into();
    doc["verdicts"][0]["value"] = (p99_ns as f64).into();
    doc["verdicts"][0]["pass"] = (p99_ns < 10_000_000).into();
    doc["verdicts"][0]["message"] = format!("fdatasync p99 {p99_ns} ns").into();
    doc
}

/// Regression (QA): a target's card showed the best figure of all its runs (the lowest sync p99,
/// the highest IOPS), unlabelled, beside the failing verdict of its newest run. The card shows
/// each profile's newest run, says which, and leaves the earlier runs to the charts.
#[test]
fn a_card_shows_the_newest_runs_figures_and_says_so() {
    let runs = vec![
        // Saved out of order: the newest is the one saved last, wherever it is listed.
        stored_at(
            "run-new",
            "check",
            etcd_with_p99(11_460_000),
            "2026-11-27T13:09:50.000000Z",
        ),
        stored_at(
            "run-best",
            "check",
            etcd_with_p99(7_970_000),
            "2026-11-27T12:00:00.000000Z",
        ),
        stored_at(
            "run-bad",
            "check",
            etcd_with_p99(179_960_000),
            "2026-11-27T12:30:00.000000Z",
        ),
        stored_at(
            "run-read",
            "bench",
            // Measured first, as it was saved first (the card orders by when runs measured).
            {
                let mut d = fixture("read-iops");
                d["started_at"] = "2023-09-14T08:00:00Z".into();
                d
            },
            "2026-11-27T11:00:00.000000Z",
        ),
    ];
    let page = page_of(&runs);
    let c = card(&page, "/mnt/scratch");
    assert!(
        c.contains("<dt>sync p99</dt><dd>11.46 ms <span class=\"from\" title=\"run run-new\">etcd, newest of 3</span></dd>"),
        "{c}"
    );
    assert!(!c.contains("7.97 ms") && !c.contains("179.96 ms"), "{c}");
    // One etcd badge, the newest run's (failing), and read-iops's own figure labelled as its.
    assert_eq!(c.matches("etcd not ready").count(), 1, "{c}");
    assert!(c.contains("✗ etcd not ready · p99 11.46 ms"), "{c}");
    assert!(!c.contains("etcd ready"), "{c}");
    assert!(c.contains("title=\"run run-read\">read-iops</span>"), "{c}");
    assert!(c.contains("measured: read-iops, etcd ×3"), "{c}");
    assert!(
        c.contains("each profile's newest run; 2 earlier runs of this target are drawn"),
        "{c}"
    );
    // Equal figures read "same" in the comparison, as in `compare`'s text (not "1.0x higher").
    assert!(page.contains("<td class=\"num\">same</td>"));
    assert!(!page.contains(">1.0x "), "{page}");
    // Every run is still drawn.
    for id in ["run-new", "run-best", "run-bad", "run-read"] {
        assert!(
            page.contains(&format!("data-chart=\"series:{id}\"")),
            "{id}"
        );
    }
}

/// Regression (QA): runs saved into one shared store by two hosts measure the same path on two
/// disks, but the report keyed its cards by path alone: node-a's failing /mnt/scratch and
/// node-b's passing one made one card, "etcd ready" with node-b's figures, node-a's run only "1
/// earlier run of this target". A path measured on several hosts is now one card per host,
/// named `host:path`; a path only one host measured keeps its plain name.
#[test]
fn one_path_on_two_hosts_is_two_targets() {
    let on = |host: &str, mut doc: serde_json::Value| {
        doc["host"]["hostname"] = host.into();
        doc
    };
    let mut other = on("node-a", fixture("read-iops"));
    other["target"]["path"] = "/mnt/other".into();
    let runs = vec![
        stored_at(
            "run-a",
            "check",
            on("node-a", etcd_with_p99(25_000_000)),
            "2026-11-27T12:00:00.000000Z",
        ),
        stored_at(
            "run-b",
            "check",
            on("node-b", etcd_with_p99(2_000_000)),
            "2026-11-27T12:05:00.000000Z",
        ),
        stored_at("run-other", "bench", other, "2026-11-27T12:10:00.000000Z"),
    ];
    let page = page_of(&runs);
    let a = card(&page, "node-a:/mnt/scratch");
    assert!(a.contains("✗ etcd not ready · p99 25.00 ms"), "{a}");
    assert!(!a.contains("earlier run"), "{a}");
    let b = card(&page, "node-b:/mnt/scratch");
    assert!(b.contains("✓ etcd ready · p99 2.00 ms"), "{b}");
    assert!(
        !b.contains("not ready") && !b.contains("earlier run"),
        "{b}"
    );
    assert!(!page.contains("data-target=\"/mnt/scratch\""), "{page}");
    card(&page, "/mnt/other");
    assert!(page.contains("3 runs on 3 targets"), "{page}");
}

/// Regression (QA): an interrupted bench or check run was drawn and compared as if complete.
#[test]
fn an_interrupted_benchmark_run_is_marked_everywhere() {
    let mut cut = fixture("quick-etcd");
    cut["interrupted"] = true.into();
    let runs = vec![
        stored_at("run-cut", "check", cut, "2026-11-27T13:00:00.000000Z"),
        stored_at(
            "run-ebs",
            "check",
            fixture("ocp-recipe-ebs"),
            "2026-11-27T13:01:00.000000Z",
        ),
    ];
    let page = page_of(&runs);
    let c = card(&page, "/mnt/scratch");
    assert!(
        c.contains("etcd interrupted: partial figures</span>"),
        "{c}"
    );
    assert!(c.contains("etcd, interrupted</span></dd>"), "{c}");
    assert!(page.contains("<td>check (interrupted: partial figures)</td>"));
    assert!(page.contains("/mnt/scratch · etcd (interrupted: partial figures)"));
    assert!(
        page.contains(
            "<div class=\"note\">A was interrupted (Ctrl-C or a signal): its figures are partial"
        ),
        "{page}"
    );
}

/// Regression (QA): a job file's run made an empty page ("1 run on 0 targets") and was left out
/// of a mixed report without a word. It has its own section, alone and beside other runs, and
/// is not counted as "not drawn".
#[test]
fn a_job_files_run_has_its_own_section() {
    let jobs = fixture("jobfile-import");
    let id = "20261127-130348-abcdef";
    let head = format!(
        "<h3>run <span class=\"mono\">{id}</span> · job file <span class=\"mono\">{}</span></h3>",
        jobs["jobfile"].as_str().unwrap()
    );
    for runs in [
        vec![stored(id, "bench", jobs.clone())],
        vec![
            stored("run-quick", "check", fixture("quick-etcd")),
            stored(id, "bench", jobs.clone()),
        ],
    ] {
        let page = page_of(&runs);
        assert!(page.contains(&head), "{page}");
        assert!(!page.contains("not drawn"), "{page}");
        assert!(
            outline(&page).contains("section #jobfiles\n  h2 fio job files\n"),
            "{}",
            outline(&page)
        );
    }
}

/// Regression (QA): one row whose stored JSON does not parse stopped the whole report. The
/// command hands such runs over as skipped: named with the reason, the others drawn.
#[test]
fn a_skipped_run_is_named_and_the_others_drawn() {
    let runs = runs();
    let skipped = [disktier_store::report::Skipped {
        id: "20261127-130824-393ef4".into(),
        why: "its stored JSON does not parse (<key must be a string>)".into(),
    }];
    let page = render(&ReportInput {
        runs: &runs,
        skipped: &skipped,
        plan: None,
        generated_at: "now",
    })
    .unwrap();
    assert!(page.contains("run <span class=\"mono\">20261127-130824-393ef4</span>: left out, its stored row does not read (its stored JSON does not parse (&lt;key must be a string&gt;))"));
    assert!(page.contains("<td colspan=\"6\">left out: its stored JSON"));
    assert!(
        page.contains(
            "6 runs on 4 targets · host ip-10-0-1-23, lab, node-a · 1 not drawn · generated now"
        ),
        "{page}"
    );
    assert!(page.contains("<section id=\"verdicts\">"));
}

/// Regression (QA): imports, whose host is unknown, left "host , vm" in the header and "host"
/// alone on their card; and a comparison of many runs ran off the page.
#[test]
fn an_unknown_host_is_left_out_and_wide_tables_scroll() {
    let mut imported = fixture("ocp-recipe-ebs");
    imported["host"]["hostname"] = "".into();
    let runs = vec![
        stored("run-a", "import", imported),
        stored("run-b", "check", fixture("ocp-recipe-ephemeral")),
    ];
    let page = page_of(&runs);
    let host = fixture("ocp-recipe-ephemeral")["host"]["hostname"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        page.contains(&format!("2 runs on 2 targets · host {host} · generated")),
        "{page}"
    );
    let c = card(&page, "/var/lib/misc/_benchmark_fio");
    assert!(
        c.contains("<div class=\"sub\">xfs · on nvme0n1 · Amazon Elastic Block Store</div>"),
        "{c}"
    );
    assert!(page.contains("<div class=\"scroll\">\n<table class=\"compare\">"));
    assert!(page.contains(".scroll { overflow-x:auto;"));
}

/// QA (session 15): a report of interference runs said "3 runs on 0 targets", and the
/// baseline's mitigation read "none", the name of the `none` scenario.
#[test]
fn interference_runs_count_their_target_and_the_baseline_has_no_mitigation() {
    let doc = fixture("interfere");
    let runs = vec![
        stored("run-a", "interfere", doc.clone()),
        stored("run-b", "interfere", doc.clone()),
    ];
    let page = page_of(&runs);
    assert!(page.contains("<p>2 runs on 1 target "), "{page}");
    let row = page
        .lines()
        .find(|l| l.starts_with("<tr><td") && l.contains(">baseline<"))
        .expect("the baseline's row");
    assert!(row.contains("<td>–</td>"), "{row}");
}

/// Regression (QA): an import that names no path (fio's text report) had a card with an empty
/// title, a bare "read" in its legend and an empty comparison column head, where `show` and
/// `compare` say "target unknown".
#[test]
fn an_import_without_a_target_is_named_target_unknown() {
    let mut a = fixture("read-iops");
    a["target"]["path"] = "".into();
    let b = a.clone();
    let runs = vec![stored("run-a", "import", a), stored("run-b", "import", b)];
    let page = render(&ReportInput::new(&runs, "2023-09-14 10:00 UTC")).unwrap();
    let card = page
        .split("<div class=\"card\" data-target=\"\">")
        .nth(1)
        .expect("a card for the target-less runs");
    let title = card.split("</div>").next().unwrap_or_default();
    assert!(title.ends_with("</span>target unknown"), "{title}");
    assert!(page.contains("target unknown read (run-a)"), "legend");
    assert!(
        page.contains("<th>A <span class=\"mono\">target unknown</span></th>"),
        "comparison head"
    );
}

/// Regression (QA): a run of one second has one per-second sample, and a line through one point
/// draws nothing: its "Second by second" chart had axes and a legend but no figure.
#[test]
fn a_single_per_second_sample_is_drawn() {
    let one: Vec<disktier_engine::Sample> = serde_json::from_value(serde_json::json!([{
        "t_s": 1.0, "read_iops": 20745.0, "write_iops": 0.0, "read_bw_bytes": 84971520.0,
        "write_bw_bytes": 0.0, "p99_ns": 90623, "sync_p99_ns": null
    }]))
    .unwrap();
    let svg = disktier_store::report::charts::series(&one, false).unwrap();
    // One dot for the IOPS, one for the p99.
    assert_eq!(svg.matches("<circle").count(), 2, "{svg}");
}

/// Regression (QA): the cost section's "Measured here" table listed an interrupted run's
/// partial figures (and judged them against the plan's need) without saying it was cut short,
/// where the cards, charts and run list mark it.
#[test]
fn the_cost_section_marks_an_interrupted_run() {
    let plan: disktier_catalog::plan::StoragePlan =
        serde_json::from_value(fixture("plan")).unwrap();
    let mut doc = fixture("read-iops");
    doc["interrupted"] = true.into();
    let runs = vec![stored("run-read", "bench", doc)];
    let page = render(&ReportInput {
        plan: Some(&plan),
        ..ReportInput::new(&runs, "2023-09-14 10:00 UTC")
    })
    .unwrap();
    let measured = page
        .split("<table class=\"measured\">")
        .nth(1)
        .and_then(|t| t.split("</table>").next())
        .expect("the Measured here table");
    assert!(
        measured.contains("read-iops (interrupted: partial figures)"),
        "{measured}"
    );
}

/// Regression (QA): the IOPS and throughput bars of several runs of one profile on one target
/// had the same label ("/data · etcd write" four times), and an interrupted run's bar was not
/// marked; they now carry the run id, and the mark, as the latency legend does.
#[test]
fn bars_of_runs_of_one_target_and_profile_are_told_apart() {
    let mut cut = fixture("read-iops");
    cut["interrupted"] = true.into();
    let runs = vec![
        stored("run-1", "bench", fixture("read-iops")),
        stored("run-2", "bench", cut),
        stored("run-other", "check", fixture("ocp-recipe-ebs")),
    ];
    let page = render(&ReportInput::new(&runs, "2023-09-14 10:00 UTC")).unwrap();
    let bars = page
        .split("<section id=\"throughput\">")
        .nth(1)
        .and_then(|s| s.split("</section>").next())
        .expect("the IOPS and throughput section");
    assert!(bars.contains("read-iops read · run-1\n"), "{bars}");
    assert!(
        bars.contains("read-iops read · run-2 (interrupted: partial figures)\n"),
        "{bars}"
    );
    // A target's only run of a profile needs no id.
    assert!(!bars.contains("run-other"), "{bars}");
}

/// Regression (QA): a randrw run's read and write latency curves were drawn in the same colour
/// and the same line style, so neither the chart nor its legend told them apart; the second
/// direction now has its own dash pattern and marker, in the legend too.
#[test]
fn a_runs_read_and_write_curves_differ_in_style() {
    let mut doc = fixture("read-iops");
    doc["results"]["write"] = doc["results"]["read"].clone();
    let runs = vec![stored("run-rw", "bench", doc)];
    let page = render(&ReportInput::new(&runs, "2023-09-14 10:00 UTC")).unwrap();
    let latency = page
        .split("<section id=\"latency\">")
        .nth(1)
        .and_then(|s| s.split("</section>").next())
        .expect("the latency section");
    let legend: Vec<&str> = latency
        .split("<div class=\"legend\">")
        .nth(1)
        .expect("a legend")
        .split("<span>")
        .skip(1)
        .collect();
    assert_eq!(legend.len(), 2, "{legend:?}");
    let swatch = |entry: &str| entry.split("</span>").next().unwrap_or("").to_string();
    assert!(legend[0].contains(" read"), "{legend:?}");
    assert!(legend[1].contains(" write"), "{legend:?}");
    assert_ne!(swatch(legend[0]), swatch(legend[1]), "{legend:?}");
}

/// The longest fsync of an import without per-call counts (the OSTree-vs-etcd issue's 1.94 s
/// beside a 6.19 ms p99) is a latency in ns: its badge reads "max 1.94 s", not the count-style
/// raw number "1935700000" a verdict on an unknown metric is shown as.
#[test]
fn the_longest_fsync_badge_is_a_duration() {
    let mut doc = etcd_with_p99(6_194_000);
    doc["verdicts"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({
            "name": "etcd-longest-sync",
            "metric": "sync.max_ns",
            "value": 1_935_700_000.0,
            "threshold": 100_000_000.0,
            "pass": false,
            "message": "the longest fsync took 1.94 s, over 1 s (etcd's election timeout)"
        }));
    let runs = vec![stored("run-ostree", "import", doc)];
    let page = render(&ReportInput::new(&runs, "2023-09-14 10:00 UTC")).unwrap();
    assert!(
        page.contains("etcd-longest-sync · max 1.94 s</span>"),
        "{page}"
    );
    assert!(!page.contains("1935700000"));
}

#[path = "report/escape.rs"]
mod escape;

#[path = "report/ran_at.rs"]
mod ran_at;
