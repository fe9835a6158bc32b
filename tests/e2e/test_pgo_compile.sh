#!/bin/bash
# test_pgo_compile - PGO-built Go binaries are traced: the Go toolchain's
# own compile (built with PGO since Go 1.21; Debian's, stripped), where
# (*mheap).initSpan is inlined into allocSpan, so span allocations are
# seen at its one callee setSpans instead.
#
# For compile of Go 1.23 and Go 1.27, compiling a one-file package:
#  - full mode: the tracer attaches (no "initSpan not found" refusal), the
#    compile succeeds, the file is valid with Go 1.23's and 1.27's
#    tracecheck, it has SpanAlloc events and heap allocations, and its
#    replay has no heap or span anomaly beyond 0.1 % (goroutine stacks
#    are not held to it: PGO inlines stackalloc/stackfree at some call
#    sites, and Go 1.23's compile shows 2 of ~19 stack events unmatched;
#    they are printed);
#  - --memprofilerate-exact 1: attaches and validates too (the exact
#    engine: compile exits before its first GC, and --memprofilerate's
#    reads happen at GC marks; README "Production mode").
# Observed (2026-12-03, this VM): ~7000 allocations, ~100 spans per run;
# ~8 s per attach (compile's planning: issue 16).
source "$(dirname "$0")/lib/lib.sh"

[ -x "$TRACER" ] || fail "tracer not built: $TRACER"
TC123=$(tracecheck 1.23) || exit 1
TC127=$(tracecheck 1.27) || exit 1
printf 'package main\n\nfunc main() {\n\tprintln("hi")\n}\n' >"$TMP/h.go"

res=""
for ver in 1.23 1.27; do
	COMPILE=/usr/lib/go-$ver/pkg/tool/linux_amd64/compile
	[ -x "$COMPILE" ] || fail "no $COMPILE"
	for mode in full sampled; do
		out=$TMP/$ver-$mode
		extra=()
		[ $mode = sampled ] && extra=(--memprofilerate-exact 1)
		"$TRACER" "${extra[@]}" -o "$out" -- "$COMPILE" -p main -o "$TMP/h.o" "$TMP/h.go" \
			>"$out.log" 2>&1 || fail "Go $ver compile, $mode: $(tail -n 3 "$out.log")"
		files=("$out"/*.trace)
		[ -f "${files[0]}" ] || fail "Go $ver compile, $mode: no trace file: $(tail -n 3 "$out.log")"
		check_files "$out.check" "${files[@]}"
		tc=$out.check/$(basename "${files[0]}").tc127
		heap=$(kv "$tc" "replay heap allocs")
		[ "${heap:-0}" -gt 1000 ] || fail "Go $ver compile, $mode: only ${heap:-0} heap allocations"
		if [ $mode = full ]; then
			spans=$(kv "$tc" "replay span allocs")
			[ "${spans:-0}" -gt 0 ] || fail "Go $ver compile: no SpanAlloc events"
			for fam in heap span; do
				ev=$(($(kv "$tc" "replay $fam allocs") + $(kv "$tc" "replay $fam frees")))
				bad=$(($(kv "$tc" "replay $fam alloc_of_live") + $(kv "$tc" "replay $fam free_of_unknown")))
				[ $((bad * 1000)) -le "$ev" ] ||
					fail "Go $ver compile: $bad of $ev $fam events do not replay"
			done
			sbad=$(($(kv "$tc" "replay stack alloc_of_live") + $(kv "$tc" "replay stack free_of_unknown")))
			sev=$(($(kv "$tc" "replay stack allocs") + $(kv "$tc" "replay stack frees")))
			res="$res Go $ver: $heap allocs, $spans spans, stacks $sbad/$sev unmatched;"
		fi
	done
done
pass "$res"
