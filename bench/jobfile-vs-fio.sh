#!/usr/bin/env bash
# One fio job file, `disktier bench FILE` against `disktier bench FILE --engine fio` (fio 3.x
# running the same file), alternating, RUNS times, on xfs over a loop device backed by /var/tmp.
# The file: a direct random reader (numjobs=2) and an fdatasync'd sequential writer running
# together, then after a stonewall a libaio random writer at iodepth 16 (io_uring natively).
# Prints per job the IOPS and p99 (of the syncs for the writer) of every run.
#
#   sudo bench/jobfile-vs-fio.sh        # RUNS=3 RUNTIME=10; DISKTIER=path/to/disktier
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${DISKTIER:-${CARGO_TARGET_DIR:-$ROOT/target}/release/disktier}
[ -x "$B" ] || (cd "$ROOT" && cargo build -q --release -p disktier)
RUNS=${RUNS:-3}
RUNTIME=${RUNTIME:-10}
W=$(mktemp -d /var/tmp/disktier-jvf.XXXXXX)
L=""
cleanup() { umount "$W/mnt" 2>/dev/null || true; [ -n "$L" ] && losetup -d "$L"; rm -rf "$W"; }
trap cleanup EXIT
truncate -s 1G "$W/img"
L=$(losetup --find --show --direct-io=on "$W/img")
mkfs.xfs -q -f "$L"; mkdir "$W/mnt"; mount "$L" "$W/mnt"; mkdir "$W/mnt/d"
cat > "$W/mnt/groups.fio" <<EOF
[global]
directory=$W/mnt/d
size=64m
bs=4k
direct=1
runtime=$RUNTIME
time_based

[reader]
rw=randread
numjobs=2

[writer]
rw=write
bs=2300
direct=0
ioengine=sync
fdatasync=1

[qd16]
stonewall
group_reporting
rw=randwrite
ioengine=libaio
iodepth=16
EOF
echo "machine: $(nproc) CPUs, $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg) at start; $(fio --version); $($B --version)"
show='import json,sys
d=json.load(sys.stdin); agg={}
for j in d["jobs"]:
    r=j["results"]; a=agg.setdefault(j["name"],{"iops":0.0,"p99":[]})
    for k in ("read","write"):
        if r.get(k): a["iops"]+=r[k]["iops"]
    s=r.get("sync") or r.get("read") or r.get("write")
    a["p99"].append(s["lat_ns"]["percentiles"]["99"])
print("  ".join("%s %9.0f IOPS p99 %7.3f ms" % (n, a["iops"], max(a["p99"])/1e6) for n,a in agg.items()))'
for _ in $(seq "$RUNS"); do
  for e in native fio; do
    # fio leaves its files behind, and disktier refuses to overwrite a file it did not create
    # (without --destructive): each run starts from an empty directory.
    rm -rf "$W/mnt/d" && mkdir "$W/mnt/d"
    printf '%-6s ' $e
    "$B" --no-save --format json bench "$W/mnt/groups.fio" --engine $e | python3 -c "$show"
  done
done
