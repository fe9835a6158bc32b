#!/bin/bash
# test_signals - stopping the tracer mid-trace never hurts the target.
#
# fullwork -scale $SCALE (default 3; ~4 s untraced, longer traced), Go
# $VER (default 1.27: the most probes), traced with -g 250ms; $MID seconds
# (default 2) into its phase the tracer gets:
#  - SIGINT, then SIGTERM: the tracer exits 0 within $STOP_S s (default 60),
#    every file is valid with Go 1.23's and 1.27's tracecheck and replays
#    below 0.1% per ID family; fullwork finishes with exit 0 and its normal
#    output ("ready PID", then a done line whose deterministic counts equal
#    an untraced run's; nothing on stderr);
#  - SIGKILL: fullwork finishes the same way; every file but the newest is
#    valid; the newest must be valid too, unless the kill cut it inside its
#    last generation (batches stream to the file as they fill, so it then
#    ends inside a write or without that generation's closing frequency
#    batch): then its whole generations (those before its last) must be
#    valid (reported in the summary).
# Each case records whether fullwork was still running when the tracer had
# exited (it normally is: the phase needs ~10 s with probes).
# Observed (2026-12-02, this VM, Go 1.27, 3 runs): the tracer exits 6.4-10.3 s
# after SIGINT/SIGTERM and is gone 7.1-7.2 s after SIGKILL (its 56 uprobe
# links are closed one by one, ~0.1-0.4 s each); fullwork then finishes
# normally every time (before the tracer is gone: its rest runs fast).
# FAILS so far: after SIGINT/SIGTERM the file replays with 33k-166k heap
# alloc_of_live (10-40% of heap events): the last generation spans the
# whole detach and holds allocations recorded by the still-attached alloc
# probes but no frees (the sweep probe is detached earlier); e.g. the last
# of 9 generations covered 5.3 s with 171487 HeapObjectAlloc, 0 frees.
source "$(dirname "$0")/lib/lib.sh"
export BUILD
VER=${VER:-1.27}
SCALE=${SCALE:-3}
MID=${MID:-2}
STOP_S=${STOP_S:-60}

[ -x "$TRACER" ] || fail "tracer not built: $TRACER"
BIN=$(workload fullwork "$VER") || exit 1
TC123=$(tracecheck 1.23) || exit 1
TC127=$(tracecheck 1.27) || exit 1

# The deterministic part of the done line (counts of what the phase did).
KEYS='nodes nodes_kept bytes5 bytes12 bytes100 bytes1000 bytes4000 big large_noscan large_scan large_kept goroutines depth frame gcs'
det() {
	local line k out=''
	line=$(grep '^done ' "$1" | tail -n 1)
	for k in $KEYS; do
		out="$out $(tr ' ' '\n' <<<"$line" | grep "^$k=")"
	done
	echo "$out"
}

"$BIN" -scale "$SCALE" -wait=false >"$TMP/ref.out" 2>"$TMP/ref.err" ||
	fail "untraced fullwork failed: $(cat "$TMP/ref.err")"
REF=$(det "$TMP/ref.out")

# check_target DIR: fullwork exited 0 with its normal output.
check_target() {
	local d=$1 rc
	wait_exit "$WPID" 300
	rc=$?
	[ $rc -eq 0 ] || fail "$CASE: fullwork exited with $rc: $(tail -n 5 "$d/work.err")"
	[ ! -s "$d/work.err" ] || fail "$CASE: fullwork wrote to stderr: $(head -n 5 "$d/work.err")"
	[ "$(wc -l <"$d/work.out")" -eq 2 ] && grep -qx "ready $WPID" "$d/work.out" ||
		fail "$CASE: fullwork output: $(cat "$d/work.out")"
	[ "$(det "$d/work.out")" = "$REF" ] ||
		fail "$CASE: fullwork's counts changed: '$(det "$d/work.out")', untraced '$REF'"
}

