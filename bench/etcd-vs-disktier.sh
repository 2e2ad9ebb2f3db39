#!/usr/bin/env bash
# Real etcd against disktier's etcd models on the same device: for xfs and ext4 on a loop
# device (backed by /var/tmp, a real disk), unthrottled and throttled with cgroup v1
# blkio.throttle.write_iops_device to WIOPS (a slow cloud volume):
#   1. etcd 3.4 (Debian's etcd-server) on 127.0.0.1, data dir on the device, loaded by
#      `etcdctl check perf --load=s` (150 puts/s for 60 s); its own
#      etcd_disk_wal_fsync_duration_seconds and etcd_disk_backend_commit_duration_seconds p99,
#      interpolated from the histogram buckets as Prometheus' histogram_quantile does;
#   2. `disktier check etcd --profile etcd-server` (the model, 60 s) in the same directory: its
#      exact WAL p99, and the p99 etcd's own histogram would report for the same fsyncs
#      (`as_etcd_reports`: etcd's 1 ms-doubling buckets, interpolated the same way): the
#      like-for-like figure, since etcd's is an interpolation inside a 2x-wide bucket too;
#   3. `disktier check etcd --quick` (the classic etcd fio job) in the same directory.
# Prints each figure and the ratios disktier/etcd (goal for etcd-server: within 1.5x; "ratio"
# is the exact p99's, "like" the as-etcd-reports p99's), the
# 1-minute load average after each row, and with REPEATS=N (rows run N times, interleaved) the
# median ratio per filesystem and mode.
# Needs root, losetup, mkfs.xfs, mkfs.ext4, etcd, etcdctl, curl, python3.
#
#   sudo bench/etcd-vs-disktier.sh         # WIOPS=40 FSS="xfs ext4" MODES="fast throttled" REPEATS=1
#   DISKTIER=target/debug/disktier sudo -E bench/etcd-vs-disktier.sh
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${DISKTIER:-${CARGO_TARGET_DIR:-$ROOT/target}/release/disktier}
[ -x "$B" ] || (cd "$ROOT" && cargo build -q --release -p disktier)
WIOPS=${WIOPS:-40}
FSS=${FSS:-"xfs ext4"}
MODES=${MODES:-"fast throttled"}
REPEATS=${REPEATS:-1}
PORT=${PORT:-42379}
W=$(mktemp -d /var/tmp/disktier-evd.XXXXXX)
CG=/sys/fs/cgroup/blkio/disktier-evd-$$
L=""
ETCD_PID=""
cleanup() {
  [ -n "$ETCD_PID" ] && kill "$ETCD_PID" 2>/dev/null && wait "$ETCD_PID" 2>/dev/null
  umount "$W/mnt" 2>/dev/null || true
  [ -n "$L" ] && losetup -d "$L" 2>/dev/null
  if [ -d "$CG" ]; then
    for p in $(cat $CG/cgroup.procs 2>/dev/null); do echo $p > /sys/fs/cgroup/blkio/cgroup.procs; done
    rmdir $CG 2>/dev/null
  fi
  rm -rf "$W"
}
trap cleanup EXIT

# p99 (ms) of a Prometheus histogram in metrics text, as histogram_quantile(0.99, ...).
quantile='import sys,re
name=sys.argv[1]; b=[]
for l in sys.stdin:
    m=re.match(name+r"_bucket\{le=\"([^\"]+)\"\} (\S+)", l)
    if m: b.append((float("inf") if m.group(1)=="+Inf" else float(m.group(1)), float(m.group(2))))
b.sort(); total=b[-1][1]; rank=0.99*total; lo=0.0; prev=0.0
for le,c in b:
    if c>=rank:
        if le==float("inf"): print("%.3f"%(lo*1e3)); break
        print("%.3f"%((lo+(le-lo)*(rank-prev)/max(c-prev,1e-9))*1e3)); break
    lo,prev=le,c'

inq() { if [ "$1" = throttled ]; then sh -c 'echo $$ > '$CG'/cgroup.procs; exec "$@"' _ "${@:2}"; else "${@:2}"; fi; }

echo "machine: $(nproc) CPUs, $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg) at start; $($B --version); $(etcd --version | head -1)"
printf '%-5s %-9s %10s %10s | %12s %12s %6s | %12s %6s | %12s %6s | %10s | %s\n' fs mode etcd-wal etcd-commit \
  server-wal server-commit ratio as-etcd like classic ratio "wal syncs" load
