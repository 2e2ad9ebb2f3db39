#!/usr/bin/env bash
# The etcd job seen from the idle loop: how often the vCPUs halt per I/O (cpuidle's "haltpoll
# idle" state usage, /sys/devices/system/cpu/cpu*/cpuidle/state1/usage, summed over CPUs), and,
# with PERF=1, the IPIs (irq_vectors:call_function_single_entry) and task migrations
# (sched:sched_migrate_task) machine-wide per I/O, disktier against fio in alternating rounds
# on xfs on a loop device over /dev/shm (created here and always removed). Under a KVM guest
# with guest_halt_poll_ns=0 every halt is a VM exit, and every wake-up of a halted vCPU an IPI.
#
#   sudo DISKTIER=target/release/disktier ROUNDS=6 [PERF=1] bench/etcd-halts.sh
#
# Needs root, fio, mkfs.xfs, python3 (perf with PERF=1). Figures go in BENCHMARKS.md (#18).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DT=${DISKTIER:-$ROOT/target/release/disktier}
ROUNDS=${ROUNDS:-6}
PERF=${PERF:-0}
for p in fio mkfs.xfs losetup python3; do
    command -v "$p" >/dev/null || { echo "etcd-halts: needs $p" >&2; exit 2; }
done
[ "$PERF" = 0 ] || command -v perf >/dev/null || { echo "etcd-halts: PERF=1 needs perf" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "etcd-halts: needs root (loop devices, mounts)" >&2; exit 2; }
[ -x "$DT" ] || { echo "etcd-halts: $DT is not an executable" >&2; exit 2; }
case $ROUNDS in '' | *[!0-9]*) echo "etcd-halts: ROUNDS is a number" >&2; exit 2 ;; esac
ls /sys/devices/system/cpu/cpu0/cpuidle/state1/usage >/dev/null 2>&1 ||
    { echo "etcd-halts: no cpuidle state1 (no cpuidle driver?)" >&2; exit 2; }

# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
xfs_scratch etcd-halts
echo "guest_halt_poll_ns $(cat /sys/module/haltpoll/parameters/guest_halt_poll_ns 2>/dev/null || echo n/a)," \
    "cpuidle $(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null || echo n/a)"

PYTHONPATH="$ROOT/bench" python3 - "$DT" "$WORK/mnt" "$ROUNDS" "$PERF" <<'PY'
import glob, os, statistics, sys, tempfile
import etcd_job
dt, mnt, rounds, perf = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
EV = "irq_vectors:call_function_single_entry,sched:sched_migrate_task"

def halts():
    return sum(int(open(f).read()) for f in glob.glob("/sys/devices/system/cpu/cpu*/cpuidle/state1/usage"))

def run(tool):
    cmd = etcd_job.command(tool, dt, mnt)
    stat = tempfile.NamedTemporaryFile(suffix=".perf", delete=False).name
    if perf:
        cmd = ["perf", "stat", "-a", "-x,", "-e", EV, "-o", stat] + cmd
    h0 = halts()
    out = etcd_job.output(cmd)
    h1 = halts()
    n, iops = etcd_job.writes(tool, out)
    row = {"iops": iops, "halts": (h1 - h0) / n}
    if perf:
        for line in open(stat):
            f = line.strip().split(",")
            if len(f) > 2 and f[0].isdigit():
                row[f[2].split(":")[1]] = int(f[0]) / n
    os.unlink(stat)
    return row

rows = {"disktier": [], "fio": []}
for i in range(rounds):
    for tool in (["disktier", "fio"] if i % 2 == 0 else ["fio", "disktier"]):
        r = run(tool)
        rows[tool].append(r)
        extra = "".join(f", {k} {v:.2f}" for k, v in r.items() if k not in ("iops", "halts"))
        print(f"round {i + 1} {tool:8}: {r['iops']:8,.0f} writes/s, halts {r['halts']:.2f} per I/O{extra}", flush=True)
for tool, rs in rows.items():
    keys = [k for k in rs[0] if k != "iops"]
    med = ", ".join(f"{k} {statistics.median(r[k] for r in rs):.2f}" for k in keys)
    print(f"median {tool:8}: {statistics.median(r['iops'] for r in rs):8,.0f} writes/s; per I/O: {med}")
PY
