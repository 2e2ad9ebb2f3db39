use crate::cli::command;

/// The error for `argv`, rendered without styles.
fn error(argv: &[&str]) -> String {
    let e = command()
        .try_get_matches_from(argv)
        .expect_err("a usage error");
    super::with_tip(e).render().to_string()
}

#[test]
fn a_count_with_a_unit_names_the_plain_count() {
    let e = error(&["disktier", "bench", "--iodepth", "32x", "f"]);
    assert!(e.contains("invalid value '32x' for '--iodepth <N>'"), "{e}");
    assert!(
        e.contains("tip: --iodepth takes a plain count, without a unit, such as 32"),
        "{e}"
    );
}

#[test]
fn letters_fractions_signs_and_huge_numbers_each_get_their_fix() {
    let e = error(&["disktier", "fleet", "run", "--parallel", "x"]);
    assert!(
        e.contains("tip: --parallel takes a whole number, in digits only, such as 1"),
        "{e}"
    );
    let e = error(&["disktier", "bench", "--numjobs", "1.5", "f"]);
    assert!(
        e.contains("tip: --numjobs takes a whole number, without a fraction or an exponent"),
        "{e}"
    );
    let e = error(&["disktier", "bench", "--randseed=-3", "f"]);
    assert!(
        e.contains("tip: --randseed takes a whole number of at least 0, such as 3"),
        "{e}"
    );
    let e = error(&[
        "disktier",
        "bench",
        "--randseed",
        "99999999999999999999999",
        "f",
    ]);
    assert!(
        e.contains("tip: --randseed takes a whole number far smaller"),
        "{e}"
    );
    let e = error(&["disktier", "bench", "--iodepth=", "f"]);
    assert!(e.contains("tip: --iodepth needs a whole number"), "{e}");
}

#[test]
fn range_errors_and_other_values_are_left_as_clap_gives_them() {
    let e = error(&["disktier", "fleet", "run", "--parallel", "0"]);
    assert!(e.contains("0 is not in 1..=1000"), "{e}");
    assert!(!e.contains("tip:"), "{e}");
    // A size is parsed by disktier's own parser, whose error names its fix already.
    let e = error(&["disktier", "bench", "--bs", "4q", "f"]);
    assert!(!e.contains("tip: --bs"), "{e}");
}

/// The messages matched when a parser of disktier's passes Rust's error on as text are the
/// ones Rust gives.
#[test]
fn the_messages_matched_are_rusts() {
    for (message, kind) in super::INT_MESSAGES {
        let e = match kind {
            std::num::IntErrorKind::Empty => "".parse::<u8>(),
            std::num::IntErrorKind::PosOverflow => "300".parse::<u8>(),
            std::num::IntErrorKind::NegOverflow => "-300".parse::<i8>().map(|_| 0),
            _ => "x".parse::<u8>(),
        }
        .unwrap_err();
        assert_eq!(e.to_string(), message);
        assert_eq!(e.kind(), &kind);
    }
    assert_eq!(
        "x".parse::<f64>().unwrap_err().to_string(),
        super::FLOAT_MESSAGE
    );
}
