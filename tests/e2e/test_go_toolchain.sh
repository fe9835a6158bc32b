#!/bin/bash
# test_go_toolchain - the Go toolchain itself as a workload (issue 14,
# item 6): Debian's Go 1.27 `go`, `compile`, `asm` and `link` (stripped,
# not PIE), short-lived processes started one after another.
#
# 1. `traceaf-bpf --all --include go --include compile --include asm
#    --include link`, then `go build` of a small module made here: three
#    packages (one generated to be the largest compile by far, one with an
#    assembly function), a fresh stamp each run so nothing comes from the
#    build cache but the standard library.  The compile of the generated
#    package also writes the runtime's own trace (-gcflags
#    PKG=-traceprofile, GODEBUG=traceallocfree=1).  Checked:
#    - the built program runs and prints what it should;
#    - files for 1 go, >= 3 compile, >= 1 asm and >= 1 link processes,
#      every one valid for Go 1.23's and 1.27's parsers, no heap ID
#      allocated twice or freed unknown beyond 0.1 % (tracecheck -replay);
#    - the largest compile's HeapObjectAlloc count is within 10 % of the
#      runtime's own trace of that compile (ours spans the whole process,
#      the runtime's starts at flag parsing; tiny objects sharing an ID
#      are one event here, README "Output");
#    - the largest link allocated >= 10000 heap objects.
# 2. `-- gofmt -l $GOROOT/src/encoding`: gofmt's output is what it prints
#    untraced, its exit status 0, its file valid, >= 10000 allocations.
# Observed (2026-12-03, this VM, loaded): 1 go, 4 compile (one is
# `compile -V=full`), 3 asm, 2 link files; the compile of gen 709 k
# allocations against the runtime's own 717 k (-1.1 %: tiny merges); the
# link 105 k; gofmt -l encoding 939 k; ~19 s.
source "$(dirname "$0")/lib/lib.sh"
GOROOT127=/usr/lib/go-1.27
GO=$GOROOT127/bin/go
[ -x "$TRACER" ] || fail "tracer not built: $TRACER"
[ -x "$GO" ] || fail "no Go 1.27 at $GO (run make deps)"
TC123=$(tracecheck 1.23) || exit 1
TC127=$(tracecheck 1.27) || exit 1

# ---- 1. go build under --all ------------------------------------------
MOD=$TMP/mod
mkdir -p "$MOD/gen" "$MOD/fast"
stamp=$$-$RANDOM
cat >"$MOD/go.mod" <<'X'
module example.com/tcmod

go 1.21
X
cat >"$MOD/main.go" <<X
package main

import (
	"fmt"

	"example.com/tcmod/fast"
	"example.com/tcmod/gen"
)

const stamp = "$stamp"

func main() { fmt.Println(gen.F0(3), fast.Add(2, 3), stamp) }
X
{
	echo "package gen"
	echo
	echo 'import "strings"'
	echo
	echo "const stamp = \"$stamp\""
	for i in $(seq 0 149); do
		cat <<X
func F$i(n int) string {
	m := map[string]int{"a$i": n, "b$i": n * 2}
	var b strings.Builder
	for k, v := range m {
		b.WriteString(k)
		b.WriteByte(byte('0' + v%10))
	}
	return strings.Repeat(b.String()[:1], 1+n%3)
}
X
	done
} >"$MOD/gen/gen.go"
cat >"$MOD/fast/fast.go" <<X
package fast

const stamp = "$stamp"

// Add is written in assembly (add_amd64.s).
func Add(a, b int64) int64
X
cat >"$MOD/fast/add_amd64.s" <<'X'
#include "textflag.h"

// func Add(a, b int64) int64
TEXT ·Add(SB), NOSPLIT, $0-24
	MOVQ a+0(FP), AX
	ADDQ b+8(FP), AX
	MOVQ AX, ret+16(FP)
	RET
X

# The standard library from the cache, whatever ran before: built here
# untraced if need be, so the compiles traced are the module's three (and
# the largest of them is gen's, whose runtime trace is compared below).
(cd "$MOD" && GOTOOLCHAIN=local GOFLAGS=-buildvcs=false GOCACHE="$BUILD/go-cache" \
	"$GO" build -trimpath fmt strings) >"$TMP/warm.log" 2>&1 ||
	fail "go build of the standard library failed: $(tail -n 5 "$TMP/warm.log")"
OUT=$TMP/out
start_bg "$TMP/t.log" "$TRACER" --all --include go --include compile \
	--include asm --include link -o "$OUT"
TPID=$BG_PID
wait_for_line "$TMP/t.log" 'watching for new ones' 30 ||
	fail "--all did not start: $(cat "$TMP/t.log")"
