#!/bin/sh
# Builds the Go test workloads with every installed toolchain, in four
# flavours each, into $OUT (default build/go-bin):
#   <name>-go1.NN             non-PIE, with symbols and DWARF
#   <name>-go1.NN-stripped    non-PIE, -ldflags='-s -w' (no .symtab, no DWARF)
#   <name>-go1.NN-pie         -buildmode=pie, with symbols and DWARF
#   <name>-go1.NN-stripped-pie
# Offline and reproducible: GOTOOLCHAIN=local, GOPROXY=off, no VCS stamping,
# a build cache under build/.  A binary newer than its sources is kept.
#
# Usage: tests/go/build-workloads.sh [name...]     (default: every workload)
# Env:   GO_VERSIONS="1.21 ... 1.27"  OUT=build/go-bin
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OUT=${OUT:-$ROOT/build/go-bin}
GO_VERSIONS=${GO_VERSIONS:-"1.21 1.22 1.23 1.24 1.25 1.26 1.27"}

export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false GOPROXY=off
export GOCACHE="$ROOT/build/go-cache" GOPATH="$ROOT/build/go-path"
export CGO_ENABLED=0

if [ $# -eq 0 ]; then
	set --
	for d in "$HERE"/*/; do
		[ -f "$d/main.go" ] && set -- "$@" "$(basename "$d")"
	done
fi

mkdir -p "$OUT"
built=0 kept=0
for name in "$@"; do
	src="$HERE/$name"
	[ -f "$src/main.go" ] || { echo "build-workloads: no $src/main.go" >&2; exit 1; }
	for v in $GO_VERSIONS; do
		go="/usr/lib/go-$v/bin/go"
		[ -x "$go" ] || { echo "build-workloads: missing $go" >&2; exit 1; }
		for flavour in "" -stripped -pie -stripped-pie; do
			bin="$OUT/$name-go$v$flavour"
			# Up to date: newer than every source file and the script.
			if [ -f "$bin" ] && [ -z "$(find "$src" "$0" -newer "$bin" -type f)" ]; then
				kept=$((kept + 1))
				continue
			fi
			set -- -trimpath -o "$bin.tmp"
			case $flavour in *stripped*) set -- "$@" -ldflags=-s\ -w ;; esac
			case $flavour in *pie) set -- "$@" -buildmode=pie ;; esac
			# A module-less build of one directory: "go build ." needs a go.mod,
			# so build the file list instead.
			(cd "$src" && "$go" build "$@" ./main.go)
			mv "$bin.tmp" "$bin"
			built=$((built + 1))
		done
	done
done
echo "build-workloads: $built built, $kept up to date in $OUT"
