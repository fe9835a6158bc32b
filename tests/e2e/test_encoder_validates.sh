#!/bin/bash
# test_encoder_validates - files written by user/format/trace_writer.c and
# user/format/trace_sink.c parse and validate with Go's own internal/trace, every
# supported toolchain, and report exactly the counts that were written.
#
# gen_sample_trace writes a rotated, multi-generation trace (all nine
# AllocFree events, several threads, one with far more than 64 KiB of events,
# hundreds of types, timestamps out of order across threads) and, per file,
# the lines tracecheck must print.  A truncated copy must be refused.
#
# Env: BUILD (default build), TRACECHECK_DIR (default $BUILD; tracecheck
# binaries are cached there as tracecheck-go1.NN), GO_VERSIONS, CC.
set -u
cd "$(dirname "$0")/../.."

NAME=test_encoder_validates
BUILD=${BUILD:-build}
TRACECHECK_DIR=${TRACECHECK_DIR:-$BUILD}
GO_VERSIONS=${GO_VERSIONS:-1.23 1.24 1.25 1.26 1.27}
CC=${CC:-gcc}

fail() {
	echo "FAIL $NAME: $*"
	exit 1
}

work=$(mktemp -d /tmp/$NAME.XXXXXX) || fail "mktemp"
trap 'rm -rf "$work"' EXIT

$CC -std=gnu11 -O2 -Wall -Wextra -Werror -Wno-unused-parameter \
	-D_GNU_SOURCE -Iinclude -Iuser tests/e2e/lib/gen_sample_trace.c \
	user/format/trace_events.c user/format/type_catalog.c user/format/trace_writer.c user/format/trace_sink.c user/util/u64_map.c -o "$work/gen" ||
	fail "cannot build gen_sample_trace"

mkdir "$work/out"
# 6 generations of ~270 KB, rotated at 800 KB: two files of three.
"$work/gen" "$work/out" 6 800000 > "$work/files" ||
	fail "gen_sample_trace failed"
nfiles=$(wc -l < "$work/files")
[ "$nfiles" -ge 2 ] || fail "expected a rotated trace, got $nfiles file(s)"

# A broken copy: the last batch cut short.
first=$(head -n1 "$work/files")
size=$(stat -c %s "$first")
head -c $((size - 100)) "$first" > "$work/truncated.trace"

for v in $GO_VERSIONS; do
	tc=$TRACECHECK_DIR/tracecheck-go$v
	tests/go/build-tracecheck.sh "$v" "$tc" > "$work/build.log" 2>&1 ||
		fail "cannot build tracecheck with go$v: $(tail -n3 "$work/build.log")"
	while read -r f; do
		base=$(basename "$f")
		out=$work/check.out
		"$tc" -replay "$f" > "$out" 2>&1
		rc=$?
		grep -qx 'valid 1' "$out" ||
			fail "go$v: $base: $(grep -m1 '^error' "$out")"
		[ $rc -eq 0 ] || fail "go$v: $base: exit status $rc"
		while IFS= read -r line; do
			case $line in
			type_lines\ *)
				want=${line#type_lines }
				got=$(grep -c '^type ' "$out")
				[ "$got" = "$want" ] ||
					fail "go$v: $base: $got type lines, want $want"
				;;
			*)
				grep -qxF -- "$line" "$out" ||
					fail "go$v: $base: want '$line', got '$(grep -m1 -F -- "${line% *} " "$out")'"
				;;
			esac
		done < "$f.expect"
	done < "$work/files"
	if "$tc" "$work/truncated.trace" > "$work/check.out" 2>&1 ||
		! grep -qx 'valid 0' "$work/check.out"; then
		fail "go$v: a truncated trace was accepted"
	fi
	echo "go$v: $nfiles files valid, counts match"
done
echo "PASS $NAME"
