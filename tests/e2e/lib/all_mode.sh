#!/bin/bash
# test_all_mode - `traceaf-bpf --all` traces every selected Go process on
# the host, each in its own files, including processes started later.
#
# Ten knownalloc processes (waiting for SIGUSR1) run from copies in
# $TMP/bin, built by Go 1.21 ... 1.27 in every flavour (plain, stripped,
# PIE, stripped PIE); two executables run twice.  Also running: a copy of
# knownalloc in $TMP/bin/excl (matched by --include, then --exclude) and a
# copy of /bin/sleep in $TMP/bin (matched by --include, not Go).  The
# tracer starts with --all --include "$TMP/bin/*" --exclude
# "$TMP/bin/excl/*" (so nobody else's Go process on this host is touched)
# and must report "attached to 10 Go processes (8 executables)".
#
# Then, after "attached", three more start (seen at exec):
#  - late_old: an executable already attached (ka25); SIGUSR1 as soon as
#    it prints "ready", without waiting for the tracer: nothing may be
#    missed (its records queue behind its exec record);
#  - late_new: a NEW executable (Go 1.27 stripped, 56 probes); SIGUSR1
#    only after the tracer printed "tracing PID <pid>": nothing may be
#    missed from then on;
#  - late_race: a NEW executable (Go 1.26 PIE); SIGUSR1 as soon as it
#    prints "ready", racing the tracer's attach: only observed (the
#    count, or "not traced" if it was over before the tracer got to it,
#    and whether "tracing PID" came before "ready"), not asserted; its
#    files, if any, must still validate.
# Every process allocates N main.Node (default 20000) and exits.
#
# Checks: each traced process has files named <comm>-<pid>-<time>-<seq>
# .trace, finalized when it exited (checked while the tracer still runs),
# valid with Go 1.23's and Go 1.27's parsers, counting >= 99.9% (and at most
# 100%) of N main.Node; no file belongs to any other PID (excluded
# process, sleep); the tracer keeps running after all of them exited, and
# SIGINT stops it with exit status 0 within STOP_S seconds (default 150:
# detaching costs ~0.1-0.5 s per uprobe, ~200 here).
source "$(dirname "$0")/lib.sh"
TEST_NAME=test_all_mode
N=${N:-20000}
STOP_S=${STOP_S:-150}

[ -x "$TRACER" ] || fail "tracer not built: $TRACER"
TC123=$(tracecheck 1.23) || exit 1
TC127=$(tracecheck 1.27) || exit 1

B=$TMP/bin
OUT=$TMP/out
mkdir -p "$B/excl" "$B/late"
# copy NAME VERSION FLAVOUR DIR: a private copy (own inode) of knownalloc
copy() {
	local src
	src=$(workload knownalloc "$2" "$3") || { echo "$src"; exit 1; }
	cp "$src" "$4/$1" || fail "cannot copy $src"
}
copy ka21 1.21 "" "$B"
copy ka22s 1.22 -stripped "$B"
copy ka23p 1.23 -pie "$B"
copy ka23 1.23 "" "$B"
copy ka24sp 1.24 -stripped-pie "$B"
copy ka25 1.25 "" "$B"
copy ka26s 1.26 -stripped "$B"
copy ka27p 1.27 -pie "$B"
copy kx25 1.25 "" "$B/excl"
copy kn27s 1.27 -stripped "$B/late"
copy kr26p 1.26 -pie "$B/late"
cp /bin/sleep "$B/sleepy" || fail "cannot copy /bin/sleep"

declare -A PID_OF NAME_OF
# run KEY PATH: start a knownalloc, wait for "ready"
run() {
	local key=$1 path=$2
	start_bg "$TMP/$key.log" "$path" -n "$N"
	PID_OF[$key]=$BG_PID
	NAME_OF[$BG_PID]=$key
}
EARLY="ka21 ka22s ka23p ka23 ka24sp ka25 ka26s ka27p ka27p_2 ka21_2"
for key in $EARLY; do
	run "$key" "$B/${key%_2}"
