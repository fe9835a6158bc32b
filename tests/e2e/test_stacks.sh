#!/bin/bash
# --stacks end to end: knownalloc (Go 1.23 plain, Go 1.27 stripped PIE)
# allocates N main.Node values in main.newNode under the tracer with
# --stacks and rotation.  Every trace file must validate with Go 1.23's
# and 1.27's parsers (several files: main.Warm allocations fill them
# before the Nodes) and have a complete sidecar (no temporary left), and
# >= 99% of the Node allocations must have a stack whose innermost frame is
# main.newNode in main.go at the line marked "stacks-e2e" in the source
# (tests/e2e/lib/stacks_check.c reads traces and sidecars back).  Then the
# tracer is stopped by SIGTERM with --rotate-files 2: two files, two
# complete sidecars, main.Warm's stacks at main.newWarm.  Last, an
# allocation made inside inlined calls (tests/go/inlinecheck).
source "$(dirname "$0")/lib/lib.sh"
N=${N:-50000}

[ -x "$TRACER" ] || fail "tracer not built: $TRACER"
TC123=$(tracecheck 1.23) || exit 1
TC127=$(tracecheck 1.27) || exit 1
LINE=$(grep -n 'stacks-e2e: newNode' "$ROOT/tests/go/knownalloc/main.go" | cut -d: -f1)
[ -n "$LINE" ] || fail "no stacks-e2e marker in tests/go/knownalloc/main.go"

cc -std=gnu11 -O2 -Wall -Wextra -Werror -Wno-unused-parameter \
	-D_GNU_SOURCE -I"$ROOT/include" -I"$ROOT/user" "$ROOT/tests/e2e/lib/stacks_check.c" \
	"$ROOT/user/format/stack_sidecar.c" "$ROOT/user/format/trace_reader.c" "$ROOT/user/format/trace_events.c" \
	"$ROOT/user/util/u64_map.c" -o "$TMP/stacks_check" ||
	fail "cannot build stacks_check"

