#!/usr/bin/env bash
# Builds disktier for any x86_64 Linux node, offline:
#   target/image/disktier          a fully static, stripped binary (glibc, +crt-static)
#   target/image/disktier-oci.tar  an OCI image archive from scratch holding only that binary,
#                                  Entrypoint disktier, named localhost/disktier:<version>
# No daemon, no registry, nothing fetched: the layout is written here with tar, gzip and
# sha256sum. Reproducible: the same commit gives the same image digest (SOURCE_DATE_EPOCH is the
# commit time; tar entries sorted, owned by 0:0, mtimes pinned; gzip without name or time).
#
# Environment: SOURCE_DATE_EPOCH (default: the commit time of HEAD), DISKTIER_IMAGE_SOURCE (the
# org.opencontainers.image.source label; default: `repository` of [workspace.package] in
# Cargo.toml, else "unknown").
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=$root/target/image

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
[ -n "$version" ] || { echo "image.sh: no version in Cargo.toml [workspace.package]" >&2; exit 2; }
# The name the image carries; crates/disktier/src/image.rs builds the same one (DEFAULT_IMAGE).
name="localhost/disktier:$version"
revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
  revision="$revision-dirty"
fi
: "${SOURCE_DATE_EPOCH:=$(git log -1 --format=%ct 2>/dev/null || echo 0)}"
# From the commit, not from the clone (a remote's URL differs between clones of one commit).
repository=$(sed -n 's/^repository = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
source_url=${DISKTIER_IMAGE_SOURCE:-${repository:-unknown}}
# The SPDX expression of [workspace.package] (org.opencontainers.image.licenses).
licenses=$(sed -n 's/^license = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
[ -n "$licenses" ] || { echo "image.sh: no license in Cargo.toml [workspace.package]" >&2; exit 2; }
# The values go into JSON as they are (no escaping here): a quote, a backslash or a control
# character would make the config and manifest invalid JSON under a digest, found only by
# podman load or skopeo.
for v in "$version" "$source_url" "$licenses"; do
  case $v in
    *[\"\\]* | *[[:cntrl:]]*)
      echo "image.sh: '$v' (version, DISKTIER_IMAGE_SOURCE or license) holds a quote, backslash or control character: give a plain URL or value" >&2
      exit 2 ;;
  esac
done
created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)

# 1. The static binary. An explicit --target keeps build scripts and proc-macros dynamic (they
# run on this machine); only the disktier binary is linked with +crt-static. The source paths
# are remapped so that the binary does not depend on where the repository was cloned.
# glibc rather than musl: the gnu target is always there (musl needs `rustup target add`, which
# a machine without network cannot do), and its allocator and memcpy are the dynamic build's.
triple=x86_64-unknown-linux-gnu
# glibc warns at link time that getaddrinfo, gethostbyname2_r, getservbyname_r, getpwuid_r and
# dlopen need its NSS modules at run time. None is on a measuring path: name look-ups serve only
# a postgres:// store URL with a host name (give ?hostaddr=IP in a container), getpwuid_r only
# tokio-postgres' default user (it falls back when there is no passwd), dlopen only SQLite's
# extension loading (never used); `setup --owner` reads /etc/passwd and /etc/group itself.
# SOURCE_DATE_EPOCH is kept from cargo: the cc crate tracks it, so a new commit time would
# rebuild SQLite and zstd on every commit (their archives are deterministic without it).
cargo_home=${CARGO_HOME:-$HOME/.cargo}
RUSTFLAGS="-C target-feature=+crt-static --remap-path-prefix=$root=/disktier --remap-path-prefix=$cargo_home=/cargo" \
  env -u SOURCE_DATE_EPOCH cargo build --locked --profile image --target "$triple" -p disktier
bin=${CARGO_TARGET_DIR:-$root/target}/$triple/image/disktier
if ! file_out=$(LC_ALL=C file -b "$bin" 2>/dev/null); then file_out=""; fi
case "$file_out" in
  *dynamically*) echo "image.sh: $bin is dynamically linked: +crt-static did not apply" >&2; exit 2 ;;
esac
mkdir -p "$out"
install -m 0755 "$bin" "$out/disktier.tmp"
mv "$out/disktier.tmp" "$out/disktier"

# 2. The OCI image: one layer holding /usr/bin/disktier and an empty /tmp.
work=$(mktemp -d "$out/oci.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/rootfs/usr/bin" "$work/rootfs/tmp" "$work/layout/blobs/sha256"
install -m 0755 "$out/disktier" "$work/rootfs/usr/bin/disktier"
chmod 0755 "$work/rootfs" "$work/rootfs/usr" "$work/rootfs/usr/bin"
chmod 1777 "$work/rootfs/tmp"
reprotar() { # reprotar DIR FILE: a tar of DIR's content, the same bytes for the same content
  (cd "$1" && find . -mindepth 1 -printf '%P\n' | LC_ALL=C sort) |
    tar --create --file "$2" --directory "$1" --no-recursion --files-from - --format=posix \
      --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
      --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH"
}
blob() { # blob FILE: moves FILE into blobs/sha256/<digest>, prints "<digest> <size>"
  local d s
  d=$(sha256sum "$1" | cut -d' ' -f1)
  s=$(stat -c %s "$1")
  mv "$1" "$work/layout/blobs/sha256/$d"
  echo "$d $s"
}
reprotar "$work/rootfs" "$work/layer.tar"
diff_id=$(sha256sum "$work/layer.tar" | cut -d' ' -f1)
gzip -n -9 "$work/layer.tar"
read -r layer_digest layer_size < <(blob "$work/layer.tar.gz")

cat >"$work/config.json" <<EOF
{"architecture":"amd64","os":"linux","created":"$created","config":{"Entrypoint":["/usr/bin/disktier"],"Env":["PATH=/usr/bin"],"WorkingDir":"/","Labels":{"org.opencontainers.image.created":"$created","org.opencontainers.image.licenses":"$licenses","org.opencontainers.image.revision":"$revision","org.opencontainers.image.source":"$source_url","org.opencontainers.image.title":"disktier","org.opencontainers.image.version":"$version"}},"rootfs":{"type":"layers","diff_ids":["sha256:$diff_id"]},"history":[{"created":"$created","created_by":"scripts/image.sh"}]}
EOF
read -r config_digest config_size < <(blob "$work/config.json")

cat >"$work/manifest.json" <<EOF
{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:$config_digest","size":$config_size},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:$layer_digest","size":$layer_size}],"annotations":{"org.opencontainers.image.created":"$created","org.opencontainers.image.licenses":"$licenses","org.opencontainers.image.revision":"$revision","org.opencontainers.image.source":"$source_url","org.opencontainers.image.version":"$version"}}
EOF
read -r manifest_digest manifest_size < <(blob "$work/manifest.json")

# ref.name carries the full name so that podman load names the image localhost/disktier:<version>;
# containerd's importer reads io.containerd.image.name.
cat >"$work/layout/index.json" <<EOF
{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:$manifest_digest","size":$manifest_size,"annotations":{"io.containerd.image.name":"$name","org.opencontainers.image.ref.name":"$name"}}]}
EOF
printf '{"imageLayoutVersion":"1.0.0"}\n' >"$work/layout/oci-layout"
find "$work/layout" -type d -exec chmod 0755 {} +
find "$work/layout" -type f -exec chmod 0644 {} +
reprotar "$work/layout" "$out/disktier-oci.tar.tmp"
mv "$out/disktier-oci.tar.tmp" "$out/disktier-oci.tar"
printf '%s\n' "sha256:$manifest_digest" >"$out/disktier-oci.digest"

echo "image.sh: $out/disktier ($(stat -c %s "$out/disktier") bytes, static, $triple)"
echo "image.sh: $out/disktier-oci.tar: $name, digest sha256:$manifest_digest, layer $layer_size bytes compressed"
