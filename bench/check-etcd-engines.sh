#!/usr/bin/env bash
# `disktier check etcd --quick`, native engine vs --engine fio, alternating, 3 runs each, on xfs
# over a RAM-backed loop device: unthrottled, and throttled to 300 write IOPS with cgroup v1
# blkio.throttle.write_iops_device (a slow cloud volume). Prints p99, its 95 % interval, the
# fdatasync rate and the verdict of every run. Needs root, losetup, mkfs.xfs, fio, python3.
#
#   sudo bench/check-etcd-engines.sh        # DISKTIER=path/to/disktier to use another build
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${DISKTIER:-${CARGO_TARGET_DIR:-$ROOT/target}/debug/disktier}
[ -x "$B" ] || (cd "$ROOT" && cargo build -q -p disktier)
MNT=$(mktemp -d /tmp/disktier-cee.XXXXXX)
truncate -s 320M /dev/shm/disktier-cee.$$.img
L=$(losetup --find --show --direct-io=on /dev/shm/disktier-cee.$$.img)
CG=/sys/fs/cgroup/blkio/disktier-cee-$$
cleanup() { umount $MNT 2>/dev/null; rmdir $MNT; losetup -d $L; rm -f /dev/shm/disktier-cee.$$.img; for p in $(cat $CG/cgroup.procs 2>/dev/null); do echo $p > /sys/fs/cgroup/blkio/cgroup.procs; done; rmdir $CG 2>/dev/null; }
trap cleanup EXIT
mkfs.xfs -q -f $L; mount $L $MNT
mkdir $CG; echo "$(cat "/sys/block/$(basename "$L")/dev") 300" > $CG/blkio.throttle.write_iops_device
show='import json,sys; d=json.load(sys.stdin); v=d["verdicts"][0]; c=v["ci95"]; f=lambda x: "-" if x is None else "%.2f"%(x/1e6); print("%-6s p99 %s ms  ci [%s, %s] ms  n=%d  sync/s %.0f  pass=%s" % (d["engine"], f(v["value"]), f(c["lo_ns"]), f(c["hi_ns"]), c["n"], d["results"]["sync"]["iops"], v["pass"]))'
for mode in plain throttled; do
  echo "== $mode"
  for _ in 1 2 3; do for e in native fio; do
    if [ $mode = plain ]; then $B --no-save --format json check etcd $MNT --quick --engine $e | python3 -c "$show" || true
    else sh -c 'echo $$ > '$CG'/cgroup.procs; exec "$@"' _ $B --no-save --format json check etcd $MNT --quick --size 1m --engine $e | python3 -c "$show" || true; fi
  done; done
done
