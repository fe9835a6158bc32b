#!/bin/sh
# Installs everything traceaf-bpf needs to build, test and demo on Debian 12.
#
# The Go toolchains the tests use come from newer Debian suites
# (bookworm-backports for 1.21-1.23, trixie and trixie-backports for 1.24-1.27).
# Those suites are added with apt pinning at priority 100 so that nothing
# already installed is upgraded from them; only packages asked for by name
# (and dependencies no older suite can satisfy) come from there.  The mirror
# URI is taken from the machine's existing Debian source entry.
set -eu

GO_VERSIONS="${GO_VERSIONS:-1.21 1.22 1.23 1.24 1.25 1.26 1.27}"
STAMP=/var/lib/traceaf-bpf-deps.stamp
SELF_SUM=$(sha256sum "$0" | cut -d' ' -f1)

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: must run as root (apt-get)" >&2
	exit 1
fi

# Quick exit when this exact script already ran to completion.
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$SELF_SUM $GO_VERSIONS" ]; then
	exit 0
fi

debian_mirror() {
	uri=""
	if [ -f /etc/apt/sources.list.d/debian.sources ]; then
		uri=$(awk '/^URIs:/ && $2 !~ /security/ { print $2; exit }' \
			/etc/apt/sources.list.d/debian.sources)
	fi
	if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
		uri=$(awk '$1 == "deb" && $0 ~ /bookworm/ && $0 !~ /security/ {
				for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' \
			/etc/apt/sources.list)
	fi
	[ -n "$uri" ] || uri=$(grep -rhoE 'https?://[^ ]*debian/?' /etc/apt/sources.list.d/ 2>/dev/null |
		grep -v security | head -n1)
	if [ -z "$uri" ]; then
		echo "install-deps: no Debian source entry found to take the mirror from" >&2
		exit 1
	fi
	echo "$uri"
}

MIRROR=$(debian_mirror)
LIST=/etc/apt/sources.list.d/traceaf-bpf-go.sources
PREFS=/etc/apt/preferences.d/traceaf-bpf-go
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

cat > "$LIST.new" <<EOT
# Added by traceaf-bpf scripts/install-deps.sh: Go toolchains for the tests.
Types: deb
URIs: $MIRROR
Suites: bookworm-backports trixie trixie-backports
Components: main
Signed-By: $KEYRING
EOT
mv "$LIST.new" "$LIST"

cat > "$PREFS" <<'EOT'
# Added by traceaf-bpf scripts/install-deps.sh: never upgrade from these suites.
Package: *
Pin: release n=bookworm-backports
Pin-Priority: 100

Package: *
Pin: release n=trixie
Pin-Priority: 100

Package: *
Pin: release n=trixie-backports
Pin-Priority: 100
EOT

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq

apt-get install -y -qq --no-install-recommends \
	make clang llvm libclang-rt-dev gcc libc6-dev pkg-config \
	libbpf-dev bpftool libelf-dev libdw-dev zlib1g-dev libzstd-dev \
	libcmocka-dev libcapstone-dev valgrind \
	libprotobuf-c-dev protobuf-c-compiler chromium \
	util-linux procps strace jq libcap2-bin >/dev/null

pkgs=""
for v in $GO_VERSIONS; do
	pkgs="$pkgs golang-$v-go golang-$v-src"
done
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $pkgs >/dev/null

echo "$SELF_SUM $GO_VERSIONS" > "$STAMP"
echo "install-deps: done (Go $GO_VERSIONS from $MIRROR)"
