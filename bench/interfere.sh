#!/usr/bin/env bash
# disktier interfere: the full matrix on this machine, in the shape of the OSTree-vs-etcd issue's
# tables.
#
#   sudo bench/interfere.sh                    # DURATION=30s by default
#   DURATION=60s AGGRESSORS="ostree" sudo bench/interfere.sh
#   MITIGATIONS=none,ionice-idle DEVICES=cloud sudo bench/interfere.sh
#
# Two devices, each an xfs on a loop device over a sparse file in /var/tmp (a virtio disk here):
#   local — the loop device as it is;
#   cloud — the same, with write limits on the device for the root blkio group, which is where
#           the probe, the aggressor and the kernel's writeback threads all issue their I/O
#           (cgroup v1 charges writeback to the root group): CLOUD_IOPS IOPS and CLOUD_BPS bytes/s,
#           by default gp3's baseline of 3000 IOPS and 125 MiB/s (AWS EBS docs).
# For each device and aggressor, every mitigation (cgroup-latency is reported unavailable here:
# cgroup v2 has no io controller while v1 blkio is mounted). Results: one JSON document per run
# in $OUT, and the Markdown tables on stdout (pasted into BENCHMARKS.md).
#
# Needs root, losetup, mkfs.xfs, python3 and cgroup v1 blkio. Creates everything it uses and
# removes it on exit (the throttle rules, umount, losetup -d); disktier itself restores the
# schedulers and cgroups it changes.
set -euo pipefail

DURATION=${DURATION:-30s}
AGGRESSORS=${AGGRESSORS:-"ostree bulk-seq rand-write"}
DEVICES=${DEVICES:-"local cloud"}
MITIGATIONS=${MITIGATIONS:-none,ionice-idle,ionice-be7,scheduler-bfq,scheduler-mq-deadline,cgroup-weight,cgroup-throttle,cgroup-latency,writer-per-object-fsync,writer-no-fsync}
# MITIGATIONS_ostree, MITIGATIONS_bulk_seq, MITIGATIONS_rand_write override it per aggressor.
CLOUD_IOPS=${CLOUD_IOPS:-3000}
CLOUD_BPS=${CLOUD_BPS:-$((125 << 20))}
# Aggressor sizes: enough to keep writing through most of the probe on each device.
SIZE_local_ostree=${SIZE_local_ostree:-6GiB}
SIZE_local_bulk_seq=${SIZE_local_bulk_seq:-8GiB}
SIZE_local_rand_write=${SIZE_local_rand_write:-2GiB}
SIZE_cloud_ostree=${SIZE_cloud_ostree:-3GiB}
SIZE_cloud_bulk_seq=${SIZE_cloud_bulk_seq:-3GiB}
SIZE_cloud_rand_write=${SIZE_cloud_rand_write:-1GiB}
LOOP_SIZE=${LOOP_SIZE:-16G}
# Stop an aggressor that has not finished this long after it started (the row says "capped").
CAP=${CAP:-120s}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
OUT=${OUT:-$(mktemp -d /var/tmp/disktier-interfere-bench.XXXXXX)}

for p in losetup mkfs.xfs python3; do
    command -v "$p" >/dev/null || { echo "interfere.sh: needs $p" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "interfere.sh: needs root (loop devices, mounts, cgroups, schedulers)" >&2; exit 2; }
[ -e /sys/fs/cgroup/blkio/blkio.throttle.write_iops_device ] || { echo "interfere.sh: needs cgroup v1 blkio" >&2; exit 2; }

# DT=path/to/disktier uses a binary already built.
if [ -z "${DT:-}" ]; then
    echo "building disktier (release)..." >&2
    (cd "$ROOT" && cargo build --release -q -p disktier)
    DT="$CARGO_TARGET_DIR/release/disktier"
fi