(cd "$MOD" && GOTOOLCHAIN=local GOFLAGS=-buildvcs=false GOCACHE="$BUILD/go-cache" \
	GODEBUG=traceallocfree=1 "$GO" build -trimpath \
	"-gcflags=example.com/tcmod/gen=-traceprofile=$TMP/compile-gen" \
	-o "$TMP/tcmod" .) >"$TMP/build.log" 2>&1 ||
	fail "go build failed under the tracer: $(tail -n 5 "$TMP/build.log")"
kill -INT "$TPID"
wait_exit "$TPID" 60
rc=$?
[ $rc -eq 0 ] || fail "tracer exited with $rc: $(tail -n 5 "$TMP/t.log")"
got=$("$TMP/tcmod")
# F0(3): the first key of a two-key map (either, iteration order), once.
[[ $got =~ ^[ab]\ 5\ $stamp$ ]] || fail "the program built under the tracer prints '$got'"

declare -A nfiles=()
best_compile="" best_compile_n=0 best_link_n=0
check_files "$TMP/check" "$OUT"/*.trace
for f in "$OUT"/*.trace; do
	b=$(basename "$f")
	comm=${b%%-*}
	nfiles[$comm]=$(( ${nfiles[$comm]:-0} + 1 ))
	o=$TMP/check/$b.tc127
	bad=$(replay_check "$o" 0.1) || fail "$b: IDs allocated twice or freed unknown:$bad"
	n=$(kv "$o" "ev HeapObjectAlloc")
	if [ "$comm" = compile ] && [ "$n" -gt "$best_compile_n" ]; then
		best_compile=$b best_compile_n=$n
	fi
	[ "$comm" = link ] && [ "$n" -gt "$best_link_n" ] && best_link_n=$n
done
[ "${nfiles[go]:-0}" -eq 1 ] || fail "${nfiles[go]:-0} files of the go command, want 1: $(ls "$OUT")"
[ "${nfiles[compile]:-0}" -ge 3 ] || fail "${nfiles[compile]:-0} compile files, want >= 3 (three packages)"
[ "${nfiles[asm]:-0}" -ge 1 ] || fail "no asm file (fast/add_amd64.s)"
[ "${nfiles[link]:-0}" -ge 1 ] || fail "no link file"
[ "$best_link_n" -ge 10000 ] || fail "the largest link allocated $best_link_n heap objects, want >= 10000"

native=$TMP/compile-gen.trace
[ -s "$native" ] || native=$TMP/compile-gen
[ -s "$native" ] || fail "the compile of gen wrote no runtime trace: $(ls "$TMP")"
"$TC127" -replay "$native" >"$TMP/native.tc127" 2>&1
[ "$(kv "$TMP/native.tc127" valid)" = 1 ] || fail "the runtime's own trace of compile does not validate"
nat=$(kv "$TMP/native.tc127" "ev HeapObjectAlloc")
[ "${nat:-0}" -gt 10000 ] || fail "the runtime's own trace of compile has ${nat:-0} HeapObjectAlloc"
within "$best_compile_n" "$nat" 10 ||
	fail "largest compile ($best_compile): $best_compile_n HeapObjectAlloc, the runtime's own trace of it $nat"
res="go build: ${nfiles[go]} go, ${nfiles[compile]} compile, ${nfiles[asm]} asm, ${nfiles[link]} link files valid; compile of gen $best_compile_n allocations (runtime's own $nat), link $best_link_n"

# ---- 2. gofmt -l over a source tree -------------------------------------
SRC=$GOROOT127/src/encoding
"$GOROOT127/bin/gofmt" -l "$SRC" >"$TMP/gofmt.plain" 2>&1 || fail "gofmt fails untraced"
"$TRACER" -o "$TMP/fmt" -- "$GOROOT127/bin/gofmt" -l "$SRC" >"$TMP/gofmt.traced" 2>"$TMP/fmt.log" ||
	fail "gofmt under the tracer failed: $(tail -n 5 "$TMP/fmt.log")"
cmp -s "$TMP/gofmt.plain" "$TMP/gofmt.traced" || fail "gofmt printed something else under the tracer"
files=("$TMP/fmt"/*.trace)
[ -f "${files[0]}" ] || fail "no trace of gofmt"
check_files "$TMP/checkfmt" "${files[@]}"
n=0
for f in "${files[@]}"; do
	n=$((n + $(kv "$TMP/checkfmt/$(basename "$f").tc127" "ev HeapObjectAlloc")))
done
[ "$n" -ge 10000 ] || fail "gofmt: $n heap allocations, want >= 10000"
pass "$res; gofmt -l encoding: ${#files[@]} file(s) valid, $n allocations, output unchanged"
