#!/usr/bin/env bash
# The etcd job seen from the scheduler: on which CPU the loop driver's worker and the job
# thread are woken. Each fdatasync wakes the loop device's (unbound) worker; the worker's
# completion runs in ksoftirqd on the worker's CPU, which then wakes the job thread. When the
# worker is woken on the job's own CPU the whole chain stays on one CPU; when it is woken on
# the other one, the job's CPU goes idle and is woken back by an IPI. Under a KVM guest with
# guest_halt_poll_ns=0 each such idle CPU halts (a VM exit). Alternating rounds of disktier and
# fio, each under `perf record -a -e sched:sched_waking,sched:sched_switch`, on xfs on a loop
# device over /dev/shm (created here and always removed). Tracing slows both tools (about
# half their untraced rate); the shares, not the rates, are the figures.
#
#   sudo DISKTIER=target/release/disktier ROUNDS=4 bench/etcd-wakes.sh
#
# Prints per round and as medians: writes/s (traced), the share of the job thread's wake-ups
# of an unbound kworker that land on the job's own CPU, the share of the job thread's own
# wake-ups that come from its CPU, and CPUs entering idle per write. Needs root, fio,
# mkfs.xfs, perf, python3. Figures go in BENCHMARKS.md (#18).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DT=${DISKTIER:-$ROOT/target/release/disktier}
ROUNDS=${ROUNDS:-4}
for p in fio mkfs.xfs losetup perf python3; do
    command -v "$p" >/dev/null || { echo "etcd-wakes: needs $p" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "etcd-wakes: needs root (loop devices, mounts, perf -a)" >&2; exit 2; }
[ -x "$DT" ] || { echo "etcd-wakes: $DT is not an executable" >&2; exit 2; }
case $ROUNDS in '' | *[!0-9]* | 0) echo "etcd-wakes: ROUNDS is a number from 1" >&2; exit 2 ;; esac

# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
xfs_scratch etcd-wakes
echo "guest_halt_poll_ns $(cat /sys/module/haltpoll/parameters/guest_halt_poll_ns 2>/dev/null || echo n/a)," \
    "cpus $(nproc), load $(cut -d' ' -f1-3 /proc/loadavg)"

PYTHONPATH="$ROOT/bench" python3 - "$DT" "$WORK" "$ROUNDS" <<'PY'
import collections, os, re, statistics, sys
import etcd_job
dt, work, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
mnt = f"{work}/mnt"
LINE = re.compile(r"^\s*(\S.*?)\s+(\d+)\s+\[(\d+)\]\s+(\S+):\s+(.*)$")
WAKE = re.compile(r"comm=(.*?) pid=(\d+) .*target_cpu=(\d+)")

def run(tool):
    cmd = etcd_job.command(tool, dt, mnt)
    name = os.path.basename(cmd[0])[:15]
    data = f"{work}/{tool}.perf"
    out = etcd_job.output(["perf", "record", "-q", "-a", "-e", "sched:sched_waking,sched:sched_switch",
                           "-o", data, "--"] + cmd)
    n, iops = etcd_job.writes(tool, out)
    text = etcd_job.output(["perf", "script", "-i", data, "-F", "comm,tid,cpu,event,trace"])
    os.unlink(data)
    events = []
    blocked = collections.Counter()
    for line in text.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        comm, tid, cpu, ev, rest = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4), m.group(5)
        events.append((comm, tid, cpu, ev, rest))
        # The job thread: the tool's task (its threads carry the program's name, cut to the
        # kernel's 15 characters) that sleeps in D state most often.
        if ev == "sched:sched_switch" and "prev_state=D" in rest and comm == name:
            blocked[tid] += 1
    if not blocked:
        sys.exit(f"etcd-wakes: no blocking {tool} thread in the trace")
    job = blocked.most_common(1)[0][0]
    worker = collections.Counter()
    woken = collections.Counter()
    idle = 0
    for comm, tid, cpu, ev, rest in events:
        if ev == "sched:sched_waking":
            w = WAKE.search(rest)
            if not w:
                continue
            same = int(w.group(3)) == cpu
            if tid == job and w.group(1).startswith("kworker/u"):
                worker[same] += 1
            if int(w.group(2)) == job:
                woken[same] += 1
        elif ev == "sched:sched_switch" and "next_comm=swapper" in rest:
            idle += 1
    share = lambda c: c[True] / max(1, c[True] + c[False])
    return {"iops": iops, "worker_same": share(worker), "woken_same": share(woken), "idle": idle / n}

rows = {"disktier": [], "fio": []}
for i in range(rounds):
    for tool in (["disktier", "fio"] if i % 2 == 0 else ["fio", "disktier"]):
        r = run(tool)
        rows[tool].append(r)
        print(f"round {i + 1} {tool:8}: {r['iops']:7,.0f} writes/s traced; worker woken on the job's CPU "
              f"{r['worker_same']:.2f}; job woken from its CPU {r['woken_same']:.2f}; idle entries {r['idle']:.2f} per write",
              flush=True)
for tool, rs in rows.items():
    med = lambda k: statistics.median(r[k] for r in rs)
    print(f"median {tool:8}: {med('iops'):7,.0f} writes/s traced; worker woken on the job's CPU {med('worker_same'):.2f}; "
          f"job woken from its CPU {med('woken_same'):.2f}; idle entries {med('idle'):.2f} per write")
PY
