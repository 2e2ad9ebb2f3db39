#!/usr/bin/env bash
# Builds fio's own peak-IOPS tool `t/io_uring` from Debian's fio source package (the version
# installed here) into a cache directory, once, and prints its path.
#
#   bench/fio-t-io_uring.sh            # -> /var/cache/disktier-bench/fio-<version>/t/io_uring
#
# The deb-src line lives in a private apt directory under the cache (no /etc file is changed).
# Needs apt-get, dpkg-source, make and a C compiler (gcc, libaio-dev is not needed for t/io_uring).
set -euo pipefail
cache_root=${T_IO_URING_CACHE:-/var/cache/disktier-bench}
die() { echo "fio-t-io_uring: $*" >&2; exit 2; }

# shellcheck source=scripts/apt-src.sh
. "$(dirname "$0")/../scripts/apt-src.sh"
apt_private "$cache_root"

version=$(dpkg-query -W -f '${Version}' fio 2>/dev/null || true)
out="$cache_root/fio-${version:-source}"
if [ -x "$out/t/io_uring" ]; then
    echo "$out/t/io_uring"
    exit 0
fi
mkdir -p "$cache_root"
exec 9>"$cache_root/.lock"
flock 9
if [ -x "$out/t/io_uring" ]; then echo "$out/t/io_uring"; exit 0; fi
for p in dpkg-source make cc; do command -v "$p" >/dev/null || die "needs $p (apt-get install dpkg-dev make gcc)"; done
apt-get "${APT_OPTS[@]}" update -qq >/dev/null || die "apt-get update of the private deb-src list failed"
work="$cache_root/fio-build.$$"
rm -rf "$work" && mkdir -p "$work"
spec=fio
[ -n "$version" ] && spec="fio=$version"
(cd "$work" && apt-get "${APT_OPTS[@]}" source --download-only "$spec" >/dev/null 2>&1) \
    || (cd "$work" && apt-get "${APT_OPTS[@]}" source --download-only fio >/dev/null 2>&1) \
    || die "could not download Debian's fio source package"
(cd "$work" && dpkg-source -x --no-check ./*.dsc src >/dev/null) || die "dpkg-source -x failed in $work"
(cd "$work/src" && ./configure >"$work/configure.log" 2>&1) || die "./configure failed: $work/configure.log"
(cd "$work/src" && make -j2 t/io_uring >"$work/make.log" 2>&1) || { tail -n 20 "$work/make.log" >&2; die "make t/io_uring failed: $work/make.log"; }
mkdir -p "$out/t"
cp "$work/src/t/io_uring" "$out/t/io_uring"
rm -rf "$work"
echo "$out/t/io_uring"
