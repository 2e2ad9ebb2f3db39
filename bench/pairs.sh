#!/usr/bin/env bash
# disktier against fio in interleaved pairs (ABBA...: disktier then fio in odd pairs, fio then
# disktier in even ones), short
# runs, on loop devices over /dev/shm (losetup --direct-io=on; created here and always detached),
# so that a noisy shared machine hits both tools alike. Per workload it prints the median of the
# per-pair IOPS ratios (disktier / fio) with a seeded bootstrap 95 % interval
# (bench/pairs_stats.py), CPU per I/O of both counted two ways (each tool's own usr+sys:
# disktier's getrusage of its process, fio's usr_cpu/sys_cpu of its job process only; and the
# whole process tree's usr+sys as the kernel reports it to wait4, the same count for both tools:
# what running the tool costs the node), the machine's state before and after, and "faster"
# only when the interval is clear of 1.0 ("level" when it spans 1.0, "slower" below).
#
#   sudo bench/pairs.sh                      # PAIRS=7 RUNTIME=3, all four workloads + ceiling
#   DISKTIER=target/release/disktier PAIRS=9 WORKLOADS="qd32" bench/pairs.sh
#   DISKTIER_ARGS="--iodepth-batch-submit 8" bench/pairs.sh   # extra disktier options
#   HALT_POLL_NS=200000 bench/pairs.sh       # a KVM guest's idle vCPUs poll up to 200 us before
#       # halting (the kernel's default; this VM ships with 0), restored at exit
#   B_ARGS="" DISKTIER_ARGS="--cpus-allowed 0" WORKLOADS=qd32 bench/pairs.sh
#       # B_ARGS set: B is disktier with B_ARGS instead of fio (an engine change against the
#       # same binary's default; DISKTIER_B is another binary for B, e.g. the commit before)
#
# Workloads (the four of issue #18):
#   qd32   4k randread, iodepth 32, io_uring, O_DIRECT, raw loop device        (bar: 1.10x)
#   qd32c  the same with the loop device's completions on the submitting CPU (its queue's
#          rq_affinity=2, block/queue-sysfs.rst), as an NVMe drive's per-CPU queues complete
#          on the CPU that submitted: the tool's own CPU, not the loop driver's worker, is then
#          the limit (not in the default list; WORKLOADS="qd32c")
#   qd32p  the qd32 job with both tools' job thread pinned to CPU $PIN_CPU (default 0) by their
#          own option (disktier --cpus-allowed, fio --cpus_allowed): issue #18's "CPU pinning
#          with a flag", on both sides; the loop driver's worker then has the other CPU to
#          itself (not in the default list; WORKLOADS="qd32p")
#   qd1    4k randread, iodepth 1, psync, O_DIRECT, raw loop device            (bar: level)
#   wqd32  4k randwrite, iodepth 32, io_uring, O_DIRECT, raw loop device       (bar: level)
#   etcd   the etcd job (fio --rw=write --ioengine=sync --fdatasync=1 --bs=2300 --size=22m;
#          disktier --profile etcd) on xfs on a loop device                    (bar: level)
# With CEILING=1 (default) every qd32 pair also runs fio's t/io_uring (bench/fio-t-io_uring.sh)
# at depth 32 on the same device, and disktier's share of its peak second is reported.
#
# Needs root, losetup, mkfs.xfs, fio, python3. Figures go in BENCHMARKS.md.
set -euo pipefail

PAIRS=${PAIRS:-7}
RUNTIME=${RUNTIME:-3}
WORKLOADS=${WORKLOADS:-qd32 qd1 wqd32 etcd}
CEILING=${CEILING:-1}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"
STATS="$ROOT/bench/pairs_stats.py"

for p in losetup mkfs.xfs fio python3; do
    command -v "$p" >/dev/null || { echo "pairs: needs $p" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "pairs: needs root (loop devices, mounts)" >&2; exit 2; }
case $PAIRS in '' | *[!0-9]*) echo "pairs: PAIRS must be a number" >&2; exit 2 ;; esac
case $RUNTIME in '' | *[!0-9]*) echo "pairs: RUNTIME must be whole seconds" >&2; exit 2 ;; esac
[ "$PAIRS" -ge 2 ] || { echo "pairs: PAIRS must be at least 2" >&2; exit 2; }