summary=""
for case in 1.23: 1.27:-stripped-pie; do
	ver=${case%%:*}
	flavour=${case#*:}
	BIN=$(workload knownalloc "$ver" "$flavour") || exit 1
	dir=$TMP/go$ver$flavour
	mkdir -p "$dir"

	# -busy: main.Warm allocations before the Nodes fill generations
	# and files ahead of them.
	start_bg "$dir/workload.log" "$BIN" -n "$N" -busy
	WPID=$BG_PID
	wait_for_line "$dir/workload.log" '^ready' 20 || fail "workload did not start"
	# Small files and generations: several sidecars, rotated with them.
	start_bg "$dir/tracer.log" "$TRACER" -p "$WPID" -o "$dir/out" \
		-g 100ms -r 128K --stacks
	TPID=$BG_PID
	wait_for_line "$dir/tracer.log" 'attached' 60 ||
		fail "go$ver$flavour: tracer did not attach: $(cat "$dir/tracer.log")"
	sleep 1
	kill -USR1 "$WPID"
	wait_exit "$WPID" 120 || fail "go$ver$flavour: workload failed"
	wait_exit "$TPID" 60
	trc=$?
	[ $trc -eq 0 ] || fail "go$ver$flavour: tracer exited with $trc: $(tail -n 5 "$dir/tracer.log")"
	grep -q 'allocations without stacks' "$dir/tracer.log" ||
		fail "go$ver$flavour: no --stacks report: $(cat "$dir/tracer.log")"

	files=("$dir"/out/*.trace)
	[ ${#files[@]} -ge 2 ] || fail "go$ver$flavour: expected rotated files, got ${#files[@]}"
	for f in "${files[@]}"; do
		[ -f "$f.stacks" ] || fail "go$ver$flavour: $(basename "$f") has no sidecar"
	done
	ls "$dir"/out/*.tmp >/dev/null 2>&1 &&
		fail "go$ver$flavour: temporary sidecar left: $(ls "$dir"/out/*.tmp)"
	check_files "$dir/tc" "${files[@]}"

	"$TMP/stacks_check" main.Node main.newNode main.go "$LINE" \
		"${files[@]}" >"$dir/check.out" 2>&1 ||
		fail "go$ver$flavour: stacks_check: $(cat "$dir/check.out")"
	allocs=$(kv "$dir/check.out" allocs)
	match=$(kv "$dir/check.out" match)
	[ "${allocs:-0}" -ge $((N * 99 / 100)) ] ||
		fail "go$ver$flavour: only ${allocs:-0} of $N Node allocations traced"
	[ $((match * 100)) -ge $((allocs * 99)) ] ||
		fail "go$ver$flavour: $match of $allocs Node stacks at main.newNode main.go:$LINE: $(grep mismatch "$dir/check.out" | head -3)"
	summary="$summary go$ver$flavour: $match/$allocs in ${#files[@]} files;"
done
# SIGTERM to the tracer while the target runs on, with --rotate-files 2:
# the two remaining files have complete sidecars, and the pruned files'
# sidecars went with them.
WLINE=$(grep -n 'return &Warm{next: prev}' "$ROOT/tests/go/knownalloc/main.go" | cut -d: -f1)
BIN=$(workload knownalloc 1.27 -stripped-pie) || exit 1
dir=$TMP/sigterm
mkdir -p "$dir"
start_bg "$dir/workload.log" "$BIN" -n 1 -busy
WPID=$BG_PID
wait_for_line "$dir/workload.log" '^ready' 20 || fail "sigterm: workload did not start"
start_bg "$dir/tracer.log" "$TRACER" -p "$WPID" -o "$dir/out" -g 100ms \
	-r 128K -n 2 --stacks
TPID=$BG_PID
wait_for_line "$dir/tracer.log" 'attached' 60 || fail "sigterm: tracer did not attach"
sleep 1.5
kill -TERM "$TPID"
wait_exit "$TPID" 60
trc=$?
kill -KILL "$WPID" 2>/dev/null
wait "$WPID" 2>/dev/null
[ $trc -eq 0 ] || fail "sigterm: tracer exited with $trc: $(tail -n 5 "$dir/tracer.log")"
files=("$dir"/out/*.trace)
sidecars=("$dir"/out/*.stacks)
[ ${#files[@]} -eq 2 ] || fail "sigterm: ${#files[@]} trace files, want 2"
[ ${#sidecars[@]} -eq 2 ] || fail "sigterm: ${#sidecars[@]} sidecars, want 2: $(ls "$dir/out")"
ls "$dir"/out/*.tmp >/dev/null 2>&1 && fail "sigterm: temporary sidecar left"
check_files "$dir/tc" "${files[@]}"
"$TMP/stacks_check" main.Warm main.newWarm main.go "$WLINE" "${files[@]}" \
	>"$dir/check.out" 2>&1 || fail "sigterm: stacks_check: $(cat "$dir/check.out")"
allocs=$(kv "$dir/check.out" allocs)
match=$(kv "$dir/check.out" match)
[ "${allocs:-0}" -gt 1000 ] || fail "sigterm: only ${allocs:-0} Warm allocations"
[ $((match * 100)) -ge $((allocs * 99)) ] ||
	fail "sigterm: $match of $allocs Warm stacks at main.newWarm: $(grep mismatch "$dir/check.out" | head -3)"
summary="$summary sigterm -n 2: $match/$allocs;"

# An allocation inside inlined calls (newItem inlined into push, inlined
# into build): its innermost frame is still the inlined function, at its
# line, from the binary's inline tree (Go 1.27, stripped, PIE; -- CMD).
ILINE=$(grep -n 'inlinecheck: allocation' "$ROOT/tests/go/inlinecheck/main.go" | cut -d: -f1)
BIN=$(workload inlinecheck 1.27 -stripped-pie) || exit 1
dir=$TMP/inline
mkdir -p "$dir"
"$TRACER" -o "$dir/out" --stacks -- "$BIN" -alloc 20000 >"$dir.log" 2>&1 ||
	fail "inline: tracer failed: $(tail -n 5 "$dir.log")"
files=("$dir"/out/*.trace)
check_files "$dir/tc" "${files[@]}"
"$TMP/stacks_check" main.item main.newItem main.go "$ILINE" "${files[@]}" \
	>"$dir/check.out" 2>&1 || fail "inline: stacks_check: $(cat "$dir/check.out")"
allocs=$(kv "$dir/check.out" allocs)
match=$(kv "$dir/check.out" match)
[ "${allocs:-0}" -ge 19800 ] || fail "inline: only ${allocs:-0} of 20000 items traced"
[ $((match * 100)) -ge $((allocs * 99)) ] ||
	fail "inline: $match of $allocs item stacks at main.newItem: $(grep mismatch "$dir/check.out" | head -3)"
summary="$summary inlined: $match/$allocs"
pass "$summary"
