#!/usr/bin/env bash
# Runs one fuzz target for a long time: bench/fuzz.sh [CRATE:]TARGET MINUTES
#
# TARGET is a bolero target without its `fuzz_` prefix (e.g. dttrace, import_blkparse,
# fio_json, catalog_overlay); its crate is found by grepping for `fn fuzz_TARGET()` in a
# crates/*/tests/fuzz.rs (or a binary crate's src). A name two crates use is given with the
# crate's folder: interfere:mountinfo, disks:mountinfo. cargo-bolero's coverage-guided
# engines need nightly, so this runs bolero's own random engine on stable for a time budget
# (BOLERO_RANDOM_TEST_TIME_MS), over the checked-in corpus first, with each random input also
# applied as edits of a corpus seed (disktier_testkit::fuzz::mutate). The test binary is
# optimised but keeps overflow checks and debug assertions, so arithmetic overflow is a
# finding. A failure prints the input and a BOLERO_RANDOM_SEED to replay it; save the input
# under tests/__fuzz__/fuzz_TARGET/crashes/ and add a regression test.
set -euo pipefail
spec=${1:?usage: bench/fuzz.sh [CRATE:]TARGET MINUTES}
minutes=${2:?usage: bench/fuzz.sh [CRATE:]TARGET MINUTES}
cd "$(dirname "$0")/.."
# A target is a `fn fuzz_NAME()` at the start of a line (a helper taking arguments, such as the
# catalog's `fuzz_refresh(..)`, and a doc comment's example are not). A name in two crates
# (`mountinfo`: disks and interfere) is given as CRATE:NAME, CRATE its folder under crates/.
sources=(crates/*/tests/fuzz.rs crates/*/src)
targets() {
    grep -rEH '^[[:space:]]*fn fuzz_[a-z0-9_]+\(\)' "${sources[@]}" |
        sed -E 's#^crates/([^/]+)/.*fn fuzz_([a-z0-9_]+)\(\).*#\1 \2#' | sort -u |
        awk '{ crate[NR] = $1; name[NR] = $2; n[$2]++ }
             END { for (i = 1; i <= NR; i++) print "  " (n[name[i]] > 1 ? crate[i] ":" : "") name[i] }' |
        sort
}
crate_dir=
case $spec in *:*) crate_dir=${spec%%:*} ;; esac
target=${spec##*:}
target=${target#fuzz_}
files=()
if [[ $target =~ ^[a-z0-9_]+$ && ( -z $crate_dir || $crate_dir =~ ^[a-z0-9_-]+$ ) ]]; then
    while IFS= read -r f; do
        if [ -z "$crate_dir" ] || [[ $f == crates/"$crate_dir"/* ]]; then files+=("$f"); fi
    done < <(grep -rlE "^[[:space:]]*fn fuzz_${target}\(\)" "${sources[@]}" || true)
fi
if [ "${#files[@]}" -eq 0 ]; then
    echo "no fuzz target $spec: the targets are" >&2
    targets >&2
    exit 2
fi
if [ "${#files[@]}" -gt 1 ]; then
    echo "fuzz_${target} is in more than one crate: give it as CRATE:${target}, one of" >&2
    for f in "${files[@]}"; do f=${f#crates/}; echo "  ${f%%/*}:${target}" >&2; done
    exit 2
fi
file=${files[0]}
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
