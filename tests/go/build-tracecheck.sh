#!/bin/sh
# build-tracecheck.sh GOVERSION OUTBIN - build tests/go/tracecheck with the
# Go toolchain GOVERSION (e.g. 1.23) installed at /usr/lib/go-GOVERSION.
# Does nothing when OUTBIN is newer than every source (FORCE=1 rebuilds), so
# tests can call it every time and share the binaries.
#
# tracecheck imports internal/trace, and internal packages import only from
# inside GOROOT/src.  Instead of copying our sources into GOROOT (a Debian
# package directory), `go build -overlay` makes them appear at
# GOROOT/src/internal/traceaf/tracecheck/ for the build only: nothing is
# written under /usr/lib.  The build cache lives next to OUTBIN.
set -eu

if [ $# -ne 2 ]; then
	echo "usage: $0 GOVERSION OUTBIN" >&2
	exit 2
fi
ver=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
src=$here/tracecheck
goroot=${GOROOT_BASE:-/usr/lib/go}-$ver
gobin=$goroot/bin/go
if [ ! -x "$gobin" ]; then
	echo "$0: no Go toolchain at $goroot" >&2
	exit 1
fi

mkdir -p "$(dirname "$out")"
outdir=$(cd "$(dirname "$out")" && pwd)
out=$outdir/$(basename "$out")

if [ -x "$out" ] && [ -z "${FORCE:-}" ]; then
	stale=$(find "$src" "$0" -newer "$out" -print | head -n1)
	[ -z "$stale" ] && exit 0
fi
work=$outdir/.tracecheck-go$ver
mkdir -p "$work"

# The overlay: every .go file of ours, mapped into the fake package dir.
pkg=internal/traceaf/tracecheck
overlay=$work/overlay.json.$$
trap 'rm -f "$overlay"' EXIT
{
	printf '{"Replace":{'
	sep=
	for f in "$src"/*.go; do
		printf '%s"%s/src/%s/%s":"%s"' "$sep" "$goroot" "$pkg" \
			"$(basename "$f")" "$f"
		sep=,
	done
	printf '}}\n'
} > "$overlay"

cd "$goroot/src"
env GOROOT="$goroot" GOTOOLCHAIN=local GOFLAGS=-buildvcs=false \
	GOPROXY=off GOWORK=off GOENV=off GO111MODULE=on \
	GOCACHE="$work/cache" GOPATH="$work/gopath" CGO_ENABLED=0 \
	"$gobin" build -overlay "$overlay" -o "$out.tmp.$$" "$pkg" ||
	{ rm -f "$out.tmp.$$"; exit 1; }
mv -f "$out.tmp.$$" "$out"
