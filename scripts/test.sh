#!/usr/bin/env bash
# Runs every test of disktier on a fresh machine of this kind (Debian, root, Rust toolchain):
# installs what the tests need when it is missing, starts a throwaway PostgreSQL server on
# loopback, then runs fmt, clippy and the whole test suite. CI (.ci/run) calls exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v fio >/dev/null || need+=(fio)
command -v mkfs.xfs >/dev/null || need+=(xfsprogs)
command -v mkfs.ext4 >/dev/null || need+=(e2fsprogs)
command -v etcd >/dev/null || need+=(etcd-server)
command -v etcdctl >/dev/null || need+=(etcd-client)
command -v openssl >/dev/null || need+=(openssl)
command -v chromium >/dev/null || need+=(chromium)
command -v losetup >/dev/null || need+=(mount)
command -v shellcheck >/dev/null || need+=(shellcheck)
# The fish completion script is loaded and asked by fish (meta_cli).
command -v fish >/dev/null || need+=(fish)
command -v blkid >/dev/null || need+=(util-linux)
command -v openssl >/dev/null || need+=(openssl)
# The image tests (scripts/image.sh, crates/disktier/tests/image_cli.rs) and the Prometheus tests.
command -v skopeo >/dev/null || need+=(skopeo)
command -v podman >/dev/null || need+=(podman)
command -v runc >/dev/null || [ -x /usr/sbin/runc ] || need+=(runc)
command -v containerd >/dev/null || need+=(containerd)
command -v promtool >/dev/null || need+=(prometheus)
[ -x /usr/lib/postgresql/15/bin/initdb ] || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    echo "test.sh: installing ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  else
    echo "test.sh: missing ${need[*]} and not root: tests that need them will say so and skip" >&2
  fi
fi

# kubernetes-validate (PyPI) checks `fleet run --dry-run` output against the official schemas
# of several Kubernetes versions, offline (crates/disktier/tests/fleet_cli.rs).
if ! command -v kubernetes-validate >/dev/null; then
  if ! python3 -m pip --version >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-pip >/dev/null || true
  fi
  echo "test.sh: installing kubernetes-validate (pip)"
  python3 -m pip install --quiet kubernetes-validate 2>/dev/null \
    || python3 -m pip install --quiet --break-system-packages kubernetes-validate \
    || echo "test.sh: could not install kubernetes-validate: the manifest validation test will fail under CI" >&2
  hash -r
fi

# A throwaway PostgreSQL server on loopback for the store's tests.
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
pg_dir=""
kube_started=""
cleanup() {
  # A second signal (a group kill after a first one) must not cut the clean-up short: it is
  # ignored here, and by the commands below, which inherit that.
  trap '' INT TERM HUP
  if [ -n "$kube_started" ]; then
    bash scripts/kube-down.sh || true
  fi
  if [ -n "$pg_dir" ] && [ -d "$pg_dir" ]; then
    su postgres -s /bin/sh -c "$pg_bin/pg_ctl -D $pg_dir/data -m immediate stop" >/dev/null 2>&1 || true
    rm -rf "$pg_dir"
  fi
}
trap cleanup EXIT
# A signal (a CI timeout, Ctrl-C) ends the run through the EXIT trap with the usual exit code
# (found when a killed run left its PostgreSQL running).
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
if [ -z "${DISKTIER_TEST_PG:-}" ] && [ -n "$pg_bin" ] && [ "$(id -u)" -eq 0 ]; then
  pg_dir=$(mktemp -d /tmp/disktier-pg.XXXXXX)
  chown postgres "$pg_dir"
  port=$(( 20000 + RANDOM % 20000 ))
  su postgres -s /bin/sh -c "$pg_bin/initdb -D $pg_dir/data -A trust -U postgres >/dev/null"
  # TLS for the store's sslmode tests: a throwaway CA signs the server's certificate (valid for
  # localhost and 127.0.0.1); a second, unrelated CA is the "wrong CA" of verify-full.
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=disktier test CA" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
    -keyout "$pg_dir/ca.key" -out "$pg_dir/ca.crt" 2>/dev/null
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=disktier wrong CA" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
    -keyout "$pg_dir/wrong-ca.key" -out "$pg_dir/wrong-ca.crt" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" \
    -keyout "$pg_dir/data/server.key" -out "$pg_dir/server.csr" 2>/dev/null
  printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$pg_dir/server.ext"
  openssl x509 -req -in "$pg_dir/server.csr" -CA "$pg_dir/ca.crt" -CAkey "$pg_dir/ca.key" \
    -CAcreateserial -days 2 -extfile "$pg_dir/server.ext" -out "$pg_dir/data/server.crt" 2>/dev/null
  chown postgres "$pg_dir/data/server.key" "$pg_dir/data/server.crt"
  chmod 600 "$pg_dir/data/server.key"
  su postgres -s /bin/sh -c "$pg_bin/pg_ctl -D $pg_dir/data -o '-c listen_addresses=127.0.0.1 -p $port -k $pg_dir -c ssl=on' -l $pg_dir/log -w start >/dev/null"
  export DISKTIER_TEST_PG="postgres://postgres@127.0.0.1:$port/postgres"
  export DISKTIER_TEST_PG_CA="$pg_dir/ca.crt"
  export DISKTIER_TEST_PG_WRONG_CA="$pg_dir/wrong-ca.crt"
  echo "test.sh: PostgreSQL on 127.0.0.1:$port (TLS with the CA $pg_dir/ca.crt)"
fi

export DISKTIER_TEST_REQUIRE_ROOT_FEATURES=${CI:-}
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings

# A real single-node Kubernetes for the fleet tests (scripts/kube-up.sh; the first run on a
# machine builds its binaries, about 6 minutes). One that is already running is reused and left
# running; one started here is stopped at exit.
if [ -z "${DISKTIER_TEST_KUBECONFIG:-}" ] && [ "$(id -u)" -eq 0 ]; then
  if kubeconfig=$(bash scripts/kube-up.sh --status); then
    echo "test.sh: reusing the running test cluster ($kubeconfig)"
    export DISKTIER_TEST_KUBECONFIG=$kubeconfig
  else
    kube_started=1
    if kubeconfig=$(bash scripts/kube-up.sh | tail -n 1) && [ -f "$kubeconfig" ]; then
      export DISKTIER_TEST_KUBECONFIG=$kubeconfig
      echo "test.sh: test cluster up ($kubeconfig)"
    else
      echo "test.sh: kube-up failed: the cluster tests will say so (and fail under CI)" >&2
    fi
  fi
fi
cargo test --workspace --locked --no-fail-fast 2>&1 | tee /tmp/disktier-test.log
