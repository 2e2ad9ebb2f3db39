#!/usr/bin/env bash
# disktier's native engine against fio, same job, same target, alternating runs.
#
#   sudo bench/vs-fio.sh            # RUNS=5 by default; RUNS=3 for a quicker look
#   DISKTIER=/path/to/disktier SECTIONS=c RUNS=3 bench/vs-fio.sh   # no build, only (c)
#   SECTIONS=a RUNS=9 bench/vs-fio.sh   # on a shared machine the p99 of (a) needs more runs
#   VARIANTS="dynamic=target/release/disktier static=target/image/disktier" SECTIONS=ac bench/vs-fio.sh
#       # (a) and (c) with several disktier binaries, interleaved with fio in every run
#       # (bench/static-vs-dynamic.sh builds both and calls this)
#
# (a) the etcd profile on xfs on a loop device (backing file in $BACKING, default /var/tmp):
#     fdatasync p99 (median of RUNS each) and verdict;
# (b) the same (etcd --quick, 4 MiB) on a loop device throttled to THROTTLE_IOPS write IOPS with
#     cgroup v1 blkio.throttle.write_iops_device (a slow cloud volume), both tools in the cgroup;
# (c) 4k randread, iodepth 32, io_uring, direct, on a loop device over a file in /dev/shm
#     (CPU-bound): IOPS and CPU seconds per I/O.
# (d) the same at iodepth 1 (the `latency` profile's shape): IOPS, p50 and p99 latency (fio's
#     lat, submission to completion, which is what disktier measures). No target in the issue;
#     printed so that the difference is on record.
# (e) (d) with both tools' job thread pinned to CPU 0 (disktier --cpus-allowed 0, fio
#     --cpus_allowed=0): without the scheduler moving the thread, on record too.
#
# Needs root, losetup, mkfs.xfs, fio, python3 and cgroup v1 blkio. Creates everything it uses
# and removes it on exit (umount, losetup -d, cgroup rmdir). Figures go in BENCHMARKS.md.
set -euo pipefail

RUNS=${RUNS:-5}
THROTTLE_IOPS=${THROTTLE_IOPS:-300}
RR_RUNTIME=${RR_RUNTIME:-10}
SECTIONS=${SECTIONS:-abcde}
# Where the loop devices of (a) and (b) keep their backing files: a real disk by default;
# BACKING=/dev/shm takes the shared disk's noise out (then fdatasync costs xfs + loop only).
BACKING=${BACKING:-/var/tmp}
THRESHOLD_NS=10000000 # etcd's 10 ms fdatasync p99 (docs/sources.md [ocp-etcd-practices], [ocp-etcd-perf])
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

for p in losetup mkfs.xfs fio python3; do
    command -v "$p" >/dev/null || { echo "vs-fio: needs $p" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "vs-fio: needs root (loop devices, mounts, cgroups)" >&2; exit 2; }

# $DISKTIER: a binary built before (e.g. while the tree is being edited).
DT=$(disktier_release)

# The disktier binaries (a) and (c) compare with fio: "label=path" words, run in this order
# inside every run, then fio.
read -r -a VARIANT_LIST <<< "${VARIANTS:-disktier=$DT}"
for v in "${VARIANT_LIST[@]}"; do
    [ -x "${v#*=}" ] || { echo "vs-fio: VARIANTS: ${v#*=} is not an executable" >&2; exit 2; }
done

WORK=$(mktemp -d /var/tmp/disktier-vsfio.XXXXXX)
LOOPS=()
MOUNTS=()
CGROUP=""
cleanup() {
    set +e
    for m in "${MOUNTS[@]}"; do umount "$m" 2>/dev/null; done
    for l in "${LOOPS[@]}"; do losetup -d "$l" 2>/dev/null; done
    if [ -n "$CGROUP" ] && [ -d "$CGROUP" ]; then
        for pid in $(cat "$CGROUP/cgroup.procs" 2>/dev/null); do
            echo "$pid" > /sys/fs/cgroup/blkio/cgroup.procs 2>/dev/null
        done
        rmdir "$CGROUP"
    fi
    rm -rf "$WORK" /dev/shm/disktier-vsfio.$$.img "$BACKING"/disktier-vsfio.$$.[ab].img
}
trap cleanup EXIT
trap 'exit 130' INT TERM

