#!/bin/bash
# test_disk_full - the output file system fills up while tracing.
#
# Three cases, each on a fresh tmpfs; a knownalloc (Go 1.27) makes $N
# main.Node values, far more events than fit (about 7 bytes each):
#  - a 1 MiB disk, 20 ms generations and --rotate-size 300K;
#  - an 8 MiB disk, 200 ms generations (issue 13's case);
#  - an 8 MiB disk with the defaults (1 s generations, cut at 8 MiB of
#    events: --generation-size).
# A generation is written whole or not at all, so the tracer cuts them at
# a quarter of the room left on the disk (session_gen.c
# gen_cap_for_room): before it, the defaults' first 8 MiB generation did
# not fit the 8 MiB disk and no file was left.
# Checked in each case:
#  - the tracer says why it lost events: "No space left on device";
#  - the target is not disturbed: it prints its usual "done" line with
#    every Node and exits 0, as it does untraced;
#  - the tracer exits by itself when the target does, after its summary,
#    with status 0 or 1 (printed). Observed 2026-12-02: 0 -- a session
#    whose target exits is closed by check_exits, which does not count a
#    failed sink as a failure; stopped by a signal or --duration instead,
#    the same failure exits 1. The README says errors exit 1: tighten this
#    to 1 when tracer.c agrees (WANT_EXIT=1 does it now);
#  - what is on disk is usable: at least one trace file, and every file
#    valid with Go 1.23's and Go 1.27's tracecheck (a failed write is cut
#    back to the last whole generation; no header-only file is left);
#  - what fitted was kept: the files fill at least half the disk.
# The tmpfs is unmounted on exit, whatever happens.
source "$(dirname "$0")/lib/lib.sh"
N=${N:-3000000}
WANT_EXIT=${WANT_EXIT:-}

[ -x "$TRACER" ] || fail "tracer not built: $TRACER"
BIN=$(workload knownalloc 1.27) || exit 1
TC123=$(tracecheck 1.23) || exit 1
TC127=$(tracecheck 1.27) || exit 1

MNT=$TMP/mnt
mkdir -p "$MNT"
disk_full_cleanup() {
	local p
	for p in "${BG_PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null
	done
	wait 2>/dev/null
	if mountpoint -q "$MNT"; then
		umount "$MNT" 2>/dev/null || umount -l "$MNT"
	fi
	cleanup
}
trap disk_full_cleanup EXIT

# one_case SIZE FLAGS...: trace until the SIZE tmpfs is full; adds what
# is left to SUMMARY.
one_case() {
	local size=$1 wpid tpid wrc trc used files f tc kib
	shift
	mountpoint -q "$MNT" && umount "$MNT"
	mount -t tmpfs -o size="$size",mode=0750 traceaf-test "$MNT" ||
		fail "cannot mount a tmpfs on $MNT (root needed)"
	OUT=$MNT/out

	start_bg "$TMP/workload.log" "$BIN" -n "$N"
	wpid=$BG_PID
	wait_for_line "$TMP/workload.log" '^ready' 20 || fail "workload did not start"

	start_bg "$TMP/tracer.log" "$TRACER" -p "$wpid" -o "$OUT" "$@"
	tpid=$BG_PID
	wait_for_line "$TMP/tracer.log" 'attached' 60 ||
		fail "tracer did not attach: $(cat "$TMP/tracer.log")"

	kill -USR1 "$wpid"
	wait_exit "$wpid" 600
	wrc=$?
	[ $wrc -eq 0 ] || fail "$size $*: workload exited with $wrc: $(tail -n 5 "$TMP/workload.log")"
	grep -q "^done nodes=$N bytes=0 mallocs=" "$TMP/workload.log" ||
		fail "$size $*: workload output changed: $(cat "$TMP/workload.log")"

	wait_exit "$tpid" 60
	trc=$?
	[ $trc -ne 124 ] || fail "$size $*: tracer did not exit after the workload: $(tail -n 20 "$TMP/tracer.log")"
	grep -q 'No space left on device' "$TMP/tracer.log" ||
		fail "$size $*: tracer did not report the full disk: $(cat "$TMP/tracer.log")"
	if [ -n "$WANT_EXIT" ]; then
		[ $trc -eq "$WANT_EXIT" ] || fail "tracer exited with $trc, want $WANT_EXIT: $(tail -n 20 "$TMP/tracer.log")"
	else
		[ $trc -eq 0 ] || [ $trc -eq 1 ] || fail "$size $*: tracer exited with $trc: $(tail -n 20 "$TMP/tracer.log")"
	fi
	grep -q 'done: ' "$TMP/tracer.log" || fail "$size $*: no summary: $(cat "$TMP/tracer.log")"

	used=$(df -k --output=used "$MNT" | tail -n 1 | tr -d ' ')
	files=("$OUT"/*.trace)
	[ -f "${files[0]}" ] || fail "$size $*: no trace file left: $(ls -la "$OUT"; cat "$TMP/tracer.log")"
	for f in "${files[@]}"; do
		for tc in "$TC123" "$TC127"; do
			"$tc" "$f" >"$TMP/check.out" 2>&1 ||
				fail "$size $*: $(basename "$tc") rejects $(basename "$f") ($(stat -c %s "$f") bytes): $(grep -m1 -E '^error|panic' "$TMP/check.out")"
			[ "$(kv "$TMP/check.out" valid)" = 1 ] ||
				fail "$size $*: $(basename "$tc"): $(basename "$f") not valid"
		done
	done
	case $size in *m) kib=$(( ${size%m} * 1024 )) ;; *) kib=0 ;; esac
	[ "$used" -ge $((kib / 2)) ] ||
		fail "$size $*: the files kept fill $used KiB of the $kib KiB disk, want at least half: $(ls -la "$OUT")"
	SUMMARY+="; $size disk, ${*:-defaults}: ${#files[@]} valid file(s) in $used KiB, $(sed -n 's/.* in \([0-9]*\) generations.*/\1/p' "$TMP/tracer.log") generations, tracer exit $trc"
	rm -rf "$OUT"
}

SUMMARY=""
one_case 1m -g 20ms --rotate-size 300K
one_case 8m -g 200ms
one_case 8m
pass "workload unchanged in each case$SUMMARY; $(grep -m1 'No space left on device' "$TMP/tracer.log")"
