#!/usr/bin/env bash
# The etcd job's CPU per I/O, disktier against fio, counted one way for both: perf samples of each
# tool's busiest thread (its job thread) at $FREQ Hz, beside each tool's own getrusage figure.
# Alternating rounds on xfs on a loop device over /dev/shm (created here and always removed).
#
#   sudo DISKTIER=target/release/disktier ROUNDS=5 bench/etcd-cpu.sh
#
# Needs root, perf, fio, mkfs.xfs, python3. Figures go in BENCHMARKS.md (issue #18).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DT=${DISKTIER:-$ROOT/target/release/disktier}
ROUNDS=${ROUNDS:-5}
FREQ=${FREQ:-4000}
for p in perf fio mkfs.xfs losetup python3; do
    command -v "$p" >/dev/null || { echo "etcd-cpu: needs $p" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "etcd-cpu: needs root (loop devices, mounts)" >&2; exit 2; }
[ -x "$DT" ] || { echo "etcd-cpu: $DT is not an executable" >&2; exit 2; }
case $ROUNDS$FREQ in *[!0-9]*) echo "etcd-cpu: ROUNDS and FREQ are numbers" >&2; exit 2 ;; esac

# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
xfs_scratch etcd-cpu

for i in $(seq "$ROUNDS"); do
    rm -rf "$WORK/mnt/dt" "$WORK/mnt/fio"
    mkdir -p "$WORK/mnt/dt" "$WORK/mnt/fio"
    perf record -q -F "$FREQ" -o "$WORK/dt.perf" -- \
        "$DT" --format json --no-save bench "$WORK/mnt/dt" --profile etcd > "$WORK/dt.json" 2>/dev/null
    perf record -q -F "$FREQ" -o "$WORK/fio.perf" -- \
        fio --name=etcd --directory="$WORK/mnt/fio" --rw=write --ioengine=sync --fdatasync=1 \
        --size=22m --bs=2300 --output-format=json > "$WORK/fio.json" 2>/dev/null
    python3 - "$WORK" "$FREQ" "$i" <<'PY'
import collections, json, subprocess, sys
work, freq, i = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def job_thread_s(path):
    tids = subprocess.run(["perf", "script", "-i", path, "-F", "tid"],
                          capture_output=True, text=True, check=True).stdout.split()
    return collections.Counter(tids).most_common(1)[0][1] / freq
d = json.load(open(f"{work}/dt.json"))["results"]
f = json.load(open(f"{work}/fio.json"))["jobs"][0]
dn, fn = d["write"]["ios"], f["write"]["total_ios"]
dj, fj = job_thread_s(f"{work}/dt.perf") / dn, job_thread_s(f"{work}/fio.perf") / fn
dc = (d["cpu"]["usr_s"] + d["cpu"]["sys_s"]) / dn
fc = (f["usr_cpu"] + f["sys_cpu"]) / 100 * f["job_runtime"] / 1e3 / fn
print(f"round {i}: writes/s disktier {d['write']['iops']:,.0f} fio {f['write']['iops']:,.0f} | "
      f"job thread per I/O (perf samples) disktier {dj*1e9:,.0f} ns fio {fj*1e9:,.0f} ns ({dj/fj:.2f}x) | "
      f"own getrusage disktier {dc*1e9:,.0f} ns fio {fc*1e9:,.0f} ns ({dc/fc:.2f}x)")
PY
done