# run_case NAME SIGNAL: sets WPID, TPID, D; leaves the tracer signalled.
run_case() {
	CASE=$1
	D=$TMP/$1
	mkdir -p "$D"
	"$BIN" -scale "$SCALE" >"$D/work.out" 2>"$D/work.err" &
	WPID=$!
	BG_PIDS+=("$WPID")
	wait_for_line "$D/work.out" '^ready' 20 || fail "$CASE: workload did not start"
	start_bg "$D/tracer.log" "$TRACER" -p "$WPID" -o "$D/out" -g 250ms
	TPID=$BG_PID
	wait_for_line "$D/tracer.log" 'attached' 60 || fail "$CASE: tracer did not attach: $(cat "$D/tracer.log")"
	kill -USR1 "$WPID"
	sleep "$MID"
	kill -0 "$WPID" 2>/dev/null || fail "$CASE: fullwork finished before the signal (raise SCALE)"
	T0=$(date +%s.%N)
	kill -"$2" "$TPID"
}

summary=()
problems=() # failures that do not stop the other cases
for sig in INT TERM; do
	run_case "sig$sig" "$sig"
	wait_exit "$TPID" "$STOP_S"
	rc=$?
	t=$(awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	[ $rc -ne 124 ] || fail "$CASE: tracer still running $STOP_S s after SIG$sig"
	[ $rc -eq 0 ] || fail "$CASE: tracer exited with $rc after SIG$sig: $(tail -n 5 "$D/tracer.log")"
	alive=no
	kill -0 "$WPID" 2>/dev/null && alive=yes
	files=("$D"/out/*.trace)
	[ -f "${files[0]}" ] || fail "$CASE: no trace files: $(cat "$D/tracer.log")"
	check_files "$D/check" "${files[@]}"
	for f in "${files[@]}"; do
		r=$(replay_check "$D/check/$(basename "$f").tc127" 0.1) ||
			problems+=("$CASE: replay of $(basename "$f"):$r (alloc_of_live + free_of_unknown / events, want < 0.1%)")
	done
	check_target "$D"
	summary+=("SIG$sig: tracer exit 0 in ${t}s, ${#files[@]} file(s) valid, target alive after: $alive")
done

exec 3>&2 2>/dev/null # no "Killed" job notice from bash
run_case sigKILL KILL
# The kernel closes the tracer's uprobe links at exit, one grace period each.
wait_exit "$TPID" "$STOP_S"
rc=$?
exec 2>&3 3>&-
t=$(awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
[ $rc -eq 137 ] || fail "$CASE: tracer exit status $rc ${t}s after SIGKILL, want 137"
alive=no
kill -0 "$WPID" 2>/dev/null && alive=yes
check_target "$D"
files=("$D"/out/*.trace)
[ -f "${files[0]}" ] || fail "$CASE: no trace files written in $MID s: $(cat "$D/tracer.log")"
note=
n=${#files[@]}
if [ "$n" -gt 1 ]; then
	check_files "$D/check" "${files[@]:0:n-1}"
fi
newest=${files[n - 1]}
mkdir -p "$D/check"
"$TC123" "$newest" >"$D/check/newest.tc123" 2>&1
"$TC127" "$newest" >"$D/check/newest.tc127" 2>&1
if [ "$(kv "$D/check/newest.tc123" valid)" != 1 ] || [ "$(kv "$D/check/newest.tc127" valid)" != 1 ]; then
	# Cut inside a write: its whole generations must still be valid.
	read -r off gens complete ended <<<"$(last_gen_offset "$newest")"
	sz=$(stat -c %s "$newest")
	# Batches stream as they fill: a kill between two leaves a file that
	# ends at a boundary, but not after its last generation's end.
	[ "$complete" = 0 ] || [ "$ended" = 0 ] ||
		fail "$CASE: newest file $(basename "$newest") ends with a whole generation but is invalid: $(grep -m1 ^error "$D/check/newest.tc127")"
	note=" (newest cut inside a generation: $sz bytes, $gens gen(s) begun"
	if [ "$gens" -gt 1 ]; then
		head -c "$off" "$newest" >"$D/whole.trace"
		check_files "$D/check" "$D/whole.trace"
		note="$note, the first $((gens - 1)) valid)"
	else
		note="$note)"
	fi
fi
summary+=("SIGKILL: tracer gone in ${t}s, $n file(s) valid$note, target alive after: $alive")

printf '  %s\n' "${summary[@]}"
[ ${#problems[@]} -eq 0 ] || fail "$(printf '%s; ' "${problems[@]}")"
pass "Go $VER: SIGINT, SIGTERM, SIGKILL mid-trace; fullwork finished normally each time"
