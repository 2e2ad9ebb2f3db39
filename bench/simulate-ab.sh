#!/usr/bin/env bash
# Two disktier binaries answering the same cache question, in interleaved pairs (ABBA...): the
# three-size LRU question of bench/cachesim-pairs.sh (`simulate --policies lru --cache-sizes
# A,B,C --no-mrc`, timed whole) on one synthetic Zipf trace. Prints the median of the per-pair
# speed ratios (B's time / A's: above 1, A is faster) with a seeded bootstrap 95 % interval.
# For a build change that must not slow the simulator (e.g. the image profile's opt-levels).
#
#   A=/var/tmp/dt-img-s B=/var/tmp/dt-img-o3 PAIRS=25 bench/simulate-ab.sh
set -euo pipefail
cd "$(dirname "$0")/.."
: "${A:?set A to the binary under test}" "${B:?set B to the baseline binary}"
PAIRS=${PAIRS:-25}
N=${N:-4000000}
OBJ=${OBJ:-400000}
for v in "$PAIRS" "$N" "$OBJ"; do
    case $v in '' | *[!0-9]*) echo "simulate-ab: PAIRS, N and OBJ must be numbers" >&2; exit 2 ;; esac
done
# shellcheck source=bench/lib.sh
source bench/lib.sh
PY=$(bench_python numpy)
WORK=$(mktemp -d /var/tmp/disktier-simab.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
"$PY" bench/cachesim_gen.py zipf "$N" "$OBJ" "$WORK/t"
"$A" --quiet --no-save trace import alibaba "$WORK/t.alibaba.csv" -o "$WORK/t.dtt" >/dev/null
rm -f "$WORK/t.alibaba.csv" "$WORK/t.oracleGeneral.bin"
b1=$((OBJ / 100)) b10=$((OBJ / 10)) b50=$((OBJ / 2))
sizes="$((b1 * 4096)),$((b10 * 4096)),$((b50 * 4096))"
python3 bench/pairs_stats.py state >&2
python3 - "$A" "$B" "$PAIRS" "$WORK/t.dtt" "$sizes" <<'PY'
import random, statistics, subprocess, sys, time
a, b, pairs, trace, sizes = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
def run(binary):
    t = time.perf_counter()
    subprocess.run([binary, "--no-save", "--quiet", "--format", "json", "simulate", "--trace", trace,
                    "--policies", "lru", "--cache-sizes", sizes, "--no-mrc"],
                   check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t
run(a); run(b)
ratios = []
for i in range(pairs):
    if i % 2 == 0:
        ta = run(a); tb = run(b)
    else:
        tb = run(b); ta = run(a)
    ratios.append(tb / ta)
random.seed(1)
boots = sorted(statistics.median(random.choices(ratios, k=len(ratios))) for _ in range(5000))
lo, hi = boots[124], boots[4874]
word = "faster" if lo > 1 else "slower" if hi < 1 else "level"
print(f"A/B speed (B's time / A's), median of {pairs} pairs {statistics.median(ratios):.3f}x, "
      f"95 % CI [{lo:.3f}, {hi:.3f}] -> {word}")
print("pair ratios: " + " ".join(f"{r:.3f}" for r in ratios))
PY
