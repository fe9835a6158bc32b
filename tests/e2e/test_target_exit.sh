#!/bin/bash
# test_target_exit - the target exits mid-trace: the tracer notices,
# finalizes its files and exits 0 within $MAX_EXIT_S seconds (default 5).
#
# Cases (fullwork -scale $SCALE, default 0.5, traced with -g 250ms from
# before its phase; no --duration, so only the target's exit stops it):
#  - exit127 / exit123: fullwork built by Go 1.27 (56 probes) / 1.23 (11
#    probes) ends its phase and exits 0 by itself;
#  - kill127: fullwork (Go 1.27) is killed with SIGKILL $MID s
#    into its phase (default 0.4), in the middle of allocating.
# Each: the tracer prints "PID N exited", exits 0 within MAX_EXIT_S of the
# target's death, every file is valid with Go 1.23's and Go 1.27's
# tracecheck and replays below 0.1% per ID family.
# History: with one perf-event uprobe per site, detaching cost 0.1-0.4 s a
# site (an RCU grace period each), so Go 1.27's 56 sites took 6-23 s and
# this test failed; uprobe_multi links (one per BPF program) brought it
# to well under a second.
source "$(dirname "$0")/lib/lib.sh"
export BUILD
SCALE=${SCALE:-0.5}
MID=${MID:-0.4}
MAX_EXIT_S=${MAX_EXIT_S:-5}

[ -x "$TRACER" ] || fail "tracer not built: $TRACER"
TC123=$(tracecheck 1.23) || exit 1
TC127=$(tracecheck 1.27) || exit 1

now() { date +%s.%N; }
results=()
slow=()

# run_case NAME VER KILL(0|1)
run_case() {
	local name=$1 ver=$2 kill=$3 d=$TMP/$1 bin wpid tpid rc t0 lat files f r
	bin=$(workload fullwork "$ver") || exit 1
	mkdir -p "$d"
	start_bg "$d/work.log" "$bin" -scale "$SCALE"
	wpid=$BG_PID
	wait_for_line "$d/work.log" '^ready' 20 || fail "$name: workload did not start"
	start_bg "$d/tracer.log" "$TRACER" -p "$wpid" -o "$d/out" -g 250ms
	tpid=$BG_PID
	wait_for_line "$d/tracer.log" 'attached' 60 || fail "$name: tracer did not attach: $(cat "$d/tracer.log")"
	kill -USR1 "$wpid"
	if [ "$kill" = 1 ]; then
		sleep "$MID"
		kill -0 "$wpid" 2>/dev/null || fail "$name: fullwork finished before SIGKILL (raise SCALE)"
		exec 3>&2 2>/dev/null # no "Killed" job notice from bash
		kill -KILL "$wpid"
	fi
	# Poll tightly: the target's death is the start of the clock.
	while kill -0 "$wpid" 2>/dev/null && [ -z "$(ps -o stat= -p "$wpid" | grep Z)" ]; do
		sleep 0.02
	done
	t0=$(now)
	wait "$wpid"
	rc=$?
	[ "$kill" = 1 ] && exec 2>&3 3>&-
	if [ "$kill" = 1 ]; then
		[ $rc -eq 137 ] || fail "$name: fullwork exit status $rc, want 137 (killed)"
	else
		[ $rc -eq 0 ] || fail "$name: fullwork exited with $rc: $(tail -n 5 "$d/work.log")"
		grep -q '^done nodes=' "$d/work.log" || fail "$name: fullwork output: $(cat "$d/work.log")"
	fi
	wait_exit "$tpid" 120
	rc=$?
	lat=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
	[ $rc -ne 124 ] || fail "$name: tracer still running 120 s after the target's exit"
	[ $rc -eq 0 ] || fail "$name: tracer exited with $rc: $(tail -n 5 "$d/tracer.log")"
	grep -q "PID $wpid exited" "$d/tracer.log" || fail "$name: no 'PID $wpid exited' line: $(cat "$d/tracer.log")"
	files=("$d"/out/*.trace)
	[ -f "${files[0]}" ] || fail "$name: no trace files: $(cat "$d/tracer.log")"
	check_files "$d/check" "${files[@]}"
	for f in "${files[@]}"; do
		r=$(replay_check "$d/check/$(basename "$f").tc127" 0.1) ||
			fail "$name: replay of $(basename "$f"):$r (want < 0.1%)"
	done
	results+=("$name: tracer exit 0 ${lat}s after the target, ${#files[@]} file(s) valid")
	awk -v l="$lat" -v m="$MAX_EXIT_S" 'BEGIN { exit !(l > m) }' &&
		slow+=("$name ${lat}s ($(sed -n 's/.*: \([0-9]* probes on [0-9]* functions\).*/\1/p' "$d/tracer.log"))")
}

run_case exit127 1.27 0
run_case exit123 1.23 0
run_case kill127 1.27 1

[ ${#slow[@]} -eq 0 ] ||
	fail "tracer took longer than ${MAX_EXIT_S}s to exit after the target: ${slow[*]}; all: ${results[*]}"
printf '  %s\n' "${results[@]}"
pass "${results[*]}"
