//! `plan` ranks local disks (GCP local SSD, EC2 instance store, Azure Lsv3 NVMe) by the
//! catalog's published figures: it shows them, picks enough local SSDs for the IOPS, and a
//! requirement above what the disks deliver excludes the option.

use disktier_testkit::cli::disktier;
use disktier_testkit::cli::item;
use disktier_testkit::cli::stdout_ok;

fn run(args: &[&str]) -> (i32, serde_json::Value, String) {
    let out = disktier()
        .args(["--no-save", "--format", "json", "plan"])
        .args(args)
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (
        out.status.code().unwrap_or(-1),
        v,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn text(args: &[&str]) -> String {
    let out = disktier()
        .args(["--no-save", "plan"])
        .args(args)
        .output()
        .unwrap();
    stdout_ok(&out)
}

fn local(v: &serde_json::Value) -> serde_json::Value {
    v["options"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"] == "instance-store")
        .cloned()
        .unwrap_or(serde_json::Value::Null)
}

const GCP: &[&str] = &[
    "--region",
    "asia-east1",
    "--instance",
    "n1-standard-8",
    "--allow-ephemeral",
    "--capacity",
    "500GiB",
];

#[test]
fn gcp_local_ssd_shows_its_figures_and_grows_for_iops() {
    // 2 x 375: 2 x 90,000 write IOPS (240 per GB, cloud.google.com/compute/docs/disks/performance).
    let (code, v, e) = run(&[GCP, &["--iops", "20000"]].concat());
    assert_eq!(code, 0, "{e}");
    let o = local(&v);
    assert_eq!(o["performance"]["iops"].as_f64().unwrap(), 180_000.0);
    assert!(o["performance"]["throughput_mibs"].as_f64().unwrap() > 600.0);
    assert_eq!(o["components"][0]["size_gib"], 750);
    let t = text(&[GCP, &["--iops", "20000"]].concat());
    assert!(t.contains("performance: 180,000 IOPS"), "{t}");
    // 200,000 IOPS: three disks (270,000), not the two the capacity needs.
    let (_, v, _) = run(&[GCP, &["--iops", "200000"]].concat());
    assert_eq!(local(&v)["components"][0]["size_gib"], 1125);
    // Above what eight disks deliver (720,000): excluded, with the shortfall.
    let (code, _, e) = run(&[GCP, &["--iops", "2000000"]].concat());
    assert_eq!(code, 2);
    assert!(e.contains("720,000 IOPS < 2,000,000 required"), "{e}");
}

#[test]
fn ec2_instance_store_iops_exclude_it_above_the_published_figure() {
    let base = [
        "--region",
        "us-east-1",
        "--instance",
        "m6i.xlarge",
        "--allow-ephemeral",
        "--capacity",
        "200GiB",
    ];
    // m6id.xlarge: 67,083 read / 33,542 write (EC2 instance types guide): the lower counts.
    let (_, v, _) = run(&[&base[..], &["--iops", "30000"]].concat());
    assert_eq!(local(&v)["performance"]["iops"].as_f64().unwrap(), 33_542.0);
    let (code, v, e) = run(&[&base[..], &["--iops", "40000"]].concat());
    assert_eq!(code, 0, "{e}");
    assert!(local(&v).is_null(), "{v}");
    let r = item(&v["rejected"], "kind", "instance-store");
    assert!(
        r["reason"]
            .as_str()
            .unwrap()
            .contains("33,542 IOPS < 40,000"),
        "{r}"
    );
}

#[test]
fn azure_lsv3_nvme_is_ranked_by_its_iops_and_throughput() {
    let base = [
        "--region",
        "eastus",
        "--instance",
        "Standard_L8s_v3",
        "--allow-ephemeral",
        "--capacity",
        "1TiB",
    ];
    // 400,000 IOPS and 2,000 MB/s = 1,907 MiB/s (Lsv3 size table).
    let (code, v, e) = run(&[&base[..], &["--iops", "300000"]].concat());
    assert_eq!(code, 0, "{e}");
    let o = local(&v);
    assert_eq!(o["performance"]["iops"].as_f64().unwrap(), 400_000.0);
    assert_eq!(
        o["performance"]["throughput_mibs"]
            .as_f64()
            .unwrap()
            .floor(),
        1907.0
    );
    assert_eq!(o["monthly_cost_usd"].as_f64().unwrap(), 0.0);
    // 3,000 MiB/s is above it; premium-ssd-v2 tops out at 1,200: nothing meets it.
    let (code, _, e) = run(&[&base[..], &["--throughput", "3000MiB/s"]].concat());
    assert_eq!(code, 2);
    assert!(e.contains("MiB/s < 3,000 required"), "{e}");
}

/// An instance's own store costs nothing more than the instance, so the instance's price is not
/// needed to weigh it: `plan --region us-west-2 --instance i3.8xlarge --allow-ephemeral` failed
/// with "the catalog has no on-demand price for i3.8xlarge in us-west-2" (exit 2, no plan at
/// all), as did the same without --allow-ephemeral, whose note needs no price either.
#[test]
fn an_own_instance_store_needs_no_instance_price() {
    let base = [
        "--region",
        "us-west-2",
        "--instance",
        "m6id.xlarge",
        "--capacity",
        "200GiB",
    ];
    let (code, v, e) = run(&[&base[..], &["--allow-ephemeral", "--iops", "20000"]].concat());
    assert_eq!(code, 0, "{e}");
    let o = local(&v);
    assert_eq!(o["monthly_cost_usd"].as_f64().unwrap(), 0.0, "{v}");
    assert_eq!(o["performance"]["iops"].as_f64().unwrap(), 33_542.0);
    let t = text(&base);
    assert!(
        t.contains("note: m6id.xlarge already has an instance store: use it"),
        "{t}"
    );
    // A switch to a sibling is priced from both instances' prices, which us-west-2 lacks: a
    // note says so, and the volumes are planned all the same (left item of session 25: the
    // whole plan failed, exit 2).
    let sibling = [
        "--region",
        "us-west-2",
        "--capacity",
        "200GiB",
        "--instance",
        "m6i.xlarge",
        "--allow-ephemeral",
    ];
    let (code, v, e) = run(&sibling);
    assert_eq!(code, 0, "{e}");
    assert_eq!(local(&v), serde_json::Value::Null, "nothing priced: {v}");
    assert!(
        v["options"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["kind"] == "volume"),
        "{v}"
    );
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("m6id.xlarge (its instance-store sibling) is not weighed against m6i.xlarge: the catalog has no on-demand price for m6i.xlarge in us-west-2"),
        "{notes}"
    );
    assert!(text(&sibling).contains("no on-demand price for m6i.xlarge in us-west-2"));
}