RATIOS=""
for _ in $(seq "$REPEATS"); do
for fs in $FSS; do
  for mode in $MODES; do
    truncate -s 2G "$W/img"
    L=$(losetup --find --show --direct-io=on "$W/img")
    if [ $fs = xfs ]; then mkfs.xfs -q -f $L; else mkfs.ext4 -q -F $L; fi
    mkdir -p "$W/mnt"; mount $L "$W/mnt"
    if [ $mode = throttled ]; then
      mkdir -p $CG; echo "$(cat "/sys/block/$(basename "$L")/dev") $WIOPS" > $CG/blkio.throttle.write_iops_device
    fi
    # 1. real etcd
    inq $mode etcd --name evd --data-dir "$W/mnt/etcd" \
      --listen-client-urls http://127.0.0.1:$PORT --advertise-client-urls http://127.0.0.1:$PORT \
      --listen-peer-urls http://127.0.0.1:$((PORT+1)) --initial-advertise-peer-urls http://127.0.0.1:$((PORT+1)) \
      --initial-cluster evd=http://127.0.0.1:$((PORT+1)) --listen-metrics-urls http://127.0.0.1:$((PORT+2)) \
      > "$W/etcd.log" 2>&1 &
    ETCD_PID=$!
    for _ in $(seq 50); do curl -sf http://127.0.0.1:$((PORT+2))/health >/dev/null && break; sleep 0.2; done
    m0=$(curl -s http://127.0.0.1:$((PORT+2))/metrics)
    ETCDCTL_API=3 etcdctl --endpoints http://127.0.0.1:$PORT check perf --load=s >/dev/null 2>&1 || true
    m1=$(curl -s http://127.0.0.1:$((PORT+2))/metrics)
    kill $ETCD_PID 2>/dev/null || true; wait $ETCD_PID 2>/dev/null || true; ETCD_PID=""
    # The load's interval only: the later scrape minus the earlier one.
    delta() { python3 -c 'import sys,re
a={};o=[]
for l in open(sys.argv[1]):
    m=re.match(r"(\S+) (\S+)$",l.strip())
    if m and not l.startswith("#"): a[m.group(1)]=float(m.group(2))
for l in open(sys.argv[2]):
    m=re.match(r"(\S+) (\S+)$",l.strip())
    if m and not l.startswith("#"): print(m.group(1), float(m.group(2))-a.get(m.group(1),0.0))' <(echo "$m0") <(echo "$m1"); }
    d=$(delta)
    ewal=$(echo "$d" | python3 -c "$quantile" etcd_disk_wal_fsync_duration_seconds)
    ecom=$(echo "$d" | python3 -c "$quantile" etcd_disk_backend_commit_duration_seconds)
    ecount=$(echo "$d" | awk '/^etcd_disk_wal_fsync_duration_seconds_count/ {printf "%d", $2}')
    rm -rf "$W/mnt/etcd"
    # 2. the etcd-server model, 3. the classic job (quick), in the same directory
    mkdir -p "$W/mnt/d"
    s=$(inq $mode $B --no-save --format json check etcd "$W/mnt/d" --profile etcd-server || true)
    swal=$(echo "$s" | python3 -c 'import json,sys; d=json.load(sys.stdin); print("%.3f"%(d["verdicts"][0]["value"]/1e6))')
    scom=$(echo "$s" | python3 -c 'import json,sys; d=json.load(sys.stdin); print("%.3f"%(d["backend_commit"]["lat_ns"]["percentiles"]["99"]/1e6))')
    scount=$(echo "$s" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["results"]["sync"]["ios"])')
    slike=$(echo "$s" | python3 -c 'import json,sys; d=json.load(sys.stdin); print("%.3f"%(d["as_etcd_reports"]["wal_fsync_p99_ns"]/1e6))')
    c=$(inq $mode $B --no-save --format json check etcd "$W/mnt/d" --quick --size 2m || true)
    cwal=$(echo "$c" | python3 -c 'import json,sys; d=json.load(sys.stdin); print("%.3f"%(d["verdicts"][0]["value"]/1e6))')
    r() { python3 -c "print('%.2f' % ($1/$2))"; }
    printf '%-5s %-9s %8s ms %8s ms | %9s ms %9s ms %6s | %9s ms %6s | %9s ms %6s | %4s/%-5s | %s\n' $fs $mode $ewal $ecom \
      $swal $scom "$(r $swal $ewal)" $slike "$(r $slike $ewal)" $cwal "$(r $cwal $ewal)" $ecount $scount "$(cut -d' ' -f1 /proc/loadavg)"
    RATIOS="$RATIOS$fs $mode $(r $swal $ewal) $(r $slike $ewal)
"
    umount "$W/mnt"; losetup -d $L; L=""; rm -f "$W/img"
    if [ -d $CG ]; then rmdir $CG 2>/dev/null || true; fi
  done
done
done
if [ "$REPEATS" -gt 1 ]; then
  echo "median etcd-server/etcd WAL p99 ratios over $REPEATS runs (goal: 0.67 to 1.5), exact and like-for-like:"
  printf '%s' "$RATIOS" | python3 -c 'import sys,statistics as st
rows={}
for l in sys.stdin:
    f,m,r,k=l.split(); rows.setdefault((f,m),[]).append((float(r),float(k)))
for (f,m),v in rows.items():
    print("%-5s %-9s exact median %.2f (runs: %s)  like-for-like median %.2f (runs: %s)" % (f,m,
        st.median(x for x,_ in v)," ".join("%.2f"%x for x,_ in v),
        st.median(k for _,k in v)," ".join("%.2f"%k for _,k in v)))'
fi