WORK=$(mktemp -d /var/tmp/disktier-interfere-work.XXXXXX)
LOOP=""
MNT="$WORK/mnt"
THROTTLED=""
unthrottle() {
    if [ -n "$THROTTLED" ]; then
        echo "$THROTTLED 0" > /sys/fs/cgroup/blkio/blkio.throttle.write_iops_device
        echo "$THROTTLED 0" > /sys/fs/cgroup/blkio/blkio.throttle.write_bps_device
        THROTTLED=""
    fi
}
cleanup() {
    set +e
    unthrottle
    mountpoint -q "$MNT" && umount "$MNT"
    [ -n "$LOOP" ] && losetup -d "$LOOP"
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

truncate -s "$LOOP_SIZE" "$WORK/disk.img"
LOOP=$(losetup --find --show --direct-io=on "$WORK/disk.img")
mkfs.xfs -q -f "$LOOP"
mkdir -p "$MNT"
mount "$LOOP" "$MNT"
MAJMIN=$(cat "/sys/block/$(basename "$LOOP")/dev")
echo "device $LOOP ($MAJMIN), xfs on a sparse file in /var/tmp; results in $OUT" >&2

for dev in $DEVICES; do
    unthrottle
    if [ "$dev" = cloud ]; then
        echo "$MAJMIN $CLOUD_IOPS" > /sys/fs/cgroup/blkio/blkio.throttle.write_iops_device
        echo "$MAJMIN $CLOUD_BPS" > /sys/fs/cgroup/blkio/blkio.throttle.write_bps_device
        THROTTLED=$MAJMIN
    fi
    for agg in $AGGRESSORS; do
        var="SIZE_${dev}_${agg//-/_}"
        size=${!var}
        mvar="MITIGATIONS_${agg//-/_}"
        mitigations=${!mvar:-$MITIGATIONS}
        echo "== $dev / $agg ($size, $DURATION per scenario)" >&2
        # Exit status 1 only means an etcd verdict failed; keep going.
        "$DT" --no-save --format json interfere "$MNT" --aggressor "$agg" --aggressor-size "$size" \
            --duration "$DURATION" --aggressor-cap "$CAP" --mitigations "$mitigations" \
            > "$OUT/$dev-$agg.json" || [ $? = 1 ]
    done
done
unthrottle

python3 - "$OUT" "$DURATION" <<'PY'
import json, sys, glob, os
out, duration = sys.argv[1], sys.argv[2]
def ms(ns):
    if ns is None: return "-"
    return f"{ns/1e6:.2f} ms" if ns < 1e9 else f"{ns/1e9:.2f} s"
for path in sorted(glob.glob(os.path.join(out, "*.json"))):
    d = json.load(open(path))
    dev, agg = os.path.basename(path)[:-5].split("-", 1)
    print(f"### {dev}: {agg} aggressor ({d['aggressor_size']/2**30:.0f} GiB), {duration} per scenario, scheduler {d['scheduler_before']}\n")
    print("| run | probe IOPS | p99 | p99.9 | p99.99 | max | stdev | etcd | aggressor time |")
    print("|---|---|---|---|---|---|---|---|---|")
    for s in d["scenarios"]:
        name = "probe alone" if s["name"] == "baseline" else f"+ {agg}, {s['mitigation']}"
        if not s["available"]:
            print(f"| {name} | unavailable | | | | | | | {s['unavailable_reason']} |")
            continue
        p = s["probe"]["lat_ns"]; pc = p["percentiles"]
        a = s["aggressor"]
        at = "-" if a is None else f"{a['bytes']/2**30:.2f} GiB in {a['seconds']:.1f} s" + (" (capped)" if a.get("capped") else "")
        print(f"| {name} | {s['probe_iops']:.0f} | {ms(pc.get('99'))} | {ms(pc.get('99.9'))} | {ms(pc.get('99.99'))} | {ms(p['max'])} | {ms(p['stdev'])} | {s['verdict']} | {at} |")
    print()
    for line in d["recommendation"].split("\n")[:-1]:
        print(f"> {line}")
    print()
PY
