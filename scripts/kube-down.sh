#!/usr/bin/env bash
# Stops the test cluster that scripts/kube-up.sh started and leaves nothing behind: the
# processes it recorded (and the containers its containerd ran), the mounts under its directory,
# the network namespaces of its pods, its bridge, the kernel settings the kubelet changed, and the
# host paths the components created that did not exist before. The binaries' cache stays.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/kube-env.sh
. "$repo/scripts/kube-env.sh"

say() { echo "kube-down: $*" >&2; }
[ "$(id -u)" -eq 0 ] || { say "error: must run as root"; exit 2; }
if [ ! -d "$dir" ]; then
  say "no cluster directory $dir: nothing to stop"
  exit 0
fi

# alive NAME: the recorded process NAME still runs (and is still that program).
alive() {
  local f="$dir/pids/$1.pid" pid
  [ -f "$f" ] || return 1
  pid=$(cat "$f")
  [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "$2"
}

# stop NAME PATTERN: SIGTERM, then SIGKILL after 10 s.
stop() {
  local name=$1 pattern=$2 pid
  alive "$name" "$pattern" || { rm -f "$dir/pids/$name.pid"; return 0; }
  pid=$(cat "$dir/pids/$name.pid")
  kill -TERM "$pid" 2>/dev/null
  for _ in $(seq 50); do
    alive "$name" "$pattern" || break
    sleep 0.2
  done
  if alive "$name" "$pattern"; then
    say "$name (pid $pid) did not stop on SIGTERM: killing it"
    kill -KILL "$pid" 2>/dev/null
    sleep 0.2
  fi
  rm -f "$dir/pids/$name.pid"
}

stop kubelet kubelet
stop kube-scheduler kube-scheduler
stop kube-controller-manager kube-controller-manager
stop kube-apiserver kube-apiserver

# The containers of the pods: their tasks are killed and deleted through containerd, then the
# pods' network namespaces are released (which removes their veths from the bridge).
netns=()
if alive containerd containerd; then
  ctr_k8s() { timeout 20 ctr --address "$sock" -n k8s.io "$@"; }
  for c in $(ctr_k8s containers ls -q 2>/dev/null); do
    while IFS= read -r ns; do netns+=("$ns"); done < <(ctr_k8s containers info "$c" 2>/dev/null |
      grep -o '"/var/run/netns/[^"]*"\|"/run/netns/[^"]*"' | tr -d '"' | sort -u)
    ctr_k8s tasks kill -s SIGKILL "$c" >/dev/null 2>&1
  done
  for c in $(ctr_k8s containers ls -q 2>/dev/null); do
    for _ in $(seq 25); do
      ctr_k8s tasks delete "$c" >/dev/null 2>&1 && break
      ctr_k8s tasks ls -q 2>/dev/null | grep -qxF "$c" || break
      sleep 0.2
    done
    ctr_k8s containers delete "$c" >/dev/null 2>&1
  done
fi
stop containerd containerd
stop etcd etcd
# The shims of its containerd exit with their tasks; any left behind is killed.
for p in $(pgrep -f "containerd-shim-runc-v2 .*-address $sock" 2>/dev/null); do
  kill -KILL "$p" 2>/dev/null
done

for ns in "${netns[@]}"; do
  ns=${ns/#\/var\/run/\/run}
  if [ -e "$ns" ]; then
    umount "$ns" 2>/dev/null || umount -l "$ns" 2>/dev/null
    rm -f "$ns"
  fi
done

# Everything mounted under the cluster's directory (volumes, secrets, rootfs, shm), deepest first.
while IFS= read -r m; do
  umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || say "could not unmount $m"
done < <(awk -v d="$dir/" 'index($5, d) == 1 {print $5}' /proc/self/mountinfo | sort -r)

if ip link show "$bridge" >/dev/null 2>&1; then
  ip link delete "$bridge" || say "could not remove the bridge $bridge"
fi

if [ -f "$dir/sysctls.saved" ]; then
  while IFS='=' read -r key value; do
    [ "$(sysctl -n "$key" 2>/dev/null)" = "$value" ] || sysctl -qw "$key=$value" || say "could not restore $key=$value"
  done <"$dir/sysctls.saved"
fi

if [ -f "$dir/host-paths.absent" ]; then
  while IFS= read -r p; do
    [ -e "$p" ] || continue
    case "$p" in
      /sys/fs/cgroup/*) find "$p" -depth -type d -exec rmdir {} + 2>/dev/null || say "could not remove the cgroup $p" ;;
      *) rm -rf "$p" ;;
    esac
  done <"$dir/host-paths.absent"
fi

left=$(for f in "$dir"/pids/*.pid; do [ -f "$f" ] && basename "$f" .pid; done)
if [ -n "$left" ]; then
  say "error: still running: $left (see $dir/pids)"
  exit 2
fi
rm -rf "$dir"
say "stopped; removed $dir"
