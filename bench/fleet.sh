#!/usr/bin/env bash
# Benchmarks for `disktier fleet` (issue #15), figures go to BENCHMARKS.md:
#  1. Overhead per node: `fleet run --nodes NODE -- check etcd DIR --quick` on the test
#     cluster's real node against the same `check etcd DIR --quick` run directly on it; the
#     difference (median of RUNS) is what fleet adds: Job creation, image start, the pod, log
#     collection, deletion and the wait until the objects are gone.
#  2. The client at 50 nodes: 50 registered Node objects with no kubelet, one run with
#     `--parallel 50 --timeout 10s` (every pod stays Pending, so each node ends at its
#     deadline): wall time, CPU time and peak RSS of the client (/usr/bin/time -v) to create,
#     watch, collect and clean up 50 Jobs.
#
# Needs a running test cluster (scripts/kube-up.sh) and, for 1, the disktier image on it.
# Usage: bench/fleet.sh [runs]   (KUBECONFIG defaults to $DISKTIER_TEST_KUBECONFIG; DISKTIER
# to target/release/disktier)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-5}
export KUBECONFIG=${KUBECONFIG:-${DISKTIER_TEST_KUBECONFIG:?set DISKTIER_TEST_KUBECONFIG or KUBECONFIG}}
B=${DISKTIER:-target/release/disktier}
[ -x "$B" ] || cargo build --release -p disktier
WORK=$(mktemp -d /var/tmp/disktier-fleet-bench.XXXXXX)
NS="fleet-bench-$$"
GROUP="bench-$$"
cleanup() {
  kubectl delete nodes -l "disktier.test/group=$GROUP" --wait=false >/dev/null 2>&1 || true
  kubectl delete pods -n "$NS" --all --grace-period=0 --force >/dev/null 2>&1 || true
  kubectl delete namespace "$NS" --wait=false >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT
export DISKTIER_DB="$WORK/db.sqlite"
kubectl create namespace "$NS" >/dev/null
NODE=$(kubectl get nodes -l '!disktier.test/fake-node' -o jsonpath='{.items[0].metadata.name}')
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores; node $NODE; $($B --version)"

echo "## 1. overhead per node ($RUNS runs each; check etcd --quick in $WORK/d)"
mkdir -p "$WORK/d"
python3 - "$B" "$RUNS" "$NODE" "$NS" "$WORK/d" <<'PY'
import json, statistics, subprocess, sys, time
b, runs, node, ns, d = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
direct, fleet = [], []
for i in range(runs):
    t = time.monotonic()
    subprocess.run([b, "check", "etcd", d, "--quick", "--no-save", "--format", "json"], check=False, capture_output=True)
    direct.append(time.monotonic() - t)
    t = time.monotonic()
    out = subprocess.run([b, "fleet", "run", "--nodes", node, "-n", ns, "--no-save", "--format", "json",
                          "--", "check", "etcd", d, "--quick"], capture_output=True, text=True)
    fleet.append(time.monotonic() - t)
    status = json.loads(out.stdout)["nodes"][0]["status"]
    print(f"  run {i+1}: direct {direct[-1]:.2f} s, fleet {fleet[-1]:.2f} s ({status})")
md, mf = statistics.median(direct), statistics.median(fleet)
print(f"  median: direct {md:.2f} s, fleet {mf:.2f} s, overhead {mf - md:.2f} s per node")
PY

echo "## 2. the client at 50 registered nodes (--parallel 50 --timeout 10s)"
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
for i in $(seq 1 50); do
  cat <<NODE
{"apiVersion":"v1","kind":"Node","metadata":{"name":"fleet-bench-$$-$i","labels":{"disktier.test/fake-node":"fleet-bench-$$-$i","disktier.test/group":"$GROUP"}},
 "status":{"capacity":{"cpu":"2","memory":"4Gi","pods":"110"},"allocatable":{"cpu":"2","memory":"4Gi","pods":"110"},
 "conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"bench node, no kubelet","lastHeartbeatTime":"$now","lastTransitionTime":"$now"}]}}
NODE
done > "$WORK/nodes.json"
kubectl create -f "$WORK/nodes.json" >/dev/null
/usr/bin/time -v "$B" fleet run --selector "disktier.test/group=$GROUP" -n "$NS" --parallel 50 --timeout 10s \
  --no-save --quiet --format json -- check etcd /var/lib/etcd > "$WORK/out.json" 2> "$WORK/time.txt" || true
python3 - "$WORK/out.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["summary"]
print(f"  nodes {s['nodes']}, errors {s['errors']}, left behind {len(d['left_behind'])}")
reasons = {n["reason"].split(":")[0] for n in d["nodes"] if n.get("reason")}
print(f"  reasons: {sorted(reasons)}")
PY
grep -E "Elapsed|User time|System time|Maximum resident" "$WORK/time.txt" | sed 's/^\s*/  /'
left=$(kubectl get jobs,pods -n "$NS" -l app.kubernetes.io/managed-by=disktier -o name | wc -l)
echo "  Jobs/Pods left in the namespace afterwards: $left"