done
run excluded "$B/excl/kx25"
for key in $EARLY excluded; do
	wait_for_line "$TMP/$key.log" '^ready' 30 || fail "$key did not start: $(cat "$TMP/$key.log")"
done
start_bg "$TMP/sleepy.log" "$B/sleepy" 600
SLEEPY=$BG_PID

t0=$(date +%s.%N)
start_bg "$TMP/tracer.log" "$TRACER" -v --all --include "$B/*" --exclude "$B/excl/*" -o "$OUT" -g 250ms
TPID=$BG_PID
wait_for_line "$TMP/tracer.log" 'attached' 120 ||
	fail "tracer did not attach: $(cat "$TMP/tracer.log")"
attach_s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
# Let the probes settle a moment before the counted phase.
sleep "${SETTLE:-1}"
grep -q 'attached to 10 Go processes (8 executables)' "$TMP/tracer.log" ||
	fail "want 'attached to 10 Go processes (8 executables)': $(grep attached "$TMP/tracer.log")"
for key in $EARLY; do
	grep -q "tracing PID ${PID_OF[$key]} " "$TMP/tracer.log" ||
		fail "no 'tracing PID ${PID_OF[$key]}' ($key): $(cat "$TMP/tracer.log")"
done

# late_old: executable already attached; no waiting for the tracer.
run late_old "$B/ka25"
wait_for_line "$TMP/late_old.log" '^ready' 30 || fail "late_old did not start"
kill -USR1 "${PID_OF[late_old]}"
# late_race: new executable; no waiting for the tracer either.
run late_race "$B/late/kr26p"
wait_for_line "$TMP/late_race.log" '^ready' 30 || fail "late_race did not start"
kill -USR1 "${PID_OF[late_race]}"
race_order=$(grep -c "tracing PID ${PID_OF[late_race]} " "$TMP/tracer.log")
# late_new: new executable; SIGUSR1 once the tracer says it traces it.
t1=$(date +%s.%N)
run late_new "$B/late/kn27s"
wait_for_line "$TMP/late_new.log" '^ready' 30 || fail "late_new did not start"
wait_for_line "$TMP/tracer.log" "tracing PID ${PID_OF[late_new]} " 60 ||
	fail "tracer did not pick up late_new (PID ${PID_OF[late_new]}): $(tail -n 5 "$TMP/tracer.log")"
