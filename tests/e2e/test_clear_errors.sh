#!/bin/bash
# Bad input gives one clear line on stderr, a non-zero exit, and leaves no
# BPF program loaded: a nonexistent PID, a process that is not Go, a run
# without root, bad usage.
source "$(dirname "$0")/lib/lib.sh"
[ -x "$TRACER" ] || fail "tracer not built: $TRACER"

our_progs() {
	bpftool prog list 2>/dev/null | grep -cE 'name (alloc_enter|alloc_exit)'
}
before=$(our_progs)

# expect NAME EXIT REGEX CMD...: exit status EXIT, exactly one stderr line matching REGEX
expect() {
	local name=$1 want=$2 re=$3 rc lines
	shift 3
	"$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ $rc -eq "$want" ] || fail "$name: exit $rc, want $want; stderr: $(cat "$TMP/err")"
	lines=$(wc -l <"$TMP/err")
	[ "$lines" -eq 1 ] || fail "$name: $lines lines on stderr, want 1: $(cat "$TMP/err")"
	grep -qE "$re" "$TMP/err" || fail "$name: stderr '$(cat "$TMP/err")' does not match /$re/"
	[ "$(our_progs)" -eq "$before" ] || fail "$name: BPF programs left loaded"
}

# A PID nobody uses: above every live PID, below pid_max.
max=$(cat /proc/sys/kernel/pid_max)
pid=$((max - 7))
while [ -d /proc/$pid ]; do pid=$((pid - 1)); done
expect nonexistent_pid 1 "no such process: PID $pid" "$TRACER" -p "$pid"

sleep 60 &
SLEEP=$!
BG_PIDS+=("$SLEEP")
expect not_go 1 "PID $SLEEP \\(sleep\\) is not a Go program" "$TRACER" -p "$SLEEP"

expect not_root 1 "must run as root" \
	setpriv --reuid=65534 --regid=65534 --clear-groups "$TRACER" -p "$SLEEP"

expect no_target 2 "no target" "$TRACER"
expect bad_option 2 "unknown or incomplete option" "$TRACER" --bogus
expect bad_duration 2 "invalid duration" "$TRACER" -p 1 --duration 5parsecs

"$TRACER" --help >"$TMP/help" 2>&1 || fail "--help exits non-zero"
grep -q '^SYNOPSIS' "$TMP/help" && grep -q '^OVERHEAD' "$TMP/help" ||
	fail "--help lacks man-page sections"
"$TRACER" --version | grep -qE '^traceaf-bpf [0-9]+\.[0-9]+' || fail "--version"
pass