new_loop() { # new_loop FILE SIZE -> sets LOOP=/dev/loopN (not in a subshell, so cleanup sees it)
    truncate -s "$2" "$1"
    LOOP=$(losetup --find --show --direct-io=on "$1")
    LOOPS+=("$LOOP")
}

xfs_on() { # xfs_on DEV DIR
    mkfs.xfs -q -f "$1"
    mkdir -p "$2"
    mount "$1" "$2"
    MOUNTS+=("$2")
}

# Runs a command, in the throttle cgroup when IN_CGROUP=1.
wrap() {
    if [ "${IN_CGROUP:-0}" = 1 ]; then
        sh -c 'echo $$ > "$0/cgroup.procs" && shift && exec "$@"' "$CGROUP" _ "$@"
    else
        "$@"
    fi
}

py() { python3 -c "$1" "${@:2}"; }

median() { py 'import sys,statistics; print(statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }

# --- etcd: fdatasync p99 -----------------------------------------------------------------------
etcd_compare() { # etcd_compare LABEL DIR QUICK(0|1)
    local label=$1 dir=$2 quick=$3 size=22m q=() v
    if [ "$quick" = 1 ]; then size=4m; q=(--quick); fi
    local -A dts=()
    local fios=()
    for i in $(seq "$RUNS"); do
        local line="  run $i:"
        for v in "${VARIANT_LIST[@]}"; do
            mkdir -p "$dir/dt"
            wrap "${v#*=}" --format json --no-save bench "$dir/dt" --profile etcd "${q[@]}" > "$WORK/dt.json"
            dts[${v%%=*}]+="$(py 'import json,sys; d=json.load(open(sys.argv[1])); print(d["results"]["sync"]["lat_ns"]["percentiles"]["99"])' "$WORK/dt.json") "
            line+=" ${v%%=*} $(echo "${dts[${v%%=*}]}" | awk '{print $NF}') ns,"
        done
        mkdir -p "$dir/fio"
        wrap fio --rw=write --ioengine=sync --fdatasync=1 --directory="$dir/fio" --size=$size \
            --bs=2300 --name=etcd --output-format=json > "$WORK/fio.json"
        fios+=("$(py 'import json,sys; d=json.load(open(sys.argv[1])); print(d["jobs"][0]["sync"]["lat_ns"]["percentile"]["99.000000"])' "$WORK/fio.json")")
        rm -rf "$dir/fio" # fio keeps its file; start each run from scratch like disktier
        echo "$line fio ${fios[-1]} ns" >&2
    done
    local mf
    mf=$(median "${fios[@]}")
    for v in "${VARIANT_LIST[@]}"; do
        local name=${v%%=*} md
        # shellcheck disable=SC2086 # the figures are words on purpose
        md=$(median ${dts[$name]})
        py '
import sys
label, name, md, mf, th = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
v = lambda x: "pass" if x < th else "FAIL"
near = "ok" if 0.9 <= md / mf <= 1.1 else "MISSED"
same = "same" if v(md) == v(mf) else "DIFFERENT"
print(f"{label}: fdatasync p99 median {name} {md/1e6:.3f} ms, fio {mf/1e6:.3f} ms, ratio {md/mf:.3f} "
      f"(target 0.90-1.10: {near}); verdict {name} {v(md)}, fio {v(mf)} ({same})")
' "$label" "$name" "$md" "$mf" "$THRESHOLD_NS"
    done
}

if [[ $SECTIONS == *a* ]]; then
    echo "(a) etcd profile on xfs on a loop device, $RUNS runs each" >&2
    new_loop "$BACKING/disktier-vsfio.$$.a.img" 1G; L=$LOOP
    xfs_on "$L" "$WORK/a"
    etcd_compare "(a) etcd, xfs on loop over $BACKING" "$WORK/a" 0
fi

if [[ $SECTIONS == *b* ]]; then
    echo "(b) etcd --quick on xfs on a loop device throttled to $THROTTLE_IOPS write IOPS" >&2
    [ -e /sys/fs/cgroup/blkio/blkio.throttle.write_iops_device ] || { echo "vs-fio: no cgroup v1 blkio" >&2; exit 2; }
    new_loop "$BACKING/disktier-vsfio.$$.b.img" 1G; L=$LOOP
    xfs_on "$L" "$WORK/b"
    CGROUP=/sys/fs/cgroup/blkio/disktier-vsfio-$$
    mkdir "$CGROUP"
    echo "$(cat /sys/block/"$(basename "$L")"/dev) $THROTTLE_IOPS" > "$CGROUP/blkio.throttle.write_iops_device"
    IN_CGROUP=1 etcd_compare "(b) etcd --quick, xfs on loop throttled to $THROTTLE_IOPS w-IOPS" "$WORK/b" 1
fi

# --- randread on RAM: IOPS and CPU per I/O ------------------------------------------------------
if [[ $SECTIONS == *c* || $SECTIONS == *d* || $SECTIONS == *e* ]]; then
    new_loop /dev/shm/disktier-vsfio.$$.img 2G; SHM_LOOP=$LOOP
    # Fill it once so both read real pages rather than holes.
    dd if=/dev/urandom of="$SHM_LOOP" bs=1M count=2048 oflag=direct status=none
fi
if [[ $SECTIONS == *c* ]]; then
    echo "(c) 4k randread QD32 io_uring direct on a loop device over /dev/shm, ${RR_RUNTIME}s x $RUNS each" >&2
    L=$SHM_LOOP
    declare -A cdi=() cdc=()
    fi_=() fc=()
    for i in $(seq "$RUNS"); do
        line="  run $i:"
        for v in "${VARIANT_LIST[@]}"; do
            "${v#*=}" --format json --no-save bench "$L" --rw randread --bs 4k --iodepth 32 --ioengine io_uring \
                --direct --runtime "${RR_RUNTIME}s" --time-based > "$WORK/dt.json"
            read -r a b < <(py 'import json,sys; d=json.load(open(sys.argv[1])); r=d["results"]; c=r["cpu"]
print(r["read"]["iops"], (c["usr_s"]+c["sys_s"])/r["read"]["ios"])' "$WORK/dt.json")
            cdi[${v%%=*}]+="$a "; cdc[${v%%=*}]+="$b "
            line+=" ${v%%=*} $a IOPS $b s/IO,"
        done
        fio --name=rr --filename="$L" --rw=randread --bs=4k --iodepth=32 --ioengine=io_uring --direct=1 \
            --runtime="$RR_RUNTIME" --time_based --output-format=json > "$WORK/fio.json"
        read -r a b < <(py 'import json,sys; d=json.load(open(sys.argv[1])); j=d["jobs"][0]; r=j["read"]
print(r["iops"], (j["usr_cpu"]+j["sys_cpu"])/100*j["job_runtime"]/1000/r["total_ios"])' "$WORK/fio.json")
        fi_+=("$a"); fc+=("$b")
        echo "$line fio ${fi_[-1]} IOPS ${fc[-1]} s/IO" >&2
    done
    for v in "${VARIANT_LIST[@]}"; do
        py '
import sys, statistics as s
name = sys.argv[1]
di, dc, fi, fc = (s.median(float(x) for x in a.split()) for a in sys.argv[2:6])
ok_iops = "ok" if di >= fi else "MISSED"
ok_cpu = "ok" if dc <= fc else "MISSED"
print(f"(c) randread 4k QD32 io_uring direct, loop over /dev/shm: IOPS median {name} {di:,.0f}, fio {fi:,.0f}, "
      f"ratio {di/fi:.3f} (target >= 1: {ok_iops}); CPU per I/O {name} {dc*1e9:.0f} ns, "
      f"fio {fc*1e9:.0f} ns, ratio {dc/fc:.3f} (target <= 1: {ok_cpu})")
' "${v%%=*}" "${cdi[${v%%=*}]}" "${cdc[${v%%=*}]}" "${fi_[*]}" "${fc[*]}"
    done
fi

qd1_compare() { # qd1_compare LABEL DISKTIER-EXTRA FIO-EXTRA
    local label=$1 dx=$2 fx=$3
    local L=$SHM_LOOP di=() dp50=() dp99=() fi_=() fp50=() fp99=()
    for i in $(seq "$RUNS"); do
        # shellcheck disable=SC2086 # the extra options are words on purpose
        "$DT" --format json --no-save bench "$L" --rw randread --bs 4k --iodepth 1 --ioengine io_uring \
            --direct --runtime "${RR_RUNTIME}s" --time-based $dx > "$WORK/dt.json"
        read -r a b c < <(py 'import json,sys; r=json.load(open(sys.argv[1]))["results"]["read"]; p=r["lat_ns"]["percentiles"]
print(r["iops"], p["50"], p["99"])' "$WORK/dt.json")
        di+=("$a"); dp50+=("$b"); dp99+=("$c")
        # shellcheck disable=SC2086
        fio --name=rr --filename="$L" --rw=randread --bs=4k --iodepth=1 --ioengine=io_uring --direct=1 \
            --runtime="$RR_RUNTIME" --time_based --lat_percentiles=1 --output-format=json $fx > "$WORK/fio.json"
        read -r a b c < <(py 'import json,sys; r=json.load(open(sys.argv[1]))["jobs"][0]["read"]; p=r["lat_ns"]["percentile"]
print(r["iops"], p["50.000000"], p["99.000000"])' "$WORK/fio.json")
        fi_+=("$a"); fp50+=("$b"); fp99+=("$c")
        echo "  run $i: disktier ${di[-1]} IOPS p50 ${dp50[-1]} p99 ${dp99[-1]} ns, fio ${fi_[-1]} IOPS p50 ${fp50[-1]} p99 ${fp99[-1]} ns" >&2
    done
    py '
import sys, statistics as s
label = sys.argv[1]
di, d50, d99, fi, f50, f99 = (s.median(float(x) for x in a.split()) for a in sys.argv[2:8])
print(f"{label}: IOPS median disktier {di:,.0f}, fio {fi:,.0f}, "
      f"ratio {di/fi:.3f}; lat p50 disktier {d50/1e3:.1f} us, fio {f50/1e3:.1f} us; "
      f"p99 disktier {d99/1e3:.1f} us, fio {f99/1e3:.1f} us (no target: on record)")
' "$label" "${di[*]}" "${dp50[*]}" "${dp99[*]}" "${fi_[*]}" "${fp50[*]}" "${fp99[*]}"
}

if [[ $SECTIONS == *d* ]]; then
    echo "(d) 4k randread QD1 io_uring direct on a loop device over /dev/shm, ${RR_RUNTIME}s x $RUNS each" >&2
    qd1_compare "(d) randread 4k QD1 io_uring direct, loop over /dev/shm" "" ""
fi

if [[ $SECTIONS == *e* ]]; then
    echo "(e) the same, both tools' job thread pinned to CPU 0 (cpus_allowed=0)" >&2
    qd1_compare "(e) randread 4k QD1, both pinned to CPU 0" "--cpus-allowed 0" "--cpus_allowed=0"
fi
