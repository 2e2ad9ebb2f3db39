#!/usr/bin/env bash
# The three-size LRU question, disktier against libCacheSim, in interleaved pairs (ABAB...):
# LRU hit ratios of one trace at 1 %, 10 % and 50 % of its unique blocks. disktier answers with
# one `simulate --policies lru --cache-sizes A,B,C --no-mrc` (timed whole: start, trace load,
# replay); libCacheSim (pip `libcachesim`) with one process_trace per size (only those calls
# timed). The hit ratios must be identical in every pair (the script exits 1 otherwise). Prints
# the median of the per-pair speed ratios (libCacheSim's time / disktier's) with a seeded
# bootstrap 95 % interval (bench/pairs_stats.py), "faster" only when it is clear of 1.0, and
# whether the 2x bar is met (interval's lower end above 2.0).
#
#   bench/cachesim-pairs.sh                 # PAIRS=7, N=10000000 requests, OBJ=1000000 blocks
#   KIND=loop PAIRS=9 bench/cachesim-pairs.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PAIRS=${PAIRS:-7}
N=${N:-10000000}
OBJ=${OBJ:-1000000}
KIND=${KIND:-zipf}
for v in "$PAIRS" "$N" "$OBJ"; do
    case $v in '' | *[!0-9]*) echo "cachesim-pairs: PAIRS, N and OBJ must be numbers" >&2; exit 2 ;; esac
done
# shellcheck source=bench/lib.sh
source bench/lib.sh
BIN=$(disktier_release)
PY=$(bench_python libcachesim numpy)
WORK=$(mktemp -d /var/tmp/disktier-cspairs.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
RES=$WORK/results.jsonl
: > "$RES"
sizes="$((OBJ / 100)),$((OBJ / 10)),$((OBJ / 2))"
echo "== $(date -u) $KIND trace, $N requests over $OBJ blocks; LRU at $sizes blocks; $PAIRS pairs; libcachesim $("$PY" -c 'import importlib.metadata as m; print(m.version("libcachesim"))')" >&2
"$PY" bench/cachesim_gen.py "$KIND" "$N" "$OBJ" "$WORK/t"
"$BIN" --quiet trace import alibaba "$WORK/t.alibaba.csv" -o "$WORK/t.dtt" >/dev/null
rm -f "$WORK/t.alibaba.csv"
python3 bench/pairs_stats.py state | tee -a "$RES" >&2
echo '{"w": "lru3", "a": "disktier", "b": "libCacheSim", "bar": 2.0}' >> "$RES"
for i in $(seq "$PAIRS"); do
    d=$(python3 bench/cachesim_pair.py dt "$BIN" "$WORK/t.dtt" "$sizes")
    l=$("$PY" bench/cachesim_pair.py lcs "$WORK/t.oracleGeneral.bin" "$sizes")
    python3 - "$d" "$l" "$i" "$N" >> "$RES" <<'PYEOF'
import json, sys
d, l, i, n = json.loads(sys.argv[1]), json.loads(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
if d["hit_ratios"] != l["hit_ratios"] and any(abs(d["hit_ratios"][k] - l["hit_ratios"][k]) > 1e-12 for k in l["hit_ratios"]):
    sys.exit(f"hit ratios differ in pair {i}: disktier {d['hit_ratios']}, libCacheSim {l['hit_ratios']}")
for t in (d, l):
    # "iops" is requests per second of the whole question (3 sizes), so A/B = speed ratio.
    print(json.dumps({"w": "lru3", "pair": i, "tool": t["tool"], "iops": 3 * n / t["seconds"],
                      "seconds": t["seconds"], "cpu_s": t["cpu_s"], "ios": 3 * n, "hit_ratios": t["hit_ratios"]}))
PYEOF
    tail -n 2 "$RES" | python3 -c 'import json,sys
for l in sys.stdin:
    o=json.loads(l); p, t, s, h = o["pair"], o["tool"], o["seconds"], o["hit_ratios"]; print(f"  pair {p}: {t} {s:.3f} s, hit ratios {h}", file=sys.stderr)'
done
python3 bench/pairs_stats.py state | tee -a "$RES" >&2
echo "hit ratios identical in all $PAIRS pairs" >&2
python3 bench/pairs_stats.py report "$RES"
