#!/usr/bin/env bash
# Every built-in profile with --quick, one after another, in one directory: wall time of each
# and of the whole suite (issue #2 asks for under a minute), and each run's headline figure.
#
#   bench/quick-suite.sh [DIR]          # DIR defaults to a fresh directory under /var/tmp
#   DISKTIER=/path/to/disktier bench/quick-suite.sh
#
# Leaves nothing behind: disktier removes its files, the script removes its directory.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
DT=$(disktier_release)
command -v python3 >/dev/null || { echo "quick-suite: needs python3" >&2; exit 2; }

if [ -n "${1:-}" ]; then
    DIR=$1
    mkdir -p "$DIR"
    OWN=""
else
    DIR=$(mktemp -d /var/tmp/disktier-quick.XXXXXX)
    OWN=$DIR
fi
OUT=$(mktemp /tmp/disktier-quick.XXXXXX.json)
cleanup() { rm -f "$OUT"; [ -z "$OWN" ] || rm -rf "$OWN"; }
trap cleanup EXIT

echo "| profile (--quick) | wall time | figure |"
echo "|---|---|---|"
total0=$(date +%s.%N)
for p in etcd etcd-openshift write-iops read-iops write-throughput read-throughput latency small-files; do
    t0=$(date +%s.%N)
    "$DT" --format json --no-save bench "$DIR" --profile "$p" --quick > "$OUT"
    t1=$(date +%s.%N)
    python3 - "$p" "$t0" "$t1" "$OUT" <<'EOF'
import json, sys
p, t0, t1, path = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
d = json.load(open(path))
r = d.get("results", {})
def iops(k):
    return (r.get(k) or {}).get("iops", 0)
if p.startswith("etcd"):
    s = r["sync"]["lat_ns"]["percentiles"]["99"] / 1e6
    fig = f"{iops('write'):,.0f} writes/s, fdatasync p99 {s:.2f} ms"
elif p == "small-files":
    sf = d.get("small_files") or r.get("small_files") or {}
    fig = f"{sf.get('files_per_s', 0):,.0f} files/s ({sf.get('files', 0):,} files)"
elif "throughput" in p:
    bw = sum((r.get(k) or {}).get("bw_bytes", 0) for k in ("read", "write")) / 2**20
    fig = f"{bw:,.0f} MiB/s"
else:
    fig = f"{iops('read') + iops('write'):,.0f} IOPS"
print(f"| {p} | {t1 - t0:.1f} s | {fig} |")
EOF
done
total1=$(date +%s.%N)
python3 -c "import sys; print(f'\nwhole suite: {float(sys.argv[2]) - float(sys.argv[1]):.1f} s (target: under 60 s)')" "$total0" "$total1"
