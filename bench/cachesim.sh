#!/usr/bin/env bash
# Cache simulation side by side with libCacheSim (pip package `libcachesim`): the same synthetic
# traces (Zipf alpha 1 and a loop, 4 KiB blocks, 25 % writes) replayed through `disktier simulate`
# and libCacheSim's process_trace. Prints hit ratios per (policy, size) — LRU, ARC and S3-FIFO
# must agree exactly — requests per second of each replay, and the time of disktier's exact LRU
# miss-ratio curve against its SHARDS curve at 1 % sampling.
#
# Usage: bench/cachesim.sh            (N=10000000 requests over OBJ=1000000 blocks)
#        N=1000000 OBJ=100000 bench/cachesim.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
source bench/lib.sh
BIN=$(DISKTIER='' disktier_release)
N=${N:-10000000}
OBJ=${OBJ:-1000000}
PY=$(bench_python libcachesim numpy)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

echo "machine: $(nproc) CPUs, $(uname -r); libcachesim $("$PY" -c 'import importlib.metadata as m; print(m.version("libcachesim"))')"
echo "trace: $N requests over $OBJ blocks of 4 KiB"
for kind in zipf loop; do
    "$PY" bench/cachesim_gen.py "$kind" "$N" "$OBJ" "$WORK/$kind"
    "$BIN" --quiet trace import alibaba "$WORK/$kind.alibaba.csv" -o "$WORK/$kind.dtt" >/dev/null
    echo
    echo "== $kind =="
    printf '%-7s %9s  %-10s %-10s %-5s  %14s %14s %14s\n' policy blocks disktier libCacheSim same \
        "disktier req/s" "(with load)" "lcs req/s"
    for policy in lru arc s3fifo; do
        for frac in 100 10; do
            blocks=$((OBJ / frac))
            t0=$(date +%s.%N)
            d=$("$BIN" --format json simulate --trace "$WORK/$kind.dtt" --cache-sizes $((blocks * 4096)) \
                --policies "$policy" --no-mrc)
            t1=$(date +%s.%N)
            l=$("$PY" bench/cachesim_lcs.py "$WORK/$kind.oracleGeneral.bin" "$N" "$policy:$blocks")
            "$PY" - "$d" "$l" "$policy" "$blocks" "$t0" "$t1" <<'PYEOF'
import json, sys
d, l = json.loads(sys.argv[1]), json.loads(sys.argv[2])
h = d["results"][0]["hit_ratio"]
same = "yes" if h == l["hit_ratio"] or abs(h - l["hit_ratio"]) < 1e-9 else "NO"
wall = d["requests"] / (float(sys.argv[6]) - float(sys.argv[5]))
print(f"{sys.argv[3]:<7} {int(sys.argv[4]):>9}  {h:<10.6f} {l['hit_ratio']:<10.6f} {same:<5}  {d['requests_per_second']:>14,.0f} {wall:>14,.0f} {l['requests_per_second']:>14,.0f}")
PYEOF
        done
    done
    # The LRU miss-ratio curve over 12 sizes: exact (stack distances) against SHARDS at 1 %.
    sizes="$((OBJ / 1000 * 4096))..$((OBJ * 2 * 4096))"
    e=$("$BIN" --format json simulate --trace "$WORK/$kind.dtt" --cache-sizes "$sizes" --policies lru)
    s=$("$BIN" --format json simulate --trace "$WORK/$kind.dtt" --cache-sizes "$sizes" --policies lru --sample 0.01)
    "$PY" - "$e" "$s" <<'PYEOF'
import json, sys
e, s = json.loads(sys.argv[1])["mrc"], json.loads(sys.argv[2])["mrc"]
pts = [(a["cache_bytes"], a["miss_ratio"], b["miss_ratio"]) for a, b in zip(e["points"], s["points"]) if a["cache_bytes"] >= s["min_resolved_bytes"]]
mae = sum(abs(x - y) for _, x, y in pts) / len(pts)
print(f"LRU MRC: exact {e['seconds']:.3f} s, SHARDS 1 % {s['seconds']:.3f} s ({s['seconds'] / e['seconds']:.3f} of exact), MAE {mae:.4f} over {len(pts)} sizes")
PYEOF
done
