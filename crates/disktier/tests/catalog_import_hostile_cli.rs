//! `catalog import aws-offer` and `catalog refresh gcp | azure` on price lists as they arrive
//! from hands other than the clouds' (saved on Windows, downloaded in another currency): each
//! is read, or refused with a reason that names what is wrong with it and nothing is written.

use disktier_testkit::cli::disktier as bin;
use std::path::{Path, PathBuf};

fn fixture(dir: &str, name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(dir)
        .join(name)
}

/// The three importers' command lines on the fixture pages named in `names` (copied into the
/// current directory `cwd`), writing `out.toml`.
fn import(cwd: &Path, args: &[&str]) -> std::process::Output {
    bin()
        .current_dir(cwd)
        .arg("--no-save")
        .args(args)
        .args(["-o", "out.toml"])
        .output()
        .unwrap()
}

/// (fixture directory, fixture files, the command's arguments before the files, after them)
type Case = (
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
    &'static [&'static str],
);

const CASES: &[Case] = &[
    (
        "catalog",
        &["offer-eu-north-1.json"],
        &["catalog", "import", "aws-offer"],
        &["--region", "eu-north-1"],
    ),
    (
        "refresh",
        &["gcp-skus-page1.json", "gcp-skus-page2.json"],
        &["catalog", "refresh", "gcp"],
        &["--region", "asia-east1"],
    ),
    (
        "refresh",
        &["azure-prices.json"],
        &["catalog", "refresh", "azure"],
        &["--region", "eastus"],
    ),
];

/// Runs each case on its pages changed by `edit`, in a scratch directory: the output and the
/// directory.
fn each_case(edit: impl Fn(&[u8]) -> Vec<u8>) -> Vec<(std::process::Output, tempfile::TempDir)> {
    CASES
        .iter()
        .map(|(dir, files, before, after)| {
            let tmp = tempfile::tempdir().unwrap();
            for f in *files {
                let page = std::fs::read(fixture(dir, f)).unwrap();
                std::fs::write(tmp.path().join(f), edit(&page)).unwrap();
            }
            let args: Vec<&str> = before.iter().chain(*files).chain(*after).copied().collect();
            (import(tmp.path(), &args), tmp)
        })
        .collect()
}

/// A page saved with a UTF-8 byte order mark (Windows PowerShell's `Out-File`, Notepad) is
/// read as the same page without it: the same catalog is written. (Before, each importer
/// refused it as "not valid JSON or is cut short: expected value at line 1 column 1".)
#[test]
fn a_page_with_a_byte_order_mark_is_read() {
    let plain = each_case(|p| p.to_vec());
    let bom = each_case(|p| [b"\xEF\xBB\xBF".as_slice(), p].concat());
    for ((p, pdir), (b, bdir)) in plain.iter().zip(&bom) {
        assert!(p.status.success(), "{}", String::from_utf8_lossy(&p.stderr));
        assert!(b.status.success(), "{}", String::from_utf8_lossy(&b.stderr));
        assert_eq!(p.stdout, b.stdout);
        let read =
            |d: &tempfile::TempDir| std::fs::read_to_string(d.path().join("out.toml")).unwrap();
        assert_eq!(read(pdir), read(bdir));
    }
}

/// A price list of the right region in another currency (an offer file of a region AWS prices
/// in CNY, a Retail Prices page asked with currencyCode='EUR') is refused naming the currency,
/// and nothing is written. (Before, each named the file's regions and said to pass one of them
/// with --region: the region already passed for GCP and Azure, an unrelated one for AWS.)
#[test]
fn a_page_in_another_currency_is_refused_naming_it() {
    let eur = each_case(|p| {
        String::from_utf8_lossy(p)
            .replace("\"USD\"", "\"EUR\"")
            .into_bytes()
    });
    for ((out, dir), (_, _, _, after)) in eur.iter().zip(CASES) {
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        let region = after[1];
        assert!(
            err.contains(&format!(
                "its prices for {region} are in EUR, and the catalog holds USD: "
            )),
            "{err}"
        );
        assert!(!err.contains("pass --region"), "{err}");
        assert!(!dir.path().join("out.toml").exists());
    }
}

/// Pages whose file names hold a newline and an escape (left item of session 25): the names
/// went raw into the catalog's `source` and `note`, and each importer refused its own result
/// ("source has a control character ...: write plain text on one line", advice for a
/// hand-written catalog). The names are now escaped there: each case writes a catalog that
/// passes `catalog check`, naming the file as `a\nb\u{1b}...`. So is the header comment, where
/// a newline in the input's or the output's name ended the comment, and the file written could
/// not be read (`-o 'o<newline>ut.toml'` did that before: "key with no value").
#[test]
fn pages_whose_names_hold_control_characters_are_imported_and_named_escaped() {
    for (dir, files, before, after) in CASES {
        let tmp = tempfile::tempdir().unwrap();
        let renamed: Vec<String> = files.iter().map(|f| format!("a\nb\u{1b}{f}")).collect();
        for (f, to) in files.iter().zip(&renamed) {
            std::fs::copy(fixture(dir, f), tmp.path().join(to)).unwrap();
        }
        let args: Vec<&str> = before
            .iter()
            .copied()
            .chain(renamed.iter().map(String::as_str))
            .chain(after.iter().copied())
            .collect();
        let out = import(tmp.path(), &args);
        assert!(out.status.success(), "{before:?}: {out:?}");
        let written = std::fs::read_to_string(tmp.path().join("out.toml")).unwrap();
        assert!(written.contains(r"a\nb\u{1b}"), "{before:?}: {written}");
        let check = bin()
            .args(["--catalog"])
            .arg(tmp.path().join("out.toml"))
            .args(["catalog", "check"])
            .output()
            .unwrap();
        assert!(check.status.success(), "{before:?}: {check:?}");
    }
    let tmp = tempfile::tempdir().unwrap();
    std::fs::copy(
        fixture("catalog", "offer-eu-north-1.json"),
        tmp.path().join("offer.json"),
    )
    .unwrap();
    let out = tmp.path().join("o\nut.toml");
    let o = bin()
        .args(["--no-save", "catalog", "import", "aws-offer"])
        .arg(tmp.path().join("offer.json"))
        .args(["--region", "eu-north-1", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    // The line that says so is one line, the name escaped.
    let said = String::from_utf8_lossy(&o.stdout);
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(said.contains(r"o\nut.toml: 6 volume prices"), "{said}");
    let check = bin()
        .arg("--catalog")
        .arg(&out)
        .args(["catalog", "check"])
        .output()
        .unwrap();
    assert!(check.status.success(), "{check:?}");
}
