#!/bin/bash
# test_signal_actions - what SIGUSR1, SIGUSR2, SIGPIPE and SIGHUP do to a
# running tracer (README "Signals"); none of them may end it with a file
# unfinished.
#
# -p: knownalloc (Go $VER, default 1.27) allocating main.Warm non-stop
# (-busy) is traced with -g 250ms.  Then:
#  - SIGUSR1, twice: each time the tracer says so and a new file appears
#    (3 files in all); the files it ended are complete at once: valid with
#    Go 1.23's and 1.27's parsers while the tracer still runs, and never
#    written again;
#  - SIGUSR2: one "status:" totals line and one "status: PID <pid>" line;
#  - SIGPIPE: ignored, the tracer keeps running;
#  - SIGHUP: the tracer stops as on SIGTERM: exit 0, "done:" summary,
#    every file valid; the target runs on, and finishes normally when
#    told to.
# -- CMD: the same knownalloc started by the tracer.  SIGUSR1 and SIGUSR2
# are the tracer's own (knownalloc starts its phase on SIGUSR1: it must
# not); SIGHUP is passed on to the program (which dies of it: exit 129),
# the tracer then exits with that status and leaves valid files.
source "$(dirname "$0")/lib/lib.sh"
VER=${VER:-1.27}

[ -x "$TRACER" ] || fail "tracer not built: $TRACER"
BIN=$(workload knownalloc "$VER") || exit 1
TC123=$(tracecheck 1.23) || exit 1
TC127=$(tracecheck 1.27) || exit 1

