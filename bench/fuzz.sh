#!/usr/bin/env bash
# Runs one fuzz target for a long time: bench/fuzz.sh TARGET MINUTES
#
# TARGET is a bolero target without its `fuzz_` prefix (e.g. dttrace, import_blkparse,
# fio_json, catalog_overlay); its crate is found by grepping for `fn fuzz_TARGET` in a
# crates/*/tests/fuzz.rs. cargo-bolero's coverage-guided engines need nightly, so this runs
# bolero's own random engine on stable for a time budget (BOLERO_RANDOM_TEST_TIME_MS), over the
# checked-in corpus first, with each random input also applied as edits of a corpus seed
# (disktier_testkit::fuzz::mutate). The test binary is optimised but keeps overflow checks and
# debug assertions, so arithmetic overflow is a finding. A failure prints the input and a
# BOLERO_RANDOM_SEED to replay it; save the input under tests/__fuzz__/fuzz_TARGET/crashes/ and
# add a regression test.
set -euo pipefail
target=${1:?usage: bench/fuzz.sh TARGET MINUTES}
minutes=${2:?usage: bench/fuzz.sh TARGET MINUTES}
target=${target#fuzz_}
cd "$(dirname "$0")/.."
file=$(grep -rl "fn fuzz_${target}()" crates/*/tests/fuzz.rs crates/*/src | head -n1 || true)
if [ -z "$file" ]; then
    echo "no fuzz target fuzz_${target}: the targets are" >&2
    grep -rho 'fn fuzz_[a-z0-9_]*' crates/*/tests/fuzz.rs crates/*/src | sed 's/fn fuzz_/  /' | sort >&2
    exit 2
fi
cratedir=${file%%/tests/*}
cratedir=${cratedir%%/src/*}
crate=$(sed -n 's/^name = "\(.*\)"/\1/p' "$cratedir/Cargo.toml" | head -n1)
case $file in
    */tests/fuzz.rs) select=(--test fuzz -- --exact "fuzz_${target}") ;;
    # A target in a binary crate's unit tests (the bench job options in crates/disktier).
    *) select=(--bins -- "::fuzz_${target}") ;;
esac
echo "fuzzing fuzz_${target} (${crate}) for ${minutes} min"
export CARGO_PROFILE_RELEASE_OVERFLOW_CHECKS=true
export CARGO_PROFILE_RELEASE_DEBUG_ASSERTIONS=true
export BOLERO_RANDOM_TEST_TIME_MS=$((minutes * 60 * 1000))
start=$(date +%s)
cargo test --release --locked -p "$crate" "${select[@]}" --nocapture
echo "fuzz_${target}: no failure (${minutes} min of fuzzing; $(( ($(date +%s) - start) / 60 )) min wall time with the build)"
