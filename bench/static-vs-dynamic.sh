#!/usr/bin/env bash
# The static binary of scripts/image.sh against the ordinary dynamic release build and fio, in
# one run, interleaved (every run: dynamic, static, then fio), with bench/vs-fio.sh's sections
# (a) the etcd job on xfs on a loop device and (c) 4k randread QD32 io_uring direct on a loop
# device over /dev/shm: fdatasync p99, IOPS and CPU per I/O. Also prints the binaries' and the
# image's sizes.
#
#   sudo bench/static-vs-dynamic.sh                 # RUNS=5, RR_RUNTIME=10 (vs-fio.sh's defaults)
#   RUNS=3 RR_RUNTIME=5 bench/static-vs-dynamic.sh  # a quicker look
#   NO_BUILD=1 bench/static-vs-dynamic.sh           # use target/release and target/image as built
#
# Needs what vs-fio.sh needs (root, losetup, mkfs.xfs, fio, python3). Figures go in BENCHMARKS.md.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
if [ -z "${NO_BUILD:-}" ]; then
    echo "building disktier (release, dynamic) and the static image binary..." >&2
    cargo build --release --locked -q -p disktier
    bash scripts/image.sh >&2
fi
DYN=$ROOT/target/release/disktier
STATIC=$ROOT/target/image/disktier
for f in "$DYN" "$STATIC" "$ROOT/target/image/disktier-oci.tar"; do
    [ -e "$f" ] || { echo "static-vs-dynamic: $f is missing (drop NO_BUILD)" >&2; exit 2; }
done
layer=$(tar -tvf "$ROOT/target/image/disktier-oci.tar" | awk '$3 > 1000000 {print $3}')
echo "sizes: dynamic release binary $(stat -c %s "$DYN") bytes (line tables, not stripped);" \
    "static binary $(stat -c %s "$STATIC") bytes (stripped);" \
    "OCI archive $(stat -c %s "$ROOT/target/image/disktier-oci.tar") bytes, compressed layer $layer bytes"
VARIANTS="dynamic=$DYN static=$STATIC" SECTIONS=${SECTIONS:-ac} DISKTIER=$DYN \
    bash "$ROOT/bench/vs-fio.sh"
