#!/bin/bash
# test_valgrind - the daemon under valgrind (memcheck) on two short traces
# of knownalloc (Go 1.27, $N Nodes), with rotation and --rotate-files so
# that every file path is taken:
#   1. the target exits (the session is closed when the exit is seen);
#   2. the tracer is stopped by SIGINT while the target still runs.
# Fails on any memcheck error or definitely/indirectly lost block.
# valgrind copes with BPF: it checks the bpf() commands it knows (map and
# program creation) and warns about the ones it does not (uprobe_multi
# links, pidfd_open: unchecked, not failed); libbpf's partly filled attr
# unions are suppressed (valgrind.supp).
source "$(dirname "$0")/lib/lib.sh"
N=${N:-20000}
command -v valgrind >/dev/null || fail "valgrind not installed"
[ -x "$TRACER" ] || fail "tracer not built: $TRACER"
BIN=$(workload knownalloc 1.27) || exit 1

VG=(valgrind --leak-check=full --show-leak-kinds=definite,indirect
    --errors-for-leak-kinds=definite,indirect --error-exitcode=99
    --track-origins=yes --suppressions="$ROOT/tests/e2e/lib/valgrind.supp")

# run NAME how: traces one workload; how = exit | sigint
run() {
	local name=$1 how=$2 wpid tpid rc
	start_bg "$TMP/$name.work" "$BIN" -n "$N"
	wpid=$BG_PID
	wait_for_line "$TMP/$name.work" '^ready' 20 || fail "$name: workload did not start"
	start_bg "$TMP/$name.tracer" "${VG[@]}" --log-file="$TMP/$name.vg" \
		"$TRACER" -p "$wpid" -o "$TMP/$name.out" -g 100ms \
		--rotate-size 64K --rotate-files 2
	tpid=$BG_PID
	wait_for_line "$TMP/$name.tracer" 'attached' 240 ||
		fail "$name: tracer did not attach: $(cat "$TMP/$name.tracer")"
	kill -USR1 "$wpid"
	if [ "$how" = sigint ]; then
		sleep 1
		kill -INT "$tpid"
	fi
	wait_exit "$tpid" 300
	rc=$?
	[ $rc -ne 99 ] || fail "$name: memcheck: $(grep -E 'ERROR SUMMARY|lost:' "$TMP/$name.vg" | tr '\n' ' ') $(grep -m1 -A12 -E 'Invalid|uninitialised|Syscall param|are definitely|are indirectly' "$TMP/$name.vg")"
	[ $rc -eq 0 ] || fail "$name: tracer exited with $rc: $(tail -n 5 "$TMP/$name.tracer")"
	grep -q 'ERROR SUMMARY: 0 errors' "$TMP/$name.vg" ||
		fail "$name: $(grep 'ERROR SUMMARY' "$TMP/$name.vg")"
	wait_exit "$wpid" 120
}
run exit exit
run sigint sigint
pass "no memcheck errors or leaks (target exit; SIGINT)"
