#!/bin/bash
# native_reference.sh GOVERSION OUTDIR
#
# The ground truth for the "all nine events" end-to-end tests: runs the
# fullwork workload (tests/go/fullwork) built by Go GOVERSION (1.23+) with
# the runtime's own AllocFree experiment (GODEBUG=traceallocfree=1, the
# workload's -native flag: runtime/trace.Start at the start of its phase,
# trace.Stop at its end), checks the trace with tracecheck built by the same
# Go, and writes into OUTDIR:
#   native.trace       the runtime's trace ("go 1.23 trace"; Go 1.26/1.27
#                      write "go 1.26 trace", which only 1.26+ parsers read)
#   native.tracecheck  `tracecheck -replay native.trace`
#   native.log         the workload's output ("ready PID", "done k=v ...")
#   native.counts      the counts file, made by sum_counts.sh -w native.log
# Compare our tracer's output with it:
#   tests/e2e/lib/sum_counts.sh -c "$(tracecheck 1.27)" -w work.log out/*.trace > ours.counts
#   tests/e2e/lib/compare_counts.sh OUTDIR/native.counts ours.counts 1 [KEY-PATTERN...]
# Env: FULLWORK_ARGS (default empty, e.g. "-scale 0.1"): extra workload
# flags; run the traced workload with the same ones.  FLAVOUR: "", -pie, ...
#
# counts file format (sum_counts.sh has the details): "key value" lines, the
# value is the last field, "#" starts a comment:
#   files 1 / valid 1 / version 23 / bytes N / events N / generations N /
#   experimental_events N / bytes_per_event X / types_defined N / info_batches N
#   ev <Kind> N                   the nine kinds, fixed order
#   type <name> <size> allocs N   per type, sorted (name may contain spaces)
#   type <name> <size> exists N
#   replay <heap|span|stack> <allocs|frees|alloc_of_live|free_of_unknown|live_at_end> N
#   done <key> N                  the workload's done line (mallocs, frees, ...)
#
# WHAT THE NATIVE REFERENCE SHOWS (fullwork -scale 1, this VM, 2026-12-02,
# six runs per version; "a-b" = range over the runs):
#
#                         Go 1.23                 Go 1.27 (writes "go 1.26 trace")
#   HeapObjectAlloc       4,486,606-4,486,663     4,686,639-4,686,761
#   HeapObjectFree        4,438,097-4,438,166     4,438,139-4,438,258
#   SpanAlloc             154k-162k               160k-182k      (GC-count dependent)
#   SpanFree              152k-159k               158k-180k
#   GoroutineStackAlloc   72,172-72,175           72,175-72,180  (6 per goroutine + ~175)
#   GoroutineStackFree    72,163-72,168           72,168-72,172
#   exists, at trace start only (the runtime never repeats them per generation):
#     Span                59-67                   56-70
#     HeapObject          193-197                 186-192        (~180 of them <notype>)
#     GoroutineStack      7                       8
#   generations           2                       2
#   AllocFree events      ~9.38M in ~57.7 MB      ~9.6M in ~59.5 MB
#   bytes per event       6.08-6.16               6.17-6.27  (whole file / AllocFree
#                         events; the file also holds ~7% scheduling events)
#   done mallocs          4,686,586-4,686,645     4,686,623-4,686,738
#   done frees            4,638,096-4,638,167     4,638,148-4,638,258
#   done num_gc / ms      230-248 / 1.1-1.5 s     195-246 / 1.0-1.45 s
# Per type, both versions: main.Node 56 = 3,000,000, main.Big 568 = 150,000,
# main.LargePtr 40000 = 6,000 (all exact); uint8 1 = 1,506,000 on 1.27 but
# 1,306,000 on 1.23 (see 1 below); the `go func` closure and its captured-
# variables struct, 12,000 each; sync.WaitGroup 120; runtime.g ~170 (new Gs:
# first wave, GC workers, waves overlapping); ~350-450 runtime.* objects of
# the trace machinery itself (see 2).  "exists" objects are mostly <notype>.
#
# Replay inconsistencies (each ID family replayed alone over the file):
#                         Go 1.23                 Go 1.27
#   heap alloc_of_live    125k-130k (2.9%)        233k-253k (5.2% of allocs)
#   heap free_of_unknown  150,000-150,001 (3.4%)  150,000-150,503 (3.4% of frees)
#   heap live_at_end      69k-73k                 146k-164k   (really live: ~48.5k)
#   span                  0-4 / 0-4               0 / 0
#   stack                 2-5 / 1-4               0 / 0
# The heap ones are the runtime's own, isolated with fullwork -parts:
#  - -parts big: free_of_unknown 149,999, alloc_of_live ~120k on both.
#    Objects with a malloc header (> 512 B with pointers, main.Big) are
#    reported allocated at slot+8 (the pointer after the header) but freed at
#    the slot base (sweep): every free is of an unknown ID, and reusing a
#    slot allocates an ID that is still live.
#  - -parts bytes on 1.27: alloc_of_live 116.6k, live_at_end 83.7k.  From
#    1.24 every tiny object (< 16 B, noscan) is reported at block+offset, but
#    a free only once per 16-byte block at its base: offsets sharing the
#    base's 8-byte ID re-allocate a live ID, the others are never freed.
#  - -parts nodes,large: 0 / 0.  -parts goroutines: 0 / 0-1.
#  What remains (1.23: -parts bytes 515 / 515 = 0.04%; stacks a few) is
#  clock skew between CPUs: a free ordered after the reuse of its slot.
#
# SYSTEMATIC DIFFERENCES TO EXPECT from an external tracer attached before
# the phase (while fullwork waits for SIGUSR1), and how to compare:
#  1. Go 1.23 mallocgc returns early, before its traceallocfree hook, when a
#     tiny object fits into the current tiny block: natively only the first
#     object of each tiny block is reported.  Here 200,000 of the 600,000
#     make([]byte, 5|12) are missing from the 1.23 reference (uint8 -13.3%,
#     HeapObjectAlloc -4.3% against MemStats).  A tracer that counts every
#     allocation sees them (done mallocs does too): on 1.23 compare uint8
#     and HeapObjectAlloc with done mallocs, or expect ours = native + 200,000
#     * scale.  From 1.24 (postMallocgcDebug) native reports every tiny
#     object: HeapObjectAlloc = done mallocs + ~20.
#  2. runtime/trace's own work is in the native trace and in its MemStats
#     window: at each generation boundary the stack table is written with
#     one runtime.Frames (232 B) and one []runtime.traceFrame per stack
#     (150-200 each here); trace.Start/the advancer/the reader add ~25
#     objects (untracedG, timer, timerWhen, wakeableSleep, sudog, closures,
#     io.Writer, *trace.recorder and the multiplexer closure on 1.25+) and
#     2 goroutines (reader, advancer: runtime.g + stack); `FULLWORK_ARGS=
#     -parts=` (an empty phase) shows this floor: 36 (1.23) / 47 (1.27)
#     HeapObjectAlloc, 7 / 12 GoroutineStackAlloc, GC workers of the first
#     runtime.GC included (those an external tracer sees too).  An external
#     tracer sees none of the trace's own work: expect ours ~350-450 heap
#     objects fewer (~0.01%; also in done mallocs), a few stacks fewer, no
#     runtime.Frames/traceFrame types.  The workload's own fmt output after
#     trace.Stop (~30 objects) is only in ours.
#  3. "exists" come from different moments: natively at trace.Start (world
#     stopped, after fullwork's preallocation), for an external tracer at
#     attach.  The runtime's snapshot counts every slot below freeindex or
#     with its alloc bit set, so it includes dead, not yet swept objects,
#     and names a type only for objects with a malloc header or large ones
#     (the rest are <notype>).  Compare exists counts loosely (tens), never
#     per type.  Stack exists: 7 (1.23) / 8 (1.27) goroutines: main,
#     forcegc, bgsweep, bgscavenge, finalizer/cleanup, signal loop, ...
#  4. Span counts depend on how many GCs ran (num_gc ~200-250 with native
#     tracing, ~365-385 untraced: tracing changes pacing, and so will
#     uprobes): SpanAlloc/SpanFree vary 10-15% between identical runs.
#     Stacks depend on the adaptive starting stack size (2 KiB at first,
#     4 KiB once GC stats have adapted): < 0.01% here.  Compare main.* types
#     and HeapObjectFree tightly (< 0.1%), stacks at ~1%, spans at ~20%.
#  5. MemStats frees counts every tiny object merged into a block as freed
#     at allocation; HeapObjectFree counts one free per block: done frees -
#     HeapObjectFree = 200,000 * scale (the merged tiny objects) +-1, on
#     both versions.
#  6. The stack "order" argument is sys.Len64(size) = log2(size)+1
#     (2 KiB -> 12, 128 KiB -> 18).
#  7. GODEBUG=traceallocfree=1 sets debug.malloc, which sends every
#     allocation through the slow path (no size-specialized fast paths on
#     1.26+): the native phase takes ~1.2 s against ~0.7 s untraced, with the
#     same objects allocated.
VER=${1:-}
OUTARG=${2:-}
if [ -z "$VER" ] || [ -z "$OUTARG" ] || [ $# -ne 2 ]; then
	echo "usage: $0 GOVERSION OUTDIR" >&2
	exit 2
fi
# shellcheck source=lib.sh source-path=SCRIPTDIR
source "$(dirname "$0")/lib.sh"
# shellcheck disable=SC2034 # read by lib.sh's fail
TEST_NAME="native_reference_go$VER"
case $VER in
1.1[0-9] | 1.2[0-2]) fail "Go $VER has no AllocFree experiment (Go 1.23+)" ;;
esac
mkdir -p "$OUTARG" || fail "cannot create $OUTARG"
OUTDIR=$(cd "$OUTARG" && pwd)
FULLWORK_ARGS=${FULLWORK_ARGS:-}

