#!/bin/bash
# test_finalizers - objects with finalizers are freed when the runtime
# frees them: a cycle after they became garbage, not at the sweep that
# found them unmarked.  That sweep marks ("revives") each of them and
# queues its finalizer before its free loop reads the marks
# (runtime/mgcsweep.go); span_sweep walks the span's specials for them.
# Found in CI: the Go toolchain's link (test_go_toolchain) and compile
# have finalizers, and each revived object was freed twice in our trace.
#
# tests/go/finalizers (40 000 objects with finalizers, 5 kinds: 16 and
# 32 B noscan, 32 B scan, 800 B with a malloc header, 40 000 B large;
# every third kept until the end) under `traceaf-bpf -- CMD`, the runtime's
# own AllocFree trace of the same process beside it (Go 1.23, 1.27), ours
# alone on Go 1.21 (no AllocFree experiment; its sweep is the same code).
# Checked for each version:
#  - every finalizer ran (the workload's done line), the tracer exits 0
#    with 0 dropped, every file valid for Go 1.23's and 1.27's parsers;
#  - no heap ID freed twice or allocated live in our trace, and no shadow
#    heap inconsistency in the summary (before the fix: one of each per
#    revived object);
#  - our HeapObjectFree count covers every allocation the workload made
#    (runtime.MemStats frees over the rounds);
#  - Go 1.23/1.27: tests/e2e/lib/agree_check pairs every one of the
#    runtime's HeapObjectFree events with ours, and leaves none of ours
#    unexplained.
source "$(dirname "$0")/lib/lib.sh"

[ -x "$TRACER" ] || fail "tracer not built: $TRACER"
TC123=$(tracecheck 1.23) || exit 1
TC127=$(tracecheck 1.27) || exit 1
AGREE=$(agree_check) || exit 1

figures=()
for ver in 1.21 1.23 1.27; do
	bin=$(workload finalizers "$ver") || exit 1
	d=$TMP/go$ver
	mkdir -p "$d"
	nat=()
	[ "$ver" != 1.21 ] && nat=(-native "$d/native.trace")
	GODEBUG=traceallocfree=1 "$TRACER" --cache-dir "$TMP/cache" -o "$d/out" -- \
		"$bin" "${nat[@]}" >"$d/log" 2>&1 || fail "go$ver: exit $?: $(tail -n 5 "$d/log")"
	done_line=$(grep '^done ' "$d/log") || fail "go$ver: the workload did not finish: $(tail -n 5 "$d/log")"
	[[ $done_line =~ finalized=([0-9]+)\ want=([0-9]+).*frees=([0-9]+) ]] ||
		fail "go$ver: bad done line: $done_line"
	[ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ] && [ "${BASH_REMATCH[2]}" -ge 40000 ] ||
		fail "go$ver: finalizers: $done_line"
	want_frees=${BASH_REMATCH[3]}
	grep -qE '^traceaf-bpf: done: .*, 0 dropped$' "$d/log" ||
		fail "go$ver: records dropped: $(grep -E 'done:|dropped' "$d/log")"
	files=("$d"/out/*.trace)
	[ -f "${files[0]}" ] || fail "go$ver: no trace file: $(tail -n 5 "$d/log")"
	check_files "$d/check" "${files[@]}"
	frees=0
	for f in "${files[@]}"; do
		o=$d/check/$(basename "$f").tc127
		for k in alloc_of_live free_of_unknown; do
			[ "$(kv "$o" "replay heap $k")" = 0 ] ||
				fail "go$ver: $(basename "$f"): $(kv "$o" "replay heap $k") heap $k (a revived object freed twice?)"
		done
		frees=$((frees + $(kv "$o" "ev HeapObjectFree")))
	done
	grep -q '"shadow_heap_errors": {}' "$d"/out/*.summary.json ||
		fail "go$ver: shadow heap inconsistencies: $(grep -h shadow_heap_errors "$d"/out/*.summary.json)"
	[ "$frees" -ge "$want_frees" ] || fail "go$ver: $frees HeapObjectFree, the runtime counted $want_frees frees"
	fig="go$ver: $frees frees (runtime's MemStats $want_frees over the rounds)"
	if [ "$ver" != 1.21 ]; then
		"$AGREE" -v -g "${ver#1.}" "$d/native.trace" "${files[@]}" \
			>"$d/agree" 2>"$d/agree.err" || fail "go$ver: agree_check: $(tail -n 3 "$d/agree.err")"
		A=$d/agree
		[ "$(kv "$A" unexplained)" = 0 ] ||
			fail "go$ver: $(kv "$A" unexplained) unexplained unmatched events: $(grep -E ' unexplained [1-9]' "$A" | tr '\n' ';') first: $(head -n 5 "$d/agree.err" | tr '\n' ';')"
		n=$(kv "$A" "HeapObjectFree native")
		m=$(kv "$A" "HeapObjectFree matched")
		[ "$n" -ge 40000 ] && [ "$m" = "$n" ] ||
			fail "go$ver: HeapObjectFree: $m of the runtime's $n matched"
		fig="$fig; the runtime's $n HeapObjectFree all matched"
	fi
	figures+=("$fig")
done
printf '  %s\n' "${figures[@]}"
pass "40 000 finalized objects on Go 1.21/1.23/1.27: each freed once, when the runtime frees it"