DT=$(disktier_release)
[ -x "$DT" ] || { echo "pairs: $DT is not an executable" >&2; exit 2; }
read -r -a DT_EXTRA <<< "${DISKTIER_ARGS:-}"
VS_DT=0
if [ -n "${B_ARGS+set}" ] || [ -n "${DISKTIER_B:-}" ]; then VS_DT=1; fi
read -r -a DT_B_EXTRA <<< "${B_ARGS:-}"
DT_B=${DISKTIER_B:-$DT}
[ -x "$DT_B" ] || { echo "pairs: $DT_B is not an executable" >&2; exit 2; }
TIO=""
if [ "$CEILING" = 1 ] && [[ $WORKLOADS == *qd32* ]]; then
    TIO=$(bash "$ROOT/bench/fio-t-io_uring.sh")
fi

# The cpuidle-haltpoll driver's polling window (Documentation/virt/guest-halt-polling.rst).
HALT_POLL=/sys/module/haltpoll/parameters/guest_halt_poll_ns
HALT_POLL_OLD=""
if [ -n "${HALT_POLL_NS:-}" ]; then
    case $HALT_POLL_NS in *[!0-9]*) echo "pairs: HALT_POLL_NS must be nanoseconds" >&2; exit 2 ;; esac
    [ -w "$HALT_POLL" ] || { echo "pairs: HALT_POLL_NS needs the cpuidle-haltpoll driver ($HALT_POLL)" >&2; exit 2; }
    HALT_POLL_OLD=$(cat "$HALT_POLL")
fi

WORK=$(mktemp -d /var/tmp/disktier-pairs.XXXXXX)
LOOPS=()
MOUNTS=()
cleanup() {
    set +e
    if [ -n "$HALT_POLL_OLD" ]; then echo "$HALT_POLL_OLD" > "$HALT_POLL"; fi
    for m in "${MOUNTS[@]}"; do umount "$m" 2>/dev/null; done
    for l in "${LOOPS[@]}"; do losetup -d "$l" 2>/dev/null; done
    rm -rf "$WORK" /dev/shm/disktier-pairs.$$.raw.img /dev/shm/disktier-pairs.$$.xfs.img
}
trap cleanup EXIT
trap 'exit 130' INT TERM
if [ -n "$HALT_POLL_OLD" ]; then echo "$HALT_POLL_NS" > "$HALT_POLL"; fi

new_loop() { # new_loop FILE SIZE -> sets LOOP (not in a subshell, so cleanup sees it)
    truncate -s "$2" "$1"
    LOOP=$(losetup --find --show --direct-io=on "$1")
    LOOPS+=("$LOOP")
}

RES=$WORK/results.jsonl
: > "$RES"
py() { python3 -c "$1" "${@:2}"; }
# Runs CMD and writes to OUT the user+system CPU seconds of CMD and every child it waited for, as
# the kernel reports them to wait4 (getrusage RUSAGE_CHILDREN of a python3 parent that runs
# nothing else): the same count for disktier and fio, whatever each reports of itself.
proc_cpu() { # proc_cpu OUT CMD...
    python3 -c 'import resource, subprocess, sys
rc = subprocess.run(sys.argv[2:]).returncode
u = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[1], "w").write(repr(u.ru_utime + u.ru_stime))
sys.exit(rc)' "$@"
}
state() { python3 "$STATS" state | tee -a "$RES" >&2; }

