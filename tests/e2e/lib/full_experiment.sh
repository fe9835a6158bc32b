#!/bin/bash
# full_experiment.sh GOVERSION: all nine AllocFree events of fullwork, ours
# against the runtime's own (test_full_experiment_go1NN.sh run it).
#
# Three runs of fullwork -scale $SCALE (default 0.1) built by Go GOVERSION:
#  A. native_reference.sh: the runtime's own trace (GODEBUG=traceallocfree=1).
#  B. ours: the tracer attaches while fullwork waits, SIGUSR1 starts the
#     phase, the tracer stops by itself when fullwork exits.
#  C. co-traced: fullwork writes its native trace AND our tracer is attached;
#     both see the same execution, so spans (which depend on GC pacing, and
#     the tracer's uprobes slow the phase ~70x, so B runs ~1.3x more GCs than
#     A) can be compared tightly.
# Checks on B:
#  - every file valid with Go 1.23's and 1.27's tracecheck; no drops;
#    fullwork's exit status and done line unchanged; the tracer exits 0;
#  - all nine event kinds present;
#  - main.Node, main.Big, main.LargePtr: within 0.1% of native (observed
#    exact) and of what fullwork made;
#  - tiny merges (user/trace/session_records.c: a tiny alloc whose 8-byte ID is already live
#    is not an event).  The tracer does not print the count; we derive it as
#    TM = "done: N allocations" (records received) - ev HeapObjectAlloc, and
#    check it against the runtime's tiny allocator: with fullwork's 5,12,5,
#    12,... sequence the runtime merges a third of the tiny objects into an
#    existing block (MemStats: 200,000 * scale), and the tracer a sixth
#    (every third 16-byte block holds 5 B at 0, 5 B at 5, 5 B at 10: the
#    second is merged, the third is the block's upper 8-byte ID): expect
#    TM = (bytes5 + bytes12) / 6, within 2%, and never above the runtime's
#    merges (done frees - native HeapObjectFree);
#  - uint8 = bytes5 + bytes12 + bytes100 + bytes1000 + bytes4000 +
#    large_noscan - TM, within 0.1%;
#  - HeapObjectAlloc = done mallocs - TM (+ the ~30-90 objects allocated
#    outside fullwork's MemStats window: signal handling, fmt), within 0.1%;
#    and against native: 1.24+: native - TM; 1.23 (native misses the
#    runtime's tiny merges, native_reference.sh note 1): native +
#    (done frees - native HeapObjectFree) - TM; within 0.1%;
#  - HeapObjectFree = done frees - TM within 0.1% (MemStats counts each
#    runtime merge as a free; we free a block's upper ID separately); against
#    native: native + (runtime merges - TM) within 0.1%;
#  - GoroutineStackAlloc / GoroutineStackFree within 1% of native;
#  - SpanAlloc / SpanFree within $SPAN_TOL% (default 50) of native: GC
#    pacing (observed +1% to +37%; the co-traced run C checks them tightly);
#  - exists: GoroutineStack within 2 of native, Span and HeapObject > 0 and
#    within 50 of native (different moments: attach vs trace.Start);
#  - replay of each file: per family, alloc_of_live + free_of_unknown below
#    0.1% of the family's events.
# Checks on C (ours vs the native trace of the same run):
#  - SpanAlloc, SpanFree, GoroutineStackAlloc/Free within 1%; main.* exact
#    within 0.1%; files valid, replay below 0.1%.
#
# OBSERVED (2026-12-02, this VM, -scale 0.1, 4-5 runs per version; "a..b" =
# range; B takes ~10 s traced vs 0.15 s native; the test ~30-45 s):
#                              Go 1.23               Go 1.27
#   main.Node/Big/LargePtr     300000/15000/600 exact, both, every run
#   tiny merges TM (derived)   10000 = (30000+30000)/6, every run
#   uint8                      140600 = 150600 - TM exact (native: 130600 on
#                              1.23, 150600 on 1.27)
#   HeapObjectAlloc            458826..458879        458806..458843
#     - (mallocs - TM)         +0.01..+0.02%         +0.01%
#     - native adjusted        +0.00..+0.01%         -0.00%
#   HeapObjectFree             = done frees - TM exactly (452896..452898);
#                              native adjusted -0.00% (native 442909..442911)
#   GoroutineStackAlloc        -0.60..+0.04%         -0.72..-0.33% vs native
#     (ours 7321-7368 vs 7344-7376 native; co-traced: +0.00..+0.07%)
#   SpanAlloc vs native        +10..+28%             +1..+35%
#   SpanFree vs native         +11..+31%             +2..+37%
#     (num_gc 63-79 traced vs 23-61 native; co-traced: SpanAlloc +0.07..
#     +0.11%, SpanFree +0.00%: the difference is pacing, not the tracer)
#   exists Span / HeapObject / GoroutineStack: ours 47-57 / 159-171 / 7 (1.23),
#     8 (1.27); native 54-71 / 188-198 / 7, 8
#   replay (one file, ~972k events): heap 0 alloc_of_live, 3 free_of_unknown;
#     span 0/0; stack 0/0
#
# Env: SCALE (0.1), SPAN_TOL (50), KEEP_TMP=1 keeps the work dir.
VER=$1
source "$(dirname "$0")/lib.sh"
export BUILD
TEST_NAME="full_experiment_go${VER/./}"
SCALE=${SCALE:-0.1}
SPAN_TOL=${SPAN_TOL:-50}

