#!/bin/bash
# test_max_processes - `traceaf-bpf --all --max-processes 2` traces at most
# two processes at once; the others are reported on stderr and get no
# files.
#
# Three knownalloc processes (Go $VER, default 1.23, one copy in $TMP/bin)
# wait for SIGUSR1 when the tracer starts with --all --include "$TMP/bin/*"
# --max-processes 2: it must say "attached to 2 Go processes", report the
# third with "not tracing PID <pid>: --max-processes 2 reached" (exactly
# one of the three), and trace the other two.  A fourth, started while two
# are traced (seen at exec), is reported the same way.  All four allocate N
# (default 20000) main.Node and exit: the two traced have files valid with
# Go 1.23's and Go 1.27's parsers counting >= 99.9% of N, the two reported
# have none.  Once both traced processes have exited ("at once"), a fifth
# started later is traced, with >= 99.9% of N.  SIGINT: exit status 0,
# and the summary counts the records of the two reported processes (their
# executable is probed) as discarded: at least 2 N, never silently.
source "$(dirname "$0")/lib/lib.sh"
N=${N:-20000}
VER=${VER:-1.23}

[ -x "$TRACER" ] || fail "tracer not built: $TRACER"
TC123=$(tracecheck 1.23) || exit 1
TC127=$(tracecheck 1.27) || exit 1
B=$TMP/bin
OUT=$TMP/out
mkdir -p "$B"
src=$(workload knownalloc "$VER") || { echo "$src"; exit 1; }
cp "$src" "$B/km" || fail "cannot copy $src"

declare -A PID_OF
run() {
	start_bg "$TMP/$1.log" "$B/km" -n "$N"
	PID_OF[$1]=$BG_PID
	wait_for_line "$TMP/$1.log" '^ready' 30 || fail "$1 did not start: $(cat "$TMP/$1.log")"
}
# finish KEY...: SIGUSR1, then each must exit 0 after allocating
finish() {
	local k rc
	for k in "$@"; do kill -USR1 "${PID_OF[$k]}"; done
	for k in "$@"; do
		wait_exit "${PID_OF[$k]}" 120
		rc=$?
		[ $rc -eq 0 ] || fail "$k exited with $rc: $(tail -n 3 "$TMP/$k.log")"
		grep -q "^done nodes=$N " "$TMP/$k.log" || fail "$k output: $(cat "$TMP/$k.log")"
	done
}
# nodes KEY: its files must exist, validate and count >= 99.9% of N
nodes() {
	local pid=${PID_OF[$1]} files res c123 c127 bad
	files=("$OUT"/km-"$pid"-*.trace)
	[ -f "${files[0]}" ] || fail "$1 (PID $pid): no trace files: $(ls "$OUT" | tr '\n' ' ')"
	res=$(node_check "${files[@]}") || fail "$1 (PID $pid): $res"
	read -r c123 c127 bad <<<"$res"
	enough "$c123" "$N" 999 && enough "$c127" "$N" 999 ||
		fail "$1 (PID $pid): $c123 / $c127 main.Node allocations, want >= 99.9% of $N"
	echo "$c127"
}
# nofiles KEY: no file of any kind carries its PID
nofiles() {
	local pid=${PID_OF[$1]}
	! ls "$OUT" 2>/dev/null | grep -q -- "-$pid-" || fail "$1 (PID $pid) was not to be traced but has files: $(ls "$OUT" | grep -- "-$pid-")"
}

run a
run b
run c
start_bg "$TMP/tracer.log" "$TRACER" --all --include "$B/*" --max-processes 2 -o "$OUT" -g 250ms
TPID=$BG_PID
wait_for_line "$TMP/tracer.log" 'attached' 60 || fail "tracer did not attach: $(cat "$TMP/tracer.log")"
grep -q 'attached to 2 Go processes (1 executables)' "$TMP/tracer.log" ||
	fail "want 'attached to 2 Go processes (1 executables)': $(cat "$TMP/tracer.log")"
refused=$(sed -nE 's/^traceaf-bpf: not tracing PID ([0-9]+): --max-processes 2 reached$/\1/p' "$TMP/tracer.log")
[ "$(wc -w <<<"$refused")" = 1 ] || fail "want one 'not tracing PID N: --max-processes 2 reached' line: $(cat "$TMP/tracer.log")"
third="" traced=()
for k in a b c; do
	if [ "${PID_OF[$k]}" = "$refused" ]; then
		third=$k
	else
		grep -q "tracing PID ${PID_OF[$k]} " "$TMP/tracer.log" || fail "no 'tracing PID ${PID_OF[$k]}' ($k): $(cat "$TMP/tracer.log")"
		traced+=("$k")
	fi
done
[ -n "$third" ] || fail "the reported PID $refused is none of ours (${PID_OF[a]} ${PID_OF[b]} ${PID_OF[c]})"

# A fourth, seen at exec while two are traced.
run d
wait_for_line "$TMP/tracer.log" "not tracing PID ${PID_OF[d]}: --max-processes 2 reached" 30 ||
	fail "the fourth (PID ${PID_OF[d]}) was not reported: $(tail -n 3 "$TMP/tracer.log")"
grep -q "tracing PID ${PID_OF[d]} " "$TMP/tracer.log" && fail "the fourth (PID ${PID_OF[d]}) is traced"

finish a b c d
for k in "${traced[@]}"; do
	wait_for_line "$TMP/tracer.log" "PID ${PID_OF[$k]} exited" 60 || fail "tracer did not notice $k exit"
done
sleep 0.5
kill -0 "$TPID" 2>/dev/null || fail "tracer stopped: $(tail -n 3 "$TMP/tracer.log")"
c1=$(nodes "${traced[0]}") || exit 1
c2=$(nodes "${traced[1]}") || exit 1
nofiles "$third"
nofiles d

# Both slots are free again: a fifth is traced.
run e
wait_for_line "$TMP/tracer.log" "tracing PID ${PID_OF[e]} " 30 ||
	fail "the fifth (PID ${PID_OF[e]}), started with no process traced, was not traced: $(tail -n 3 "$TMP/tracer.log")"
finish e
wait_for_line "$TMP/tracer.log" "PID ${PID_OF[e]} exited" 60 || fail "tracer did not notice e exit"
c5=$(nodes e) || exit 1

kill -INT "$TPID"
wait_exit "$TPID" 60
trc=$?
[ $trc -eq 0 ] || fail "tracer exited with $trc after SIGINT: $(tail -n 3 "$TMP/tracer.log")"
n_refused=$(grep -c 'max-processes 2 reached' "$TMP/tracer.log")
[ "$n_refused" = 2 ] || fail "want 2 'max-processes 2 reached' lines, got $n_refused: $(grep 'max-processes' "$TMP/tracer.log")"
disc=$(sed -nE 's/^traceaf-bpf: discarded ([0-9]+) records of processes not traced.*/\1/p' "$TMP/tracer.log")
[ -n "$disc" ] && [ "$disc" -ge $((2 * N)) ] ||
	fail "want 'discarded >= $((2 * N)) records of processes not traced' (the two reported allocate $N each): $(tail -n 4 "$TMP/tracer.log")"
pass "Go $VER: traced ${traced[*]} ($c1, $c2 of $N main.Node); reported and no files: $third (at start, PID $refused) and d (at exec), $disc records discarded and counted; fifth after both exited traced ($c5/$N)"
