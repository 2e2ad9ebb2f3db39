# A private deb-src list for `apt-get source` (sourced, not run): scripts/kube-up.sh fetches
# Debian's kubernetes source package with it, bench/fio-t-io_uring.sh fio's. The list and its
# lists directory live under the caller's cache, so the machine's /etc/apt and /var/lib/apt
# are left alone.
# shellcheck shell=bash disable=SC2034

# apt_private CACHE_ROOT: writes CACHE_ROOT/apt/sources.list (this machine's Debian mirror and
# release, deb-src only) and sets APT_OPTS, the apt-get options that use it.
apt_private() {
  local a="$1/apt"
  mkdir -p "$a/lists/partial"
  local uri suite
  uri=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  [ -n "$uri" ] || uri=http://deb.debian.org/debian
  suite=$(sed -n 's/^VERSION_CODENAME=//p' /etc/os-release 2>/dev/null || true)
  [ -n "$suite" ] || suite=bookworm
  echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $suite main" >"$a/sources.list"
  APT_OPTS=(-o "Dir::Etc::SourceList=$a/sources.list" -o Dir::Etc::SourceParts=/nonexistent
            -o "Dir::State::Lists=$a/lists" -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=)
}
