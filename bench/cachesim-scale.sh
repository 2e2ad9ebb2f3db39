#!/usr/bin/env bash
# What a long trace costs disktier simulate: requests/s and peak memory (max RSS, GNU time) at
# N requests, for one LRU size (--no-mrc), the exact one-pass LRU miss-ratio curve over all
# sizes (stack distances), and the SHARDS-sampled curve at 1 % with its mean absolute error
# against the exact curve. Synthetic Zipf-1 trace (bench/cachesim_gen.py), OBJ unique blocks.
#
#   bench/cachesim-scale.sh                       # N="10000000", OBJ=1000000
#   N="10000000 30000000" OBJ=3000000 bench/cachesim-scale.sh
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-10000000}
OBJ=${OBJ:-1000000}
# shellcheck source=bench/lib.sh
source bench/lib.sh
BIN=$(disktier_release)
[ -x /usr/bin/time ] || { echo "cachesim-scale: needs GNU time (apt-get install time)" >&2; exit 2; }
PY=$(bench_python numpy)
WORK=$(mktemp -d /var/tmp/disktier-csscale.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
python3 bench/pairs_stats.py state >&2
run() { # run LABEL N ARGS... -> one line
    local label=$1 n=$2
    shift 2
    /usr/bin/time -f '%M %e' -o "$WORK/time" "$BIN" --format json simulate --trace "$WORK/t.dtt" "$@" > "$WORK/out.json"
    python3 - "$WORK/out.json" "$WORK/time" "$label" "$n" "$OBJ" "$WORK/exact.json" <<'PYEOF'
import json, os, sys
d = json.load(open(sys.argv[1])); rss_kib, wall = open(sys.argv[2]).read().split()
label, n, obj = sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
rss = int(rss_kib) * 1024
line = f"  {label:<22} wall {float(wall):7.2f} s, {n / float(wall) / 1e6:6.2f} M req/s whole command"
if "mrc" in d and d["mrc"]:
    m = d["mrc"]
    line += f", curve {m['seconds']:.2f} s ({n / m['seconds'] / 1e6:.2f} M req/s)"
    if label.startswith("exact"):
        json.dump(m, open(sys.argv[6], "w"))
    elif os.path.exists(sys.argv[6]):
        e = json.load(open(sys.argv[6]))
        pts = [(a["miss_ratio"], b["miss_ratio"]) for a, b in zip(e["points"], m["points"])
               if a["cache_bytes"] >= m.get("min_resolved_bytes", 0)]
        line += f", MAE {sum(abs(x - y) for x, y in pts) / len(pts):.4f} over {len(pts)} sizes"
else:
    line += f", replay {d['requests_per_second'] / 1e6:.2f} M req/s"
line += f"; max RSS {rss / 2**20:,.0f} MiB = {rss / obj:,.0f} B per unique block, {rss / n:.1f} B per request"
print(line)
PYEOF
}
for n in $N; do
    case $n in '' | *[!0-9]*) echo "cachesim-scale: N must be numbers" >&2; exit 2 ;; esac
    "$PY" bench/cachesim_gen.py zipf "$n" "$OBJ" "$WORK/t"
    rm -f "$WORK/t.oracleGeneral.bin"
    "$BIN" --quiet trace import alibaba "$WORK/t.alibaba.csv" -o "$WORK/t.dtt" >/dev/null
    rm -f "$WORK/t.alibaba.csv" "$WORK/exact.json"
    echo "N=$n requests over $OBJ blocks (Zipf 1), trace file $(du -h "$WORK/t.dtt" | cut -f1):"
    run "lru, one size (10 %)" "$n" --policies lru --cache-sizes $((OBJ * 4096 / 10)) --no-mrc
    sizes="$((OBJ * 4096 / 1000))..$((OBJ * 2 * 4096))"
    run "exact MRC, all sizes" "$n" --policies lru --cache-sizes "$sizes"
    run "SHARDS 1 % MRC" "$n" --policies lru --cache-sizes "$sizes" --sample 0.01
done
python3 bench/pairs_stats.py state >&2