new_s=$(awk -v a="$t1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')

for key in $EARLY late_new excluded; do
	kill -USR1 "${PID_OF[$key]}"
done
ALL="$EARLY late_old late_new late_race"
for key in $ALL excluded; do
	wait_exit "${PID_OF[$key]}" 180
	rc=$?
	[ $rc -eq 0 ] || fail "$key exited with $rc: $(tail -n 3 "$TMP/$key.log")"
	grep -q "^done nodes=$N " "$TMP/$key.log" || fail "$key output: $(cat "$TMP/$key.log")"
done

# late_race may have been over before the tracer got to it (it allocates
# in ~1 ms when not probed): then it is only reported.
race_count=""
if ! grep -q "tracing PID ${PID_OF[late_race]} " "$TMP/tracer.log"; then
	race_count="not traced ($(grep -E "PID ${PID_OF[late_race]}([^0-9]|$)" "$TMP/tracer.log" | sed 's/^traceaf-bpf: //' | head -n 2 | tr '\n' ' '))"
	ALL="$EARLY late_old late_new"
fi

# Files are finalized at each exit: the tracer says so and keeps running.
for key in $ALL; do
	wait_for_line "$TMP/tracer.log" "PID ${PID_OF[$key]} exited" 60 ||
		fail "tracer did not notice $key (PID ${PID_OF[$key]}) exit: $(tail -n 5 "$TMP/tracer.log")"
done
sleep 1
kill -0 "$TPID" 2>/dev/null || fail "tracer stopped after the processes exited: $(tail -n 5 "$TMP/tracer.log")"

ls "$OUT" >"$TMP/files.before"
details=""
obs=""
for key in $ALL; do
	pid=${PID_OF[$key]}
	case $key in late_old) comm=ka25 ;; late_new) comm=kn27s ;; late_race) comm=kr26p ;; *) comm=${key%_2} ;; esac
	files=("$OUT"/*-"$pid"-*.trace)
	[ -f "${files[0]}" ] || fail "$key (PID $pid): no trace files: $(ls "$OUT")"
	for f in "${files[@]}"; do
		[[ $(basename "$f") =~ ^$comm-$pid-[0-9]{8}T[0-9]{6}Z-[0-9]{6}\.trace$ ]] ||
			fail "$key: file name $(basename "$f"), want $comm-$pid-<time>-<seq>.trace"
	done
	res=$(node_check "${files[@]}") || fail "$key: $res"
	read -r c123 c127 bad <<<"$res"
	details="$details $key=$c127"
	[ "$bad" = 0 ] || details="$details(replay-bad=$bad)"
	# The tracer's own account: heap operations that did not fit its
	# shadow heap.  None where the heap was read (snapshot) or the process
	# was probed from exec; observed only for NEW executables seen at exec.
	inc=$(sed -nE "s/^traceaf-bpf: PID $pid: ([0-9]+) of ([0-9]+) heap operations did not fit.*/\1\/\2/p" "$TMP/tracer.log")
	exists=$("$TC127" "${files[0]}" | awk '$1 == "ev" && ($2 == "Span" || $2 == "HeapObject" || $2 == "GoroutineStack") { s = s $2 "=" $3 "," } END { sub(/,$/, "", s); print s }')
	case $key in
	late_new | late_race)
		obs="$obs $key: inconsistent ${inc:-0}, exists $exists;" ;;
	*)
		[ -z "$inc" ] || fail "$key (PID $pid): $inc heap operations did not fit the shadow heap"
		[ "$key" = late_old ] && obs="$obs late_old: exists $exists;" ;;
	esac
	[ "$key" = late_race ] && { race_count="$c127/$N"; continue; }
	for c in "$c123" "$c127"; do
		enough "$c" "$N" 999 ||
			fail "$key (PID $pid, ${#files[@]} files): $c main.Node allocations (1.23: $c123, 1.27: $c127), want >= 99.9% of $N and <= $N; tracer: $(grep -E "PID $pid[: ]|discarded|dropped [0-9]|lost" "$TMP/tracer.log" | tr '\n' ' '); sidecar: $(grep -hE '"(records_received|records_before_snapshot)"' "$OUT"/*-"$pid"-*.summary.json | tr -d '\n ')"
	done
done

# Nothing for anyone else.
for f in "$OUT"/*.trace; do
	pid=$(basename "$f" | sed -E 's/^.*-([0-9]+)-[0-9]{8}T[0-9]{6}Z-[0-9]{6}\.trace$/\1/')
	case " $ALL " in
	*" ${NAME_OF[$pid]:-none} "*) ;;
	*) fail "unexpected file $(basename "$f") (PID $pid: excluded=${PID_OF[excluded]}, sleep=$SLEEPY)" ;;
	esac
done
grep -E "PID (${PID_OF[excluded]}|$SLEEPY)[ )]" "$TMP/tracer.log" &&
	fail "the tracer mentions the excluded process or sleep"
kill -0 "$SLEEPY" 2>/dev/null || fail "sleep died"

t2=$(date +%s.%N)
kill -INT "$TPID"
wait_exit "$TPID" "$STOP_S"
trc=$?
stop_s=$(awk -v a="$t2" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
[ $trc -eq 0 ] || fail "tracer exited with $trc after SIGINT ($stop_s s): $(tail -n 5 "$TMP/tracer.log")"
grep -q '^traceaf-bpf: done: ' "$TMP/tracer.log" || fail "no 'done:' summary: $(tail -n 3 "$TMP/tracer.log")"
ls "$OUT" | cmp -s - "$TMP/files.before" || fail "files changed after SIGINT: $(ls "$OUT" | diff "$TMP/files.before" - | head -n 5)"
pass "13 processes (Go 1.21-1.27, 10 executables) main.Node of $N:$details; attach ${attach_s}s, new executable traced ${new_s}s after start; late_race (new exe, no wait): $race_count, 'tracing' before 'ready': $race_order; SIGINT stop ${stop_s}s; observed:$obs"