BIN=$(workload fullwork "$VER" "${FLAVOUR:-}") || exit 1
TC=$(tracecheck "$VER") || exit 1

rm -f "$OUTDIR/native.trace" "$OUTDIR/native.counts" "$OUTDIR/native.tracecheck"
# shellcheck disable=SC2086 # FULLWORK_ARGS is a list of flags
start_bg "$OUTDIR/native.log" env GODEBUG=traceallocfree=1 "$BIN" \
	-native "$OUTDIR/native.trace" $FULLWORK_ARGS
WPID=$BG_PID
wait_for_line "$OUTDIR/native.log" '^ready' 20 || fail "workload did not start: $(cat "$OUTDIR/native.log")"
kill -USR1 "$WPID"
wait_exit "$WPID" 300
rc=$?
[ $rc -eq 0 ] || fail "workload exited with $rc: $(tail -n 5 "$OUTDIR/native.log")"
grep -q '^done ' "$OUTDIR/native.log" || fail "no done line: $(cat "$OUTDIR/native.log")"
[ -s "$OUTDIR/native.trace" ] || fail "no native trace written"

"$TC" -replay "$OUTDIR/native.trace" >"$OUTDIR/native.tracecheck" 2>&1
[ "$(kv "$OUTDIR/native.tracecheck" valid)" = 1 ] ||
	fail "tracecheck-go$VER rejects the native trace: $(grep -m1 '^error' "$OUTDIR/native.tracecheck")"