# nfiles DIR -> number of trace files in DIR
nfiles() {
	local f n=0
	for f in "$1"/*.trace; do
		[ -f "$f" ] && n=$((n + 1))
	done
	echo $n
}

# wait_files DIR N TIMEOUT_S: until DIR holds N trace files
wait_files() {
	local t=$(($3 * 10))
	while [ $t -gt 0 ]; do
		[ "$(nfiles "$1")" -ge "$2" ] && return 0
		sleep 0.1
		t=$((t - 1))
	done
	return 1
}

# wait_count FILE REGEX N TIMEOUT_S: until FILE has N lines matching REGEX
wait_count() {
	local t=$(($4 * 10))
	while [ $t -gt 0 ]; do
		[ "$(grep -cE "$2" "$1")" -ge "$3" ] && return 0
		sleep 0.1
		t=$((t - 1))
	done
	return 1
}

# ---- -p PID ----------------------------------------------------------
D=$TMP/pid
mkdir -p "$D"
start_bg "$D/work.log" "$BIN" -n 1000 -busy
WPID=$BG_PID
wait_for_line "$D/work.log" '^ready' 20 || fail "workload did not start"
start_bg "$D/tracer.log" "$TRACER" -p "$WPID" -o "$D/out" -g 250ms
TPID=$BG_PID
wait_for_line "$D/tracer.log" 'attached' 60 || fail "tracer did not attach: $(cat "$D/tracer.log")"
wait_files "$D/out" 1 10 || fail "no first file: $(cat "$D/tracer.log")"

for n in 2 3; do
	kill -USR1 "$TPID"
	wait_count "$D/tracer.log" 'SIGUSR1: ' $((n - 1)) 10 ||
		fail "no word on SIGUSR1 number $((n - 1)): $(tail -n 3 "$D/tracer.log")"
	wait_files "$D/out" "$n" 10 ||
		fail "SIGUSR1 number $((n - 1)): $(nfiles "$D/out") files, want $n: $(tail -n 3 "$D/tracer.log")"
	kill -0 "$TPID" 2>/dev/null || fail "tracer died of SIGUSR1: $(tail -n 3 "$D/tracer.log")"
done
# The ended files are complete now, while the tracer runs.
ended=("$D"/out/*.trace)
ended=("${ended[@]:0:2}")
check_files "$D/check-early" "${ended[@]}"
sizes=$(stat -c %s "${ended[@]}" | tr '\n' ' ')

kill -USR2 "$TPID"
wait_for_line "$D/tracer.log" "^traceaf-bpf: status: PID $WPID \(" 10 ||
	fail "SIGUSR2: no status line for PID $WPID: $(tail -n 3 "$D/tracer.log")"
grep -qE '^traceaf-bpf: status: [0-9]+ allocations, ' "$D/tracer.log" ||
	fail "SIGUSR2: no status totals: $(tail -n 3 "$D/tracer.log")"

kill -PIPE "$TPID"
sleep 0.5
kill -0 "$TPID" 2>/dev/null || fail "tracer died of SIGPIPE"

kill -HUP "$TPID"
wait_exit "$TPID" 60
rc=$?
[ $rc -eq 0 ] || fail "tracer exited with $rc after SIGHUP: $(tail -n 5 "$D/tracer.log")"
grep -q '^traceaf-bpf: done: ' "$D/tracer.log" || fail "no 'done:' after SIGHUP: $(tail -n 3 "$D/tracer.log")"
[ "$(stat -c %s "${ended[@]}" | tr '\n' ' ')" = "$sizes" ] ||
	fail "files ended by SIGUSR1 were written again: $sizes -> $(stat -c %s "${ended[@]}" | tr '\n' ' ')"
files=("$D"/out/*.trace)
[ ${#files[@]} -ge 3 ] || fail "${#files[@]} files after SIGHUP, want >= 3"
check_files "$D/check" "${files[@]}"
warm=0
for f in "${files[@]}"; do
	w=$(awk '$1 == "type" && $2 == "main.Warm" && $4 == "allocs" { print $5; exit }' "$D/check/$(basename "$f").tc127")
	warm=$((warm + ${w:-0}))
done
[ $warm -gt 0 ] || fail "no main.Warm allocations in the files"
kill -0 "$WPID" 2>/dev/null || fail "the target died with the tracer"
kill -USR1 "$WPID"
wait_exit "$WPID" 60
rc=$?
[ $rc -eq 0 ] && grep -q '^done nodes=1000 ' "$D/work.log" ||
	fail "target after the tracer: exit $rc, $(tail -n 2 "$D/work.log")"
pid_summary="-p: 2 x SIGUSR1 -> ${#files[@]} files, SIGUSR2 status, SIGPIPE ignored, SIGHUP exit 0, $warm main.Warm"

# ---- -- CMD ----------------------------------------------------------
D=$TMP/cmd
mkdir -p "$D"
start_bg "$D/tracer.log" "$TRACER" -o "$D/out" -g 250ms -- "$BIN" -n 1000 -busy
TPID=$BG_PID
wait_for_line "$D/tracer.log" '^ready' 60 || fail "-- CMD: program did not start: $(cat "$D/tracer.log")"
WPID=$(sed -nE 's/^ready ([0-9]+)$/\1/p' "$D/tracer.log")
wait_files "$D/out" 1 10 || fail "-- CMD: no first file: $(cat "$D/tracer.log")"
kill -USR1 "$TPID"
wait_files "$D/out" 2 10 || fail "-- CMD: SIGUSR1 made no new file: $(tail -n 3 "$D/tracer.log")"
kill -USR2 "$TPID"
wait_for_line "$D/tracer.log" "^traceaf-bpf: status: PID $WPID \(" 10 ||
	fail "-- CMD: SIGUSR2: no status line: $(tail -n 3 "$D/tracer.log")"
grep -q '^done ' "$D/tracer.log" && fail "-- CMD: SIGUSR1 reached the program"
kill -0 "$WPID" 2>/dev/null || fail "-- CMD: the program died: $(tail -n 3 "$D/tracer.log")"
kill -HUP "$TPID"
wait_exit "$TPID" 60
rc=$?
[ $rc -eq 129 ] || fail "-- CMD: tracer exited with $rc after SIGHUP, want the program's 129: $(tail -n 5 "$D/tracer.log")"
kill -0 "$WPID" 2>/dev/null && fail "-- CMD: SIGHUP did not reach the program"
files=("$D"/out/*.trace)
check_files "$D/check" "${files[@]}"
pass "$pid_summary; -- CMD: SIGUSR1 -> ${#files[@]} files and SIGUSR2 kept from the program, SIGHUP passed on (exit 129)"