# One disktier run: appends {"w","pair","tool","iops","cpu_s","ios","proc_s"} to $RES.
dt_run() { # dt_run WORKLOAD PAIR DIR(read|write) ARGS...
    local w=$1 i=$2 dir=$3 tool=${TOOL:-disktier} bin=${BIN:-$DT}
    shift 3
    if [ "$tool" = disktier ]; then
        proc_cpu "$WORK/proc_s" "$bin" --format json --no-save bench "$@" "${DT_EXTRA[@]}" > "$WORK/dt.json"
    else
        proc_cpu "$WORK/proc_s" "$bin" --format json --no-save bench "$@" "${DT_B_EXTRA[@]}" > "$WORK/dt.json"
    fi
    py 'import json,sys; d=json.load(open(sys.argv[1])); r=d["results"]; c=r["cpu"]; x=r[sys.argv[4]]
print(json.dumps({"w": sys.argv[2], "pair": int(sys.argv[3]), "tool": sys.argv[5], "iops": x["iops"],
                  "cpu_s": c["usr_s"] + c["sys_s"], "ios": x["ios"],
                  "proc_s": float(open(sys.argv[6]).read())}))' "$WORK/dt.json" "$w" "$i" "$dir" "$tool" "$WORK/proc_s" | tee -a "$RES" >&2
}

# fio's side of a pair, or with B_ARGS/DISKTIER_B the baseline disktier doing the same job.
b_run() { # b_run WORKLOAD PAIR DIR FIO-ARGS... -- DISKTIER-ARGS...
    local fa=() da=() seen=0 a
    for a in "${@:4}"; do
        if [ "$seen" = 0 ] && [ "$a" = -- ]; then seen=1; continue; fi
        if [ "$seen" = 0 ]; then fa+=("$a"); else da+=("$a"); fi
    done
    if [ "$VS_DT" = 1 ]; then
        TOOL=baseline BIN=$DT_B dt_run "$1" "$2" "$3" "${da[@]}"
    else
        fio_run "$1" "$2" "$3" "${fa[@]}"
    fi
}

fio_run() { # fio_run WORKLOAD PAIR DIR(read|write) ARGS...
    local w=$1 i=$2 dir=$3
    shift 3
    proc_cpu "$WORK/proc_s" fio "$@" --output-format=json > "$WORK/fio.json"
    py 'import json,sys; j=json.load(open(sys.argv[1]))["jobs"][0]; x=j[sys.argv[4]]
print(json.dumps({"w": sys.argv[2], "pair": int(sys.argv[3]), "tool": "fio", "iops": x["iops"],
                  "cpu_s": (j["usr_cpu"] + j["sys_cpu"]) / 100 * j["job_runtime"] / 1000, "ios": x["total_ios"],
                  "proc_s": float(open(sys.argv[5]).read())}))' \
        "$WORK/fio.json" "$w" "$i" "$dir" "$WORK/proc_s" | tee -a "$RES" >&2
}

# fio's t/io_uring: IOPS of its best second (its peak) and the mean of its seconds.
tio_run() { # tio_run PAIR DEV
    "$TIO" -d32 -b4096 -p0 -B1 -F1 -n1 -O1 -r "$RUNTIME" "$2" > "$WORK/tio.txt" 2>&1 || true
    py 'import json,re,sys,statistics
v=[float(x) * {"": 1, "K": 1e3, "M": 1e6}[k] for x, k in re.findall(r"IOPS=([0-9.]+)([KM]?)", open(sys.argv[1]).read())]
v=[x for x in v if x > 0]
if v:
    print(json.dumps({"w": "qd32", "pair": int(sys.argv[2]), "tool": "t/io_uring peak", "iops": max(v)}))
    print(json.dumps({"w": "qd32", "pair": int(sys.argv[2]), "tool": "t/io_uring mean", "iops": statistics.mean(v)}))
else:
    sys.stderr.write("t/io_uring printed no IOPS:\n" + open(sys.argv[1]).read())' "$WORK/tio.txt" "$1" | tee -a "$RES" >&2
}

echo "== $(date -u) disktier $("$DT" --version 2>/dev/null | head -n1), $(fio --version), ${PAIRS} pairs x ${RUNTIME}s" >&2
state
RAW=""
if [[ $WORKLOADS == *qd* ]]; then
    new_loop /dev/shm/disktier-pairs.$$.raw.img 2G; RAW=$LOOP
    dd if=/dev/urandom of="$RAW" bs=1M count=2048 oflag=direct status=none