"$ROOT/tests/e2e/lib/sum_counts.sh" -w "$OUTDIR/native.log" \
	-l "native reference: fullwork${FULLWORK_ARGS:+ $FULLWORK_ARGS}, Go $VER${FLAVOUR:-}, GODEBUG=traceallocfree=1, $(date -u +%FT%TZ)" \
	"$OUTDIR/native.tracecheck" >"$OUTDIR/native.counts.tmp" ||
	fail "sum_counts.sh failed"
mv "$OUTDIR/native.counts.tmp" "$OUTDIR/native.counts"

C=$OUTDIR/native.counts
echo "native reference Go $VER: $(kv "$C" experimental_events) events in $(kv "$C" generations) generation(s), $(kv "$C" bytes) bytes"
for k in Span SpanAlloc SpanFree HeapObject HeapObjectAlloc HeapObjectFree GoroutineStack GoroutineStackAlloc GoroutineStackFree; do
	printf '  %-20s %s\n' "$k" "$(kv "$C" "ev $k")"
done
grep -E '^type main\.' "$C" | sed 's/^/  /'
grep -E '^replay .* (alloc_of_live|free_of_unknown) ' "$C" | sed 's/^/  /'
echo "  $(grep '^done ' "$OUTDIR/native.log" | tail -n 1)"
echo "wrote $C"
