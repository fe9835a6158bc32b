#!/bin/bash
# test_daemon_golden - the daemon's output for a fixed record stream is
# pinned byte for byte.
#
# tests/bench/bench_daemon synthesizes a deterministic ring-buffer record
# stream (four threads, five allocation kinds, spans, sweeps, GC cycles,
# goroutine stacks) and feeds it through the tracer's own session, shadow
# heap, encoder and sink.  Its trace files, with every record handled and
# no sampling and again with --sample 7, in 30 ms generations rotated at 3 MB, must hash to what
# tests/e2e/golden/daemon.sha256 holds.  A restructuring of the daemon must
# leave the bytes alone; a deliberate change of the output regenerates the
# file with GOLDEN_UPDATE=1 and says why in its commit.
#
# The type descriptors come from the Go 1.23 fullwork workload (built
# -trimpath, so reproducible for one toolchain release): the golden file
# names that release, and another release is reported as such.
. "$(dirname "$0")/lib/lib.sh"

GOLDEN=$ROOT/tests/e2e/golden/daemon.sha256
ALLOCS=600000

make -s -C "$ROOT" BUILD="$BUILD" "$BUILD/bench/bench_daemon" >"$TMP/make.log" 2>&1 ||
	fail "cannot build bench_daemon: $(tail -n 5 "$TMP/make.log")"
bin=$(workload fullwork 1.23)
check=$(tracecheck 1.23)
gover=$(/usr/lib/go-1.23/bin/go version | awk '{ print $3 }')

: >"$TMP/got"
echo "toolchain $gover" >>"$TMP/got"
for sample in 1 7; do
	out=$TMP/out-$sample
	mkdir "$out"
	BENCH_DAEMON_OUT=$out BENCH_DAEMON_ROTATE=3000000 BENCH_DAEMON_GEN_NS=30000000 \
		"$BUILD/bench/bench_daemon" "$bin" "$ALLOCS" "$sample" \
		>"$TMP/run-$sample.log" 2>&1 ||
		fail "bench_daemon (sample $sample) failed: $(tail -n 3 "$TMP/run-$sample.log")"
	n=0
	# Names are <comm>-<pid>-<UTC time>-<seq>: sorted by name is by seq.
	for f in $(ls "$out" | sort); do
		n=$((n + 1))
		echo "sample $sample file $n ${f##*-} $(sha256sum <"$out/$f" | cut -d' ' -f1) $(stat -c %s "$out/$f")" >>"$TMP/got"
	done
	[ "$n" -ge 1 ] || fail "sample $sample: no trace file written"
	# Pinned bytes are only worth pinning if Go's parser reads them.
	for f in "$out"/*; do
		"$check" <"$f" >"$TMP/check.log" 2>&1 ||
			fail "$(basename "$f") does not validate: $(tail -n 3 "$TMP/check.log")"
	done
done

if [ -n "${GOLDEN_UPDATE:-}" ]; then
	cp "$TMP/got" "$GOLDEN"
	pass "golden file rewritten: $GOLDEN"
fi
[ -f "$GOLDEN" ] || fail "no golden file $GOLDEN (GOLDEN_UPDATE=1 writes it)"
want_go=$(sed -n 's/^toolchain //p' "$GOLDEN")
[ "$want_go" = "$gover" ] ||
	fail "the golden bytes were made with $want_go, this machine has $gover: type addresses differ; regenerate with GOLDEN_UPDATE=1 on a tree known to be right"
if ! diff -u "$GOLDEN" "$TMP/got" >"$TMP/diff"; then
	cat "$TMP/diff"
	fail "trace files differ from the pinned ones"
fi
pass "$(grep -c '^sample' "$GOLDEN") files byte-identical to the pinned output"
