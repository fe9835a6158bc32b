#!/bin/bash
# test_runtime_agreement - event by event, our trace of a process agrees
# with the Go runtime's own AllocFree trace of the SAME process.
#
# Standard-library benchmark binaries (`go test -c`, built by
# tests/go/build-stdtests.sh) run with GODEBUG=traceallocfree=1 and
# -test.trace=native.trace (runtime/trace from before the first benchmark
# to after the last) under `traceaf-bpf -- CMD`, so both tracers see one
# execution.  tests/e2e/lib/agree_check.c pairs every HeapObjectAlloc/Free,
# SpanAlloc/Free and GoroutineStackAlloc/Free by address and time (both
# clocks CLOCK_MONOTONIC in 64 ns ticks) and gives each unpaired event a
# documented reason or calls it unexplained.  Cases: encoding/json
# BenchmarkCodeUnmarshal 2x and regexp BenchmarkCompile 200x, Go 1.23 and
# 1.27, each without and with --tiny-as-runtime (8 runs).  Each run:
#  - the benchmark passes, the tracer exits 0 with 0 dropped, our files
#    validate with Go 1.23's and 1.27's parsers;
#  - 0 unexplained unmatched events (with --tiny-as-runtime the tiny
#    reasons count as unexplained: the option must remove them); of the
#    span and stack events Go 1.23 leaves out (traceTryAcquire), all but
#    3 at most are stack growths (alloc and free paired);
#  - every native event of the six kinds is matched or, default mode on Go
#    1.24+, a tiny object whose 8-byte ID we hold live (tiny_shared_id);
#  - pairs found only within the wide tolerance (1 s; every pair is of
#    one life of its slot) stay under 2 % of a kind (+ 2), and matched
#    allocations carry the same type name on both sides;
#  - HeapObjectAlloc matched >= 99.9 % of the runtime's with
#    --tiny-as-runtime; without it the documented tiny difference shows
#    (json: Go 1.27 tiny_shared_id > 0, Go 1.23 tiny_upper_alloc > 0).
# Prints the match figures of every run.  KEEP_TMP=1 keeps them.
source "$(dirname "$0")/lib/lib.sh"

[ -x "$TRACER" ] || fail "tracer not built: $TRACER"
TC123=$(tracecheck 1.23) || exit 1
TC127=$(tracecheck 1.27) || exit 1
GO_VERSIONS="1.23 1.27" OUT=$GOBIN_DIR "$ROOT/tests/go/build-stdtests.sh" \
	encoding/json regexp >"$TMP/build.log" 2>&1 ||
	fail "cannot build the standard-library test binaries: $(tail -n 5 "$TMP/build.log")"
AGREE=$(agree_check) || exit 1

KINDS="SpanAlloc SpanFree HeapObjectAlloc HeapObjectFree GoroutineStackAlloc GoroutineStackFree"
TOL_US=200
figures=()