[ -x "$TRACER" ] || fail "tracer not built: $TRACER"
BIN=$(workload fullwork "$VER") || exit 1
TC123=$(tracecheck 1.23) || exit 1
TC127=$(tracecheck 1.27) || exit 1
TCV=$(tracecheck "$VER") || exit 1

# ---- A: the native reference
FULLWORK_ARGS="-scale $SCALE" "$ROOT/tests/e2e/lib/native_reference.sh" "$VER" "$TMP/native" \
	>"$TMP/native.out" 2>&1 || fail "native reference: $(tail -n 3 "$TMP/native.out")"
NC=$TMP/native/native.counts

# run_traced DIR [VAR=VALUE...]: fullwork (with that environment and the extra
# flags in $FW_EXTRA) traced
# by us from before SIGUSR1 until it exits.  Sets WPID.
run_traced() {
	local d=$1
	shift
	mkdir -p "$d"
	# shellcheck disable=SC2086
	start_bg "$d/work.log" env "$@" "$BIN" -scale "$SCALE" ${FW_EXTRA:-}
	WPID=$BG_PID
	wait_for_line "$d/work.log" '^ready' 20 || fail "workload did not start: $(cat "$d/work.log")"
	start_bg "$d/tracer.log" "$TRACER" -p "$WPID" -o "$d/out"
	local tpid=$BG_PID
	wait_for_line "$d/tracer.log" 'attached' 60 || fail "tracer did not attach: $(cat "$d/tracer.log")"
	kill -USR1 "$WPID"
	wait_exit "$WPID" 300
	local rc=$?
	[ $rc -eq 0 ] || fail "traced workload exited with $rc: $(tail -n 5 "$d/work.log")"
	grep -q '^done nodes=' "$d/work.log" || fail "traced workload output: $(cat "$d/work.log")"
	wait_exit "$tpid" 120
	rc=$?
	[ $rc -eq 0 ] || fail "tracer exited with $rc: $(tail -n 20 "$d/tracer.log")"
	grep -qE '^traceaf-bpf: done: .*, 0 dropped$' "$d/tracer.log" ||
		fail "no summary line, or records dropped: $(grep -E 'done:|dropped' "$d/tracer.log")"
	grep -qE '^traceaf-bpf: [0-9]+ events not written' "$d/tracer.log" &&
		fail "tracer lost events: $(grep 'not written' "$d/tracer.log")"
	local files=("$d"/out/*.trace)
	[ -f "${files[0]}" ] || fail "no trace files: $(cat "$d/tracer.log")"
	check_files "$d/check" "${files[@]}"
	local f r
	for f in "${files[@]}"; do
		r=$(replay_check "$d/check/$(basename "$f").tc127" 0.1) ||
			fail "replay of $(basename "$f"):$r (alloc_of_live + free_of_unknown / events, want < 0.1%)"
	done
	"$ROOT/tests/e2e/lib/sum_counts.sh" -w "$d/work.log" "$d"/check/*.tc127 >"$d/ours.counts" ||
		fail "sum_counts.sh failed"
}

# ---- B: ours
run_traced "$TMP/ours"
OC=$TMP/ours/ours.counts
OLOG=$TMP/ours/tracer.log
nfiles=$(kv "$OC" files)

o() { kv "$OC" "$1"; }
nat() { kv "$NC" "$1"; }
# tcount COUNTS NAME SIZE allocs|exists -> N (0 if absent)
tcount() { local v; v=$(kv "$1" "type $2 $3 $4"); echo "${v:-0}"; }

for k in Span SpanAlloc SpanFree HeapObject HeapObjectAlloc HeapObjectFree GoroutineStack GoroutineStackAlloc GoroutineStackFree; do
	[ "$(o "ev $k")" -gt 0 ] || fail "no $k events in ours"
done

report=()
check() { # check LABEL OURS EXPECTED PCT [SLACK]
	local line
	line=$(printf '%-44s ours %8s  want %8s  %s%%' "$1" "$2" "$3" "$(pct "$2" "$3")")
	report+=("$line")
	within "$2" "$3" "$4" "${5:-0}" || fail "$1: ours $2, expected $3 ($(pct "$2" "$3")%, tolerance ${4}%${5:+ or $5})"
}

# main.* types: against native and against what fullwork made.
d() { kv "$OC" "done $1"; }
check "main.Node allocs vs native" "$(tcount "$OC" main.Node 56 allocs)" "$(tcount "$NC" main.Node 56 allocs)" 0.1
check "main.Node allocs vs made" "$(tcount "$OC" main.Node 56 allocs)" "$(d nodes)" 0.1
check "main.Big allocs vs native" "$(tcount "$OC" main.Big 568 allocs)" "$(tcount "$NC" main.Big 568 allocs)" 0.1
check "main.Big allocs vs made" "$(tcount "$OC" main.Big 568 allocs)" "$(d big)" 0.1
check "main.LargePtr allocs vs native" "$(tcount "$OC" main.LargePtr 40000 allocs)" "$(tcount "$NC" main.LargePtr 40000 allocs)" 0.1
check "main.LargePtr allocs vs made" "$(tcount "$OC" main.LargePtr 40000 allocs)" "$(d large_scan)" 0.1

# Tiny merges, derived from the tracer's summary line.
recs=$(sed -n 's/^traceaf-bpf: done: \([0-9]*\) allocations.*/\1/p' "$OLOG")
[ -n "$recs" ] || fail "no 'done: N allocations' line from the tracer: $(tail -n 5 "$OLOG")"
HOA=$(o "ev HeapObjectAlloc")
HOF=$(o "ev HeapObjectFree")
TM=$((recs - HOA))
TM_WANT=$((($(d bytes5) + $(d bytes12)) / 6))
RT_MERGES=$(($(nat "done frees") - $(nat "ev HeapObjectFree"))) # the runtime's, in run A
check "tiny merges (derived)" "$TM" "$TM_WANT" 2
[ "$TM" -le "$RT_MERGES" ] || fail "tiny merges $TM exceed the runtime's own $RT_MERGES"

u8_made=$(($(d bytes5) + $(d bytes12) + $(d bytes100) + $(d bytes1000) + $(d bytes4000) + $(d large_noscan)))
check "uint8 allocs vs made - TM" "$(tcount "$OC" uint8 1 allocs)" "$((u8_made - TM))" 0.1
check "HeapObjectAlloc vs mallocs - TM" "$HOA" "$(($(d mallocs) - TM))" 0.1
if [ "${VER#1.}" -le 23 ]; then
	nat_hoa=$(($(nat "ev HeapObjectAlloc") + RT_MERGES - TM))
else
	nat_hoa=$(($(nat "ev HeapObjectAlloc") - TM))
fi
check "HeapObjectAlloc vs native (adj.)" "$HOA" "$nat_hoa" 0.1
check "HeapObjectFree vs frees - TM" "$HOF" "$(($(d frees) - TM))" 0.1
check "HeapObjectFree vs native (adj.)" "$HOF" "$(($(nat "ev HeapObjectFree") + RT_MERGES - TM))" 0.1
for k in GoroutineStackAlloc GoroutineStackFree; do
	check "$k vs native" "$(o "ev $k")" "$(nat "ev $k")" 1
done
for k in SpanAlloc SpanFree; do
	check "$k vs native (GCs $(d num_gc) vs $(nat "done num_gc"))" "$(o "ev $k")" "$(nat "ev $k")" "$SPAN_TOL"
done
check "GoroutineStack (exists) vs native" "$(o "ev GoroutineStack")" "$(nat "ev GoroutineStack")" 0 2
check "Span (exists) vs native" "$(o "ev Span")" "$(nat "ev Span")" 0 50
check "HeapObject (exists) vs native" "$(o "ev HeapObject")" "$(nat "ev HeapObject")" 0 50

# ---- C: co-traced, native and ours in one run
FW_EXTRA="-native $TMP/co/native.trace"
run_traced "$TMP/co" GODEBUG=traceallocfree=1
"$TCV" -replay "$TMP/co/native.trace" >"$TMP/co/native.tc" 2>&1
[ "$(kv "$TMP/co/native.tc" valid)" = 1 ] || fail "co-traced native trace invalid: $(grep -m1 ^error "$TMP/co/native.tc")"
CC=$TMP/co/ours.counts
CN=$TMP/co/native.tc
for k in SpanAlloc SpanFree GoroutineStackAlloc GoroutineStackFree; do
	check "co-traced $k vs its native" "$(kv "$CC" "ev $k")" "$(kv "$CN" "ev $k")" 1
done
check "co-traced main.Node vs its native" "$(tcount "$CC" main.Node 56 allocs)" "$(tcount "$CN" main.Node 56 allocs)" 0.1

printf '  %s\n' "${report[@]}"
pass "Go $VER, fullwork -scale $SCALE: $nfiles file(s), $(o experimental_events) events, HeapObjectAlloc $HOA (tiny merges $TM), spans $(o "ev SpanAlloc")/$(nat "ev SpanAlloc") native, co-traced spans $(kv "$CC" "ev SpanAlloc")/$(kv "$CN" "ev SpanAlloc")"
