# Shared settings of scripts/kube-up.sh and scripts/kube-down.sh (sourced, not run).
# The addresses and ports are fixed so that kube-down finds what kube-up made; all are on
# loopback or on the cluster's own bridge, which exists only inside this machine.
# shellcheck shell=bash disable=SC2034
dir=${DISKTIER_KUBE_DIR:-/var/lib/disktier-kube}
bridge=dtkube0
pod_cidr=10.233.0.0/24
service_cidr=10.234.0.0/24
etcd_port=12379
etcd_peer_port=12380
api_port=16443
kubelet_port=11250
kubelet_healthz_port=11248
cm_port=11257
sched_port=11259
sock="$dir/containerd/containerd.sock"
# The node's name. The API server reaches the kubelet by the node's Hostname address (the
# kubelet refuses a loopback --node-ip), so the name must resolve to loopback: the machine's
# hostname when /etc/hosts maps it there, else "localhost".
node=$(hostname | tr '[:upper:]' '[:lower:]')
if ! getent ahostsv4 "$node" 2>/dev/null | awk '{print $1}' | grep -q '^127\.'; then
  node=localhost
fi
# The kernel settings the kubelet rewrites at start (and the bridge plugin: ip_forward).
sysctls=(kernel.panic_on_oops vm.overcommit_memory kernel.panic vm.panic_on_oom
         kernel.keys.root_maxkeys kernel.keys.root_maxbytes net.ipv4.ip_forward)
# Host paths the components create outside $dir; kube-down removes those that were absent
# before kube-up.
host_paths=(/var/log/pods /var/log/containers /var/lib/cni /run/containerd /run/netns
            /var/lib/kubelet /etc/kubernetes /var/lib/dockershim /opt/containerd /opt/cni
            /sys/fs/cgroup/cpu/kubepods /sys/fs/cgroup/cpuacct/kubepods /sys/fs/cgroup/cpuset/kubepods
            /sys/fs/cgroup/memory/kubepods /sys/fs/cgroup/devices/kubepods
            /sys/fs/cgroup/freezer/kubepods /sys/fs/cgroup/blkio/kubepods /sys/fs/cgroup/pids/kubepods
            /sys/fs/cgroup/systemd/kubepods /sys/fs/cgroup/unified/kubepods /sys/fs/cgroup/hugetlb/kubepods
            /sys/fs/cgroup/net_cls/kubepods /sys/fs/cgroup/perf_event/kubepods)
