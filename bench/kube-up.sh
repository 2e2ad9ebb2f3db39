#!/usr/bin/env bash
# Times of the test cluster (scripts/kube-up.sh), figures go to BENCHMARKS.md and the README:
#  1. the first build of its server binaries on this machine (download, unpack, make of
#     kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, the pause program),
#     into a scratch cache so the machine's cache is left alone: only with FIRST_BUILD=1;
#  2. bring-up with the binaries cached (kube-up to a Ready node, images imported) and
#     kube-down, RUNS times. It refuses to run while a cluster is up (it would stop it).
#
# Usage: [FIRST_BUILD=1] [RUNS=3] bench/kube-up.sh   (as root)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
secs() { local ms=$((($2 - $1) / 1000000)); printf '%d.%01d' $((ms / 1000)) $((ms % 1000 / 100)); }
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
if [ "${FIRST_BUILD:-}" = 1 ]; then
  scratch=$(mktemp -d /var/tmp/disktier-kube-cache.XXXXXX)
  start=$(date +%s%N)
  DISKTIER_KUBE_CACHE=$scratch bash scripts/kube-up.sh --build-only
  end=$(date +%s%N)
  echo "first build: $(secs "$start" "$end") s"
  rm -rf "$scratch"
fi
if bash scripts/kube-up.sh --status >/dev/null; then
  echo "a test cluster is running: not timing bring-up (run scripts/kube-down.sh first)" >&2
  exit 2
fi
for i in $(seq "$RUNS"); do
  start=$(date +%s%N)
  bash scripts/kube-up.sh >/dev/null
  up=$(date +%s%N)
  bash scripts/kube-down.sh 2>/dev/null
  down=$(date +%s%N)
  echo "run $i: kube-up $(secs "$start" "$up") s, kube-down $(secs "$up" "$down") s"
done
