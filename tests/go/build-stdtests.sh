#!/bin/sh
# Builds standard-library test binaries (`go test -c PKG`) with the Go
# toolchains named, into $OUT (default build/go-bin) as
# stdtest-<last element of PKG>-go1.NN: programs whose benchmarks allocate
# a lot and that start runtime/trace themselves (-test.trace=FILE), for
# tests/e2e/test_runtime_agreement.sh.  A binary newer than its
# toolchain's VERSION file and this script is kept.
#
# Usage: tests/go/build-stdtests.sh [PKG...]   (default: encoding/json regexp)
# Env:   GO_VERSIONS="1.23 1.27"  OUT=build/go-bin
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OUT=${OUT:-$ROOT/build/go-bin}
GO_VERSIONS=${GO_VERSIONS:-"1.23 1.27"}
[ $# -gt 0 ] || set -- encoding/json regexp

export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false GOPROXY=off
export GOCACHE="$ROOT/build/go-cache" GOPATH="$ROOT/build/go-path"
export CGO_ENABLED=0

mkdir -p "$OUT"
built=0 kept=0
for pkg in "$@"; do
	for v in $GO_VERSIONS; do
		goroot=/usr/lib/go-$v
		[ -x "$goroot/bin/go" ] || { echo "build-stdtests: missing $goroot/bin/go" >&2; exit 1; }
		bin=$OUT/stdtest-$(basename "$pkg")-go$v
		if [ -f "$bin" ] && [ -z "$(find "$goroot/VERSION" "$0" -newer "$bin")" ]; then
			kept=$((kept + 1))
			continue
		fi
		# From outside any module: PKG is the toolchain's own.
		(cd / && "$goroot/bin/go" test -c -o "$bin.tmp" "$pkg")
		mv "$bin.tmp" "$bin"
		built=$((built + 1))
	done
done
echo "build-stdtests: $built built, $kept up to date in $OUT"
