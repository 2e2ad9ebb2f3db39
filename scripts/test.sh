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
command -v chromium >/dev/null || need+=(chromium)
command -v losetup >/dev/null || need+=(mount)
command -v shellcheck >/dev/null || need+=(shellcheck)
command -v blkid >/dev/null || need+=(util-linux)
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

# A throwaway PostgreSQL server on loopback for the store's tests.
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
pg_dir=""
cleanup() {
  if [ -n "$pg_dir" ] && [ -d "$pg_dir" ]; then
    su postgres -s /bin/sh -c "$pg_bin/pg_ctl -D $pg_dir/data -m immediate stop" >/dev/null 2>&1 || true
    rm -rf "$pg_dir"
  fi
}
trap cleanup EXIT
if [ -z "${DISKTIER_TEST_PG:-}" ] && [ -n "$pg_bin" ] && [ "$(id -u)" -eq 0 ]; then
  pg_dir=$(mktemp -d /tmp/disktier-pg.XXXXXX)
  chown postgres "$pg_dir"
  port=$(( 20000 + RANDOM % 20000 ))
  su postgres -s /bin/sh -c "$pg_bin/initdb -D $pg_dir/data -A trust -U postgres >/dev/null"
  su postgres -s /bin/sh -c "$pg_bin/pg_ctl -D $pg_dir/data -o '-c listen_addresses=127.0.0.1 -p $port -k $pg_dir' -l $pg_dir/log -w start >/dev/null"
  export DISKTIER_TEST_PG="postgres://postgres@127.0.0.1:$port/postgres"
  echo "test.sh: PostgreSQL on 127.0.0.1:$port"
fi

export DISKTIER_TEST_REQUIRE_ROOT_FEATURES=${CI:-}
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked 2>&1 | tee /tmp/disktier-test.log
