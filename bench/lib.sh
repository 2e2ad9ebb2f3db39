# shellcheck shell=bash
# Sourced by the bench scripts: ROOT (the repository root), the disktier binary they time and
# the Python venv the cache-simulation comparisons share.

ROOT=${ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}

# Prints the disktier to benchmark: $DISKTIER when set, else a fresh release build.
disktier_release() {
    if [ -n "${DISKTIER:-}" ]; then
        echo "$DISKTIER"
        return
    fi
    echo "building disktier (release)..." >&2
    (cd "$ROOT" && cargo build --release -q -p disktier) >&2
    echo "$CARGO_TARGET_DIR/release/disktier"
}

# Prints the python of a venv ($VENV, default ~/.cache/disktier-bench-venv) holding the pip
# packages named (installed there when one is missing).
bench_python() {
    local venv=${VENV:-$HOME/.cache/disktier-bench-venv} imports
    imports=$(IFS=,; echo "$*")
    if ! "$venv/bin/python" -c "import $imports" 2>/dev/null; then
        python3 -m venv "$venv" >&2
        "$venv/bin/pip" install --quiet "$@" >&2
    fi
    echo "$venv/bin/python"
}

# A scratch xfs for one script run: a 1 GiB file in /dev/shm behind a loop device
# (--direct-io=on), mounted at $WORK/mnt under a fresh $WORK in /var/tmp. Sets WORK, IMG and
# LOOP, and traps EXIT so that the mount, the loop device and both files always go.
xfs_scratch() { # xfs_scratch NAME
    WORK=$(mktemp -d "/var/tmp/disktier-$1.XXXXXX")
    IMG=/dev/shm/disktier-$1.$$.img
    LOOP=""
    trap xfs_scratch_cleanup EXIT
    trap 'exit 130' INT TERM
    truncate -s 1G "$IMG"
    LOOP=$(losetup --find --show --direct-io=on "$IMG")
    mkfs.xfs -q -f "$LOOP"
    mkdir -p "$WORK/mnt"
    mount "$LOOP" "$WORK/mnt"
}

xfs_scratch_cleanup() {
    set +e
    mountpoint -q "$WORK/mnt" && umount "$WORK/mnt"
    [ -n "$LOOP" ] && losetup -d "$LOOP"
    rm -rf "$WORK" "$IMG"
}
