#!/usr/bin/env bash
# Starts a real single-node Kubernetes (1.20, from Debian's source package) on this machine for
# the fleet tests, and prints the path of its kubeconfig as the last line of its output.
#
#   bash scripts/kube-up.sh               # build once (cached), start, wait for Ready
#   bash scripts/kube-up.sh --build-only  # only build and cache the server binaries
#
# Everything is bound to 127.0.0.1 and to a bridge of its own; containerd runs with its own
# config, root, state and socket, beside any containerd the machine may already run. What it
# starts is recorded under $DISKTIER_KUBE_DIR (default /var/lib/disktier-kube) so that
# scripts/kube-down.sh stops exactly that. The server binaries are built once per machine and
# cached by Debian source version under $DISKTIER_KUBE_CACHE (default /var/cache/disktier-kube).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)

cache_root=${DISKTIER_KUBE_CACHE:-/var/cache/disktier-kube}
# shellcheck source=scripts/kube-env.sh
. "$repo/scripts/kube-env.sh"

say() { echo "kube-up: $*" >&2; }
die() { echo "kube-up: error: $*" >&2; exit 2; }

[ "$(id -u)" -eq 0 ] || die "must run as root (it starts containerd and the kubelet)"

# --- packages ---------------------------------------------------------------------------------
install_packages() {
  local need=()
  command -v containerd >/dev/null || need+=(containerd)
  command -v runc >/dev/null || need+=(runc)
  command -v etcd >/dev/null || need+=(etcd-server)
  command -v go >/dev/null || need+=(golang-go)
  [ -x /usr/lib/cni/bridge ] || need+=(containernetworking-plugins)
  [ -x /bin/busybox ] || command -v busybox >/dev/null || need+=(busybox-static)
  command -v iptables >/dev/null || need+=(iptables)
  command -v conntrack >/dev/null || need+=(conntrack)
  command -v socat >/dev/null || need+=(socat)
  command -v openssl >/dev/null || need+=(openssl)
  command -v ip >/dev/null || need+=(iproute2)
  command -v dpkg-source >/dev/null || need+=(dpkg-dev)
  command -v gcc >/dev/null || need+=(gcc libc6-dev)
  command -v make >/dev/null || need+=(make)
  command -v rsync >/dev/null || need+=(rsync)
  command -v mount >/dev/null || need+=(mount)
  if [ ${#need[@]} -gt 0 ]; then
    say "installing ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  fi
  command -v kubectl >/dev/null || die "kubectl is not installed (Debian 12 has no kubectl package; install it from https://kubernetes.io/docs/tasks/tools/)"
}

# --- build the server binaries once per machine ------------------------------------------------
# Debian's source package is fetched with a private sources list (scripts/apt-src.sh).
# shellcheck source=scripts/apt-src.sh
. "$repo/scripts/apt-src.sh"

source_version() {
  apt_private "$cache_root"
  apt-get "${APT_OPTS[@]}" update -qq >/dev/null
  apt-cache "${APT_OPTS[@]}" showsrc kubernetes | awk '/^Version:/ {print $2}' | sort -V | tail -n 1
}

# Prints the cache directory holding bin/{kube-apiserver,...,pause}; builds it when missing.
ensure_binaries() {
  local have
  have=$(find "$cache_root" -mindepth 3 -maxdepth 3 -path '*/bin/.complete' 2>/dev/null | sort -V | tail -n 1 || true)
  if [ -n "$have" ]; then
    dirname "$(dirname "$have")"
    return
  fi
  # One build at a time on a machine: a second kube-up waits for the first one's build.
  mkdir -p "$cache_root"
  exec 9>"$cache_root/.lock"
  flock 9
  have=$(find "$cache_root" -mindepth 3 -maxdepth 3 -path '*/bin/.complete' 2>/dev/null | sort -V | tail -n 1 || true)
  if [ -n "$have" ]; then
    dirname "$(dirname "$have")"
    return
  fi
  local version
  version=$(source_version)
  [ -n "$version" ] || die "Debian's archive has no kubernetes source package (apt-cache showsrc kubernetes)"
  apt_private "$cache_root"
  local out="$cache_root/$version"
  local work="$out/build"
  say "building Kubernetes $version server binaries once (6 to 14 minutes on 2 cores) in $work"
  local start=$SECONDS
  rm -rf "$work" && mkdir -p "$work" "$out/bin"
  (cd "$work" && apt-get "${APT_OPTS[@]}" source --download-only kubernetes >/dev/null 2>&1) \
    || die "could not download the kubernetes source package"
  (cd "$work" && dpkg-source -x --no-check ./*.dsc src >/dev/null) || die "dpkg-source -x failed in $work"
  local tree="$work/src"
  mkdir -p "$tree/.go/src/k8s.io"
  ln -sfn "$tree" "$tree/.go/src/k8s.io/kubernetes"
  (cd "$tree/.go/src/k8s.io/kubernetes" && GOPATH="$tree/.go" CGO_ENABLED=0 GOCACHE="$cache_root/gocache" \
    make WHAT="cmd/kube-apiserver cmd/kube-controller-manager cmd/kube-scheduler cmd/kubelet" \
    >"$work/make.log" 2>&1) || { tail -n 30 "$work/make.log" >&2; die "make failed: $work/make.log"; }
  for b in kube-apiserver kube-controller-manager kube-scheduler kubelet; do
    cp "$tree/_output/bin/$b" "$out/bin/$b"
  done
  gcc -static -O2 -DVERSION="\"disktier\"" -o "$out/bin/pause" "$tree/build/pause/linux/pause.c" \
    || die "could not compile the pause program"
  echo "$((SECONDS - start))" >"$out/build-seconds"
  rm -rf "$work" "$cache_root/gocache"
  touch "$out/bin/.complete"
  say "built in $((SECONDS - start)) s: $out/bin"
  echo "$out"
}


# --- a cluster that is already up is reused; a half-up one is an error ---------------------------
cluster_up() {
  [ -f "$dir/admin.kubeconfig" ] && [ -d "$dir/pids" ] || return 1
  local p
  for p in "$dir"/pids/*.pid; do
    [ -f "$p" ] && kill -0 "$(cat "$p")" 2>/dev/null || return 1
  done
  kubectl --kubeconfig "$dir/admin.kubeconfig" --request-timeout=5s get node "$node" >/dev/null 2>&1
}

any_running() {
  local p
  for p in "$dir"/pids/*.pid; do
    [ -f "$p" ] && kill -0 "$(cat "$p")" 2>/dev/null && return 0
  done
  return 1
}

case "${1:-}" in
  --build-only)
    install_packages
    ensure_binaries >/dev/null
    exit 0 ;;
  --status)
    if cluster_up; then echo "$dir/admin.kubeconfig"; exit 0; fi
    exit 1 ;;
  "") ;;
  *) die "unknown argument '$1' (use no argument, --build-only or --status)" ;;
esac

if cluster_up; then
  say "a cluster started by an earlier kube-up is running: reusing it"
  import_disktier_image=1
else
  if any_running; then
    die "a cluster from an earlier kube-up is partly running (see $dir/pids): run scripts/kube-down.sh first"
  fi
  if [ -d "$dir" ]; then
    # A cluster that died (or a reboot): its state would bring back old objects. Clean it up
    # the way kube-down does (mounts, bridge, kernel settings, host paths), then start afresh.
    say "$dir holds a cluster that is not running: cleaning it up with kube-down first"
    bash "$repo/scripts/kube-down.sh" || die "kube-down could not clean up $dir"
  fi
  import_disktier_image=0
fi

# --- PKI with openssl ---------------------------------------------------------------------------
# sign NAME CN O [SAN]: a key and a certificate signed by the cluster's CA, in $dir/pki.
sign() {
  local name=$1 cn=$2 org=$3 san=${4:-} subj="/CN=$2"
  [ -n "$org" ] && subj="/O=$org/CN=$cn"
  local ext="$dir/pki/$name.ext"
  {
    echo "basicConstraints=CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    if [ -n "$san" ]; then
      echo "extendedKeyUsage=serverAuth,clientAuth"
      echo "subjectAltName=$san"
    else
      echo "extendedKeyUsage=clientAuth"
    fi
  } >"$ext"
  openssl req -new -newkey rsa:2048 -nodes -keyout "$dir/pki/$name.key" -subj "$subj" \
    -out "$dir/pki/$name.csr" 2>/dev/null
  openssl x509 -req -in "$dir/pki/$name.csr" -CA "$dir/pki/ca.crt" -CAkey "$dir/pki/ca.key" \
    -CAcreateserial -days 3650 -extfile "$ext" -out "$dir/pki/$name.crt" 2>/dev/null
  rm -f "$dir/pki/$name.csr" "$ext"
}

# kubeconfig NAME USER: a kubeconfig for the API server with the client cert NAME.
kubeconfig() {
  cat >"$dir/$1.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: disktier-test
  cluster:
    certificate-authority: $dir/pki/ca.crt
    server: https://127.0.0.1:$api_port
users:
- name: $2
  user:
    client-certificate: $dir/pki/$1.crt
    client-key: $dir/pki/$1.key
contexts:
- name: disktier-test
  context: {cluster: disktier-test, user: $2}
current-context: disktier-test
KC
}

make_pki() {
  mkdir -p "$dir/pki"
  [ -f "$dir/pki/.complete" ] && return
  openssl req -x509 -new -newkey rsa:2048 -nodes -keyout "$dir/pki/ca.key" -days 3650 \
    -subj "/CN=disktier-test-ca" -out "$dir/pki/ca.crt" 2>/dev/null
  sign apiserver kube-apiserver "" "IP:127.0.0.1,IP:${service_cidr%.*}.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  sign admin admin system:masters
  sign controller-manager system:kube-controller-manager ""
  sign scheduler system:kube-scheduler ""
  sign kubelet-client "system:node:$node" system:nodes
  sign apiserver-kubelet-client kube-apiserver-kubelet-client system:masters
  sign kubelet-serving "$node" "" "IP:127.0.0.1,DNS:$node,DNS:localhost"
  openssl genrsa -out "$dir/pki/sa.key" 2048 2>/dev/null
  openssl rsa -in "$dir/pki/sa.key" -pubout -out "$dir/pki/sa.pub" 2>/dev/null
  chmod 600 "$dir"/pki/*.key
  kubeconfig admin admin
  kubeconfig controller-manager system:kube-controller-manager
  kubeconfig scheduler system:kube-scheduler
  kubeconfig kubelet-client "system:node:$node"
  touch "$dir/pki/.complete"
}

# --- configuration files ------------------------------------------------------------------------
write_configs() {
  mkdir -p "$dir/containerd" "$dir/cni/net.d" "$dir/cni/networks" "$dir/cni/cache" "$dir/kubelet" \
    "$dir/etcd" "$dir/logs" "$dir/pids"
  cat >"$dir/containerd/config.toml" <<CFG
version = 2
root = "$dir/containerd/root"
state = "$dir/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]
[grpc]
  address = "$sock"
[ttrpc]
  address = "$sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$dir/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$pause_image"
  # This kind of VM lacks CAP_SYS_RESOURCE: runc cannot lower oom_score_adj, and without this
  # every sandbox fails with "can't get final child's PID from pipe: EOF".
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$dir/containerd/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$dir/cni/net.d"
    max_conf_num = 1
CFG
  cat >"$dir/cni/net.d/10-disktier.conflist" <<CNI
{
  "cniVersion": "0.4.0",
  "name": "disktier-test",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$bridge",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$dir/cni/networks",
        "ranges": [[{"subnet": "$pod_cidr"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    }
  ]
}
CNI
  cat >"$dir/kubelet.yaml" <<KL
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: $kubelet_port
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $kubelet_healthz_port
cgroupDriver: cgroupfs
failSwapOn: false
oomScoreAdj: 0
makeIPTablesUtilChains: false
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $dir/pki/ca.crt}
authorization:
  mode: Webhook
tlsCertFile: $dir/pki/kubelet-serving.crt
tlsPrivateKeyFile: $dir/pki/kubelet-serving.key
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
serializeImagePulls: false
# The machine's disk may be nearly full: evict only at the very end, never collect images.
evictionHard: {memory.available: "10Mi", nodefs.available: "1%", nodefs.inodesFree: "1%", imagefs.available: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
KL
}

# --- images -------------------------------------------------------------------------------------
# image_archive OUT NAME ENTRYPOINT_JSON FILE...: a docker-archive image with one layer holding
# FILE... (given as SRC:DEST pairs), made with no daemon: sorted names, owner 0, mtime 0.
image_archive() {
  local out=$1 name=$2 entry=$3
  shift 3
  local t
  t=$(mktemp -d)
  mkdir -p "$t/root"
  local pair src dest
  for pair in "$@"; do
    src=${pair%%:*} dest=${pair#*:}
    mkdir -p "$t/root/$(dirname "$dest")"
    cp "$src" "$t/root/$dest"
  done
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$t/root" -cf "$t/layer.tar" .
  local diff
  diff=$(sha256sum "$t/layer.tar" | cut -d' ' -f1)
  mkdir -p "$t/img/$diff"
  mv "$t/layer.tar" "$t/img/$diff/layer.tar"
  printf '{"architecture":"amd64","os":"linux","config":{"Entrypoint":%s},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
    "$entry" "$diff" >"$t/config.json"
  local cfg
  cfg=$(sha256sum "$t/config.json" | cut -d' ' -f1)
  mv "$t/config.json" "$t/img/$cfg.json"
  printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["%s/layer.tar"]}]' "$cfg" "$name" "$diff" \
    >"$t/img/manifest.json"
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$t/img" -cf "$out" .
  rm -rf "$t"
}

ctr_k8s() { ctr --address "$sock" -n k8s.io "$@"; }

# import_image ARCHIVE NAME: imports ARCHIVE and makes sure the image is known as NAME.
import_image() {
  local archive=$1 name=$2 out imported
  out=$(ctr_k8s images import "$archive" 2>&1) || { echo "$out" >&2; return 1; }
  ctr_k8s images ls -q | grep -qxF "$name" && return 0
  # The archive names the image differently (or not at all): import it by digest and tag that.
  out=$(ctr_k8s images import --digests "$archive" 2>&1) || { echo "$out" >&2; return 1; }
  imported=$(echo "$out" | awk '/^unpacking / {print $2}' | head -n 1)
  [ -n "$imported" ] || { echo "$out" >&2; return 1; }
  ctr_k8s images tag --force "$imported" "$name" >/dev/null
}

pause_image=localhost/disktier-pause:1.20
testbox_image=localhost/disktier-testbox:1
disktier_version=$(awk '/^\[workspace.package\]/ {w=1; next} /^\[/ {w=0} w && /^version *=/ {gsub(/[" ]/, "", $3); print $3; exit}' "$repo/Cargo.toml")
disktier_image=localhost/disktier:$disktier_version

import_disktier() {
  local archive="$repo/target/image/disktier-oci.tar"
  if [ ! -f "$archive" ] && [ -f "$repo/scripts/image.sh" ]; then
    say "no $archive: building it with scripts/image.sh"
    bash "$repo/scripts/image.sh" >&2 || say "scripts/image.sh failed: the cluster has no $disktier_image"
  fi
  if [ -f "$archive" ]; then
    if import_image "$archive" "$disktier_image"; then
      say "imported $archive as $disktier_image"
    else
      say "could not import $archive: the cluster has no $disktier_image"
    fi
  elif ctr_k8s images ls -q | grep -qxF "$disktier_image"; then
    say "no $archive and no scripts/image.sh: keeping the $disktier_image the cluster has"
  else
    say "no $archive and no scripts/image.sh: the cluster has no $disktier_image (tests that need it skip)"
  fi
}

if [ "$import_disktier_image" = 1 ]; then
  import_disktier
  echo "$dir/admin.kubeconfig"
  exit 0
fi

# --- start ---------------------------------------------------------------------------------------
start_time=$SECONDS
install_packages
cache=$(ensure_binaries)
bin="$cache/bin"

for port in $etcd_port $etcd_peer_port $api_port $kubelet_port $kubelet_healthz_port $cm_port $sched_port; do
  if ss -Hltn "sport = :$port" | grep -q .; then
    die "port 127.0.0.1:$port is in use by another program: stop it, or run scripts/kube-down.sh"
  fi
done
if ip link show "$bridge" >/dev/null 2>&1; then
  die "the bridge $bridge exists already: run scripts/kube-down.sh first"
fi

mkdir -p "$dir"
# What kube-down must put back: the kernel settings and the host paths that did not exist.
if [ ! -f "$dir/sysctls.saved" ]; then
  for s in "${sysctls[@]}"; do echo "$s=$(sysctl -n "$s")"; done >"$dir/sysctls.saved"
fi
if [ ! -f "$dir/host-paths.absent" ]; then
  for p in "${host_paths[@]}"; do [ -e "$p" ] || echo "$p"; done >"$dir/host-paths.absent"
fi
make_pki
write_configs

# start NAME COMMAND...: runs COMMAND in its own session, logs to $dir/logs/NAME.log, records
# its PID in $dir/pids/NAME.pid.
start() {
  local name=$1
  shift
  setsid "$@" </dev/null >"$dir/logs/$name.log" 2>&1 &
  echo $! >"$dir/pids/$name.pid"
}

# wait_for WHAT SECONDS COMMAND...: polls COMMAND every 0.2 s.
wait_for() {
  local what=$1 limit=$2 i=0
  shift 2
  until "$@" >/dev/null 2>&1; do
    i=$((i + 1))
    if [ $i -gt $((limit * 5)) ]; then
      die "$what did not come up within $limit s: see $dir/logs/ (scripts/kube-down.sh stops what started)"
    fi
    sleep 0.2
  done
}

start containerd containerd --config "$dir/containerd/config.toml"
start etcd etcd --name disktier-test --data-dir "$dir/etcd" \
  --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
  --listen-peer-urls "http://127.0.0.1:$etcd_peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer_port" \
  --initial-cluster "disktier-test=http://127.0.0.1:$etcd_peer_port"
wait_for containerd 20 ctr --address "$sock" version

# The sandbox ("pause") image cannot be pulled here: it is built from the same source tree.
if ! ctr_k8s images ls -q | grep -qxF "$pause_image"; then
  image_archive "$dir/pause.tar" "$pause_image" '["/pause"]' "$bin/pause:pause"
  import_image "$dir/pause.tar" "$pause_image" || die "could not import the pause image"
fi
# A tiny local image for the tests that need any image: busybox-static as /bin/sh.
if ! ctr_k8s images ls -q | grep -qxF "$testbox_image"; then
  busybox=$(command -v busybox)
  image_archive "$dir/testbox.tar" "$testbox_image" '["/bin/sh"]' "$busybox:bin/busybox" \
    "$busybox:bin/sh"
  import_image "$dir/testbox.tar" "$testbox_image" || die "could not import the test image"
fi

wait_for etcd 20 curl -fsS "http://127.0.0.1:$etcd_port/health"
start kube-apiserver "$bin/kube-apiserver" \
  --advertise-address=127.0.0.1 --bind-address=127.0.0.1 --secure-port="$api_port" --insecure-port=0 \
  --etcd-servers="http://127.0.0.1:$etcd_port" \
  --client-ca-file="$dir/pki/ca.crt" \
  --tls-cert-file="$dir/pki/apiserver.crt" --tls-private-key-file="$dir/pki/apiserver.key" \
  --kubelet-client-certificate="$dir/pki/apiserver-kubelet-client.crt" \
  --kubelet-client-key="$dir/pki/apiserver-kubelet-client.key" \
  --kubelet-certificate-authority="$dir/pki/ca.crt" --kubelet-preferred-address-types=Hostname \
  --service-account-key-file="$dir/pki/sa.pub" --service-account-signing-key-file="$dir/pki/sa.key" \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --api-audiences=https://kubernetes.default.svc.cluster.local \
  --service-cluster-ip-range="$service_cidr" --endpoint-reconciler-type=none \
  --authorization-mode=Node,RBAC --allow-privileged=true \
  --feature-gates=TTLAfterFinished=true
admin=(kubectl --kubeconfig "$dir/admin.kubeconfig" --request-timeout=5s)
wait_for kube-apiserver 60 "${admin[@]}" get --raw /readyz

# Nodes that tests register have no kubelet: a long grace period keeps a "Ready" one Ready for
# the tests' lifetime instead of turning Unknown after 40 s.
start kube-controller-manager "$bin/kube-controller-manager" \
  --kubeconfig="$dir/controller-manager.kubeconfig" \
  --authentication-kubeconfig="$dir/controller-manager.kubeconfig" \
  --authorization-kubeconfig="$dir/controller-manager.kubeconfig" \
  --bind-address=127.0.0.1 --secure-port="$cm_port" --port=0 --leader-elect=false \
  --service-account-private-key-file="$dir/pki/sa.key" --root-ca-file="$dir/pki/ca.crt" \
  --use-service-account-credentials=true --feature-gates=TTLAfterFinished=true \
  --node-monitor-grace-period=1h
start kube-scheduler "$bin/kube-scheduler" \
  --kubeconfig="$dir/scheduler.kubeconfig" \
  --authentication-kubeconfig="$dir/scheduler.kubeconfig" \
  --authorization-kubeconfig="$dir/scheduler.kubeconfig" \
  --bind-address=127.0.0.1 --secure-port="$sched_port" --port=0 --leader-elect=false
start kubelet "$bin/kubelet" --config="$dir/kubelet.yaml" --kubeconfig="$dir/kubelet-client.kubeconfig" \
  --container-runtime=remote --container-runtime-endpoint="unix://$sock" \
  --root-dir="$dir/kubelet" --hostname-override="$node" --v=1

wait_for "node $node" 120 "${admin[@]}" wait --for=condition=Ready --timeout=1s "node/$node"
# The kubelet rewrote some kernel settings at its start: put back the ones that it does not need
# (ip_forward stays until kube-down: the bridge needs it).
while IFS='=' read -r key value; do
  [ "$key" = net.ipv4.ip_forward ] && continue
  [ "$(sysctl -n "$key")" = "$value" ] || sysctl -qw "$key=$value"
done <"$dir/sysctls.saved"
# The default service account of the default namespace appears a moment after the controller
# manager starts; pods cannot be created before it exists.
wait_for "the default service account" 30 "${admin[@]}" get serviceaccount default

import_disktier
say "node $node Ready in $((SECONDS - start_time)) s; containerd socket $sock"
echo "$dir/admin.kubeconfig"