fi
# Runs the two sides of pair N: A then B in odd pairs, B then A in even ones (ABBA...), so that
# neither tool always runs right after the other (a file system still settling the previous
# run's deletes, or a device still draining, then hits both alike).
pair() { # pair N A-FUNCTION B-FUNCTION
    if [ $(($1 % 2)) = 1 ]; then "$2"; "$3"; else "$3"; "$2"; fi
}
# The pairs of one job on the raw loop device: disktier's options and fio's alike.
raw_pairs() { # raw_pairs WORKLOAD DIR(read|write) RW IODEPTH IOENGINE [CPUS]
    local w=$1 dir=$2 rw=$3 qd=$4 eng=$5 cpus=${6:-}
    a=("$RAW" --rw "$rw" --bs 4k --iodepth "$qd" --ioengine "$eng" --direct --runtime "${RUNTIME}s" --time-based)
    pin_fio=()
    if [ -n "$cpus" ]; then a+=(--cpus-allowed "$cpus"); pin_fio=(--cpus_allowed="$cpus"); fi
    side_a() { dt_run "$w" "$i" "$dir" "${a[@]}"; }
    side_b() {
        b_run "$w" "$i" "$dir" --name="$w" --filename="$RAW" --rw="$rw" --bs=4k --iodepth="$qd" \
            --ioengine="$eng" --direct=1 --runtime="$RUNTIME" --time_based "${pin_fio[@]}" -- "${a[@]}"
    }
    for i in $(seq "$PAIRS"); do
        pair "$i" side_a side_b
        [ "$w" != qd32 ] || [ -z "$TIO" ] || [ "$VS_DT" = 1 ] || tio_run "$i" "$RAW"
    done
}
for w in $WORKLOADS; do
    echo "-- $w" >&2
    case $w in
    qd32)
        [ "$VS_DT" = 1 ] || echo '{"w": "qd32", "a": "disktier", "b": "fio", "also": ["t/io_uring peak", "t/io_uring mean"], "bar": 1.10}' >> "$RES"
        raw_pairs qd32 read randread 32 io_uring ;;
    qd32c)
        RQ=/sys/block/$(basename "$RAW")/queue/rq_affinity
        echo 2 > "$RQ"
        [ "$VS_DT" = 1 ] || echo '{"w": "qd32c", "a": "disktier", "b": "fio", "bar": 1.10}' >> "$RES"
        raw_pairs qd32c read randread 32 io_uring
        echo 1 > "$RQ" ;;
    qd32p)
        [ "$VS_DT" = 1 ] || echo '{"w": "qd32p", "a": "disktier", "b": "fio", "bar": 1.10}' >> "$RES"
        raw_pairs qd32p read randread 32 io_uring "${PIN_CPU:-0}" ;;
    qd1) raw_pairs qd1 read randread 1 psync ;;
    wqd32) raw_pairs wqd32 write randwrite 32 io_uring ;;
    etcd)
        new_loop /dev/shm/disktier-pairs.$$.xfs.img 1G
        mkfs.xfs -q -f "$LOOP"
        mkdir -p "$WORK/xfs"
        mount "$LOOP" "$WORK/xfs"
        MOUNTS+=("$WORK/xfs")
        # Each side deletes its own previous file just before it runs.
        side_a() {
            rm -rf "$WORK/xfs/dt"; mkdir -p "$WORK/xfs/dt"
            dt_run etcd "$i" write "$WORK/xfs/dt" --profile etcd
        }
        side_b() {
            rm -rf "$WORK/xfs/fio" "$WORK/xfs/dtb"; mkdir -p "$WORK/xfs/fio" "$WORK/xfs/dtb"
            b_run etcd "$i" write --name=etcd --directory="$WORK/xfs/fio" --rw=write --ioengine=sync \
                --fdatasync=1 --size=22m --bs=2300 -- "$WORK/xfs/dtb" --profile etcd
        }
        for i in $(seq "$PAIRS"); do pair "$i" side_a side_b; done ;;
    *) echo "pairs: unknown workload $w (qd32 qd32c qd32p qd1 wqd32 etcd)" >&2; exit 2 ;;
    esac
done
state
echo >&2
python3 "$STATS" report "$RES"
if [ -n "${KEEP:-}" ]; then cp "$RES" "$KEEP"; cp "$RES.summary.json" "$KEEP.summary.json"; fi