# run NAME PKG BENCH BENCHTIME VER MODE: one co-traced run, checked.
run() {
	local name=$1 pkg=$2 bench=$3 bt=$4 ver=$5 mode=$6 d bin rc files k A
	local nat mat late shared upper n opt=() ropt=()
	d=$TMP/$name-go$ver-$mode
	mkdir -p "$d"
	bin=$GOBIN_DIR/stdtest-$(basename "$pkg")-go$ver
	[ -x "$bin" ] || fail "no $bin"
	[ "$mode" = runtime ] && { opt=(--tiny-as-runtime); ropt=(-r); }
	# The package's directory: its benchmarks read testdata/.
	(cd "/usr/lib/go-$ver/src/$pkg" && GODEBUG=traceallocfree=1 \
		"$TRACER" --cache-dir "$TMP/cache" -o "$d/out" "${opt[@]}" -- \
		"$bin" -test.run='^$' -test.bench="$bench" -test.benchtime="$bt" \
		-test.trace="$d/native.trace" >"$d/log" 2>&1)
	rc=$?
	[ $rc -eq 0 ] || fail "$name go$ver $mode: exit $rc: $(tail -n 5 "$d/log")"
	grep -q '^PASS$' "$d/log" || fail "$name go$ver $mode: benchmark did not pass: $(tail -n 5 "$d/log")"
	grep -qE '^traceaf-bpf: done: .*, 0 dropped$' "$d/log" ||
		fail "$name go$ver $mode: records dropped: $(grep -E 'done:|dropped' "$d/log")"
	[ -s "$d/native.trace" ] || fail "$name go$ver $mode: no native trace"
	files=("$d"/out/*.trace)
	[ -f "${files[0]}" ] || fail "$name go$ver $mode: no trace files: $(tail -n 5 "$d/log")"
	check_files "$d/check" "${files[@]}"
	"$AGREE" -v -t $TOL_US -g "${ver#1.}" "${ropt[@]}" "$d/native.trace" \
		"${files[@]}" >"$d/agree" 2>"$d/agree.err" ||
		fail "$name go$ver $mode: agree_check: $(tail -n 3 "$d/agree.err")"
	A=$d/agree
	[ "$(kv "$A" min_page_heap_addr_equal)" = 1 ] ||
		fail "$name go$ver $mode: the two traces disagree on minPageHeapAddr"
	[ "$(kv "$A" unexplained)" = 0 ] ||
		fail "$name go$ver $mode: $(kv "$A" unexplained) unexplained unmatched events: $(grep -E ' unexplained [1-9]' "$A" | tr '\n' ';') first: $(head -n 5 "$d/agree.err" | tr '\n' ';')"
	for k in $KINDS; do
		nat=$(kv "$A" "$k native")
		mat=$(kv "$A" "$k matched")
		late=$(kv "$A" "$k matched_late")
		shared=$(kv "$A" "$k native_only tiny_shared_id")
		[ "$nat" -gt 0 ] || fail "$name go$ver $mode: no native $k events"
		[ $((mat + ${shared:-0})) -eq "$nat" ] ||
			fail "$name go$ver $mode: $k: $mat matched + ${shared:-0} tiny of $nat native"
		[ $((late * 50)) -le $((nat + 100)) ] ||
			fail "$name go$ver $mode: $k: $late of $nat matched only within the wide tolerance"
	done
	# Go 1.23's traceTryAcquire, beyond stack growths: rare (a lone stack
	# free about 1 run in 15), so a few at most.
	n=$(grep -E ' go123_trace_try_acquire ' "$A" | awk '{ s += $NF } END { print s + 0 }')
	[ "$n" -le 3 ] || fail "$name go$ver $mode: $n span/stack events the Go 1.23 runtime left out beyond stack growths: $(grep go123_trace_try_acquire "$A" | tr '\n' ';')"
	[ "$(kv "$A" "HeapObjectAlloc type_differs")" = 0 ] ||
		fail "$name go$ver $mode: $(kv "$A" "HeapObjectAlloc type_differs") matched allocations with another type name"
	mat=$(kv "$A" "HeapObjectAlloc matched_pct")
	shared=$(kv "$A" "HeapObjectAlloc native_only tiny_shared_id")
	upper=$(kv "$A" "HeapObjectAlloc ours_only tiny_upper_alloc")
	if [ "$mode" = runtime ]; then
		awk -v p="$mat" 'BEGIN { exit !(p >= 99.9) }' ||
			fail "$name go$ver: --tiny-as-runtime: HeapObjectAlloc matched $mat % of the runtime's"
	elif [ "$name" = json ] && [ "${ver#1.}" -ge 24 ]; then
		[ "${shared:-0}" -gt 0 ] || fail "json go$ver default: no tiny_shared_id: the documented tiny merge did not show"
	elif [ "$name" = json ]; then
		[ "${upper:-0}" -gt 0 ] || fail "json go$ver default: no tiny_upper_alloc: the documented difference did not show"
	fi
	figures+=("$(printf '%-7s go%-5s %-8s HeapObjectAlloc %6s/%-6s (%s %%, %s late, %s header) tiny_shared %s tiny_upper %s/%s; frees %s/%s; spans %s/%s %s/%s; stacks %s/%s %s/%s; ours outside window %s; Go 1.23 growth %s; dt p50/p99 alloc %s/%s us free %s/%s us' \
		"$name" "$ver" "$mode" \
		"$(kv "$A" "HeapObjectAlloc matched")" "$(kv "$A" "HeapObjectAlloc native")" "$mat" \
		"$(kv "$A" "HeapObjectAlloc matched_late")" "$(kv "$A" "HeapObjectAlloc matched_after_header")" \
		"${shared:-0}" "${upper:-0}" "$(kv "$A" "HeapObjectFree ours_only tiny_upper_free" | awk '{ print $0 + 0 } END { if (!NR) print 0 }')" \
		"$(kv "$A" "HeapObjectFree matched")" "$(kv "$A" "HeapObjectFree native")" \
		"$(kv "$A" "SpanAlloc matched")" "$(kv "$A" "SpanAlloc native")" \
		"$(kv "$A" "SpanFree matched")" "$(kv "$A" "SpanFree native")" \
		"$(kv "$A" "GoroutineStackAlloc matched")" "$(kv "$A" "GoroutineStackAlloc native")" \
		"$(kv "$A" "GoroutineStackFree matched")" "$(kv "$A" "GoroutineStackFree native")" \
		"$(grep -E 'ours_only outside_window' "$A" | awk '{ s += $NF } END { print s + 0 }')" \
		"$(grep -E 'stack_growth_in_trace_event' "$A" | awk '{ s += $NF } END { print s + 0 }')" \
		"$(kv "$A" "HeapObjectAlloc dt_p50_us")" "$(kv "$A" "HeapObjectAlloc dt_p99_us")" \
		"$(kv "$A" "HeapObjectFree dt_p50_us")" "$(kv "$A" "HeapObjectFree dt_p99_us")")")
}

for ver in 1.23 1.27; do
	for mode in default runtime; do
		run json encoding/json '^BenchmarkCodeUnmarshal$' 2x "$ver" "$mode"
		run regexp regexp '^BenchmarkCompile' 200x "$ver" "$mode"
	done
done
# The tracer says what --tiny-as-runtime left out on Go 1.23.
grep -q 'tiny-as-runtime: [0-9]* tiny allocations into an open block are not events' \
	"$TMP/json-go1.23-runtime/log" || fail "no --tiny-as-runtime count on Go 1.23: $(grep tiny "$TMP/json-go1.23-runtime/log")"
printf '  %s\n' "${figures[@]}"
pass "2 benchmarks x Go 1.23/1.27 x default/--tiny-as-runtime: 0 unexplained unmatched events"
