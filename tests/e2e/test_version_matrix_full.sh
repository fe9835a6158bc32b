#!/bin/bash
# test_version_matrix_full - the full-experiment workload (tests/go/fullwork:
# churned structs, byte slices incl. tiny ones, objects with malloc
# headers, large objects, thousands of goroutines growing their stacks,
# forced GCs) built by every installed Go 1.21..1.27, plain and stripped,
# traced from before its phase.  Each run: every file valid with Go 1.23's
# and 1.27's parsers; all nine event kinds present; main.Node, main.Big
# and main.LargePtr allocation counts equal what fullwork made; replay of
# each file below 0.1% inconsistent per ID family.  (The comparison with
# the runtime's own traces, where it has them (1.23+), is in
# test_full_experiment_go1*.sh.)
source "$(dirname "$0")/lib/lib.sh"
SCALE=${SCALE:-0.05}
VERSIONS=${VERSIONS:-"1.21 1.22 1.23 1.24 1.25 1.26 1.27"}

[ -x "$TRACER" ] || fail "tracer not built: $TRACER"
TC123=$(tracecheck 1.23) || exit 1
TC127=$(tracecheck 1.27) || exit 1
cells=()

for v in $VERSIONS; do
	for fl in "" -stripped; do
		name=go$v$fl
		d=$TMP/$name
		mkdir -p "$d"
		bin=$(workload fullwork "$v" "$fl") || exit 1
		start_bg "$d/work.log" "$bin" -scale "$SCALE"
		wpid=$BG_PID
		wait_for_line "$d/work.log" '^ready' 20 || fail "$name: workload did not start"
		start_bg "$d/tracer.log" "$TRACER" -p "$wpid" -o "$d/out" -g 250ms
		tpid=$BG_PID
		wait_for_line "$d/tracer.log" 'attached' 30 || fail "$name: no attach: $(cat "$d/tracer.log")"
		kill -USR1 "$wpid"
		wait_exit "$wpid" 120 || fail "$name: workload failed: $(tail -n 3 "$d/work.log")"
		wait_exit "$tpid" 60 || fail "$name: tracer failed: $(tail -n 5 "$d/tracer.log")"
		done_line=$(grep '^done ' "$d/work.log")
		want() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$done_line"; }
		files=("$d"/out/*.trace)
		check_files "$d/check" "${files[@]}"
		declare -A ev=() ty=()
		for f in "${files[@]}"; do
			out=$d/check/$(basename "$f").tc127
			r=$(replay_check "$out" 0.1) || fail "$name: replay of $(basename "$f"):$r"
			while read -r k n; do ev[$k]=$(( ${ev[$k]:-0} + n )); done \
				< <(awk '$1 == "ev" { print $2, $3 }' "$out")
			while read -r k n; do ty[$k]=$(( ${ty[$k]:-0} + n )); done \
				< <(awk '$1 == "type" && $(NF-1) == "allocs" && $2 ~ /^main\.(Node|Big|LargePtr)$/ { print $2, $NF }' "$out")
		done
		for k in Span SpanAlloc SpanFree HeapObject HeapObjectAlloc HeapObjectFree \
			 GoroutineStack GoroutineStackAlloc GoroutineStackFree; do
			[ "${ev[$k]:-0}" -gt 0 ] || fail "$name: no $k events"
		done
		[ "${ty[main.Node]:-0}" = "$(want nodes)" ] || fail "$name: main.Node ${ty[main.Node]:-0}, made $(want nodes)"
		[ "${ty[main.Big]:-0}" = "$(want big)" ] || fail "$name: main.Big ${ty[main.Big]:-0}, made $(want big)"
		[ "${ty[main.LargePtr]:-0}" = "$(want large_scan)" ] ||
			fail "$name: main.LargePtr ${ty[main.LargePtr]:-0}, made $(want large_scan)"
		cells+=("$name:${ev[HeapObjectAlloc]}/${ev[HeapObjectFree]}")
		unset ev ty
	done
done
pass "${cells[*]}"
