#!/bin/bash
# known_alloc.sh GOVERSION [FLAVOUR]: the walking-skeleton check.
# A knownalloc workload built by Go GOVERSION waits; the tracer attaches to
# the live process; the workload allocates N main.Node values and exits; the
# tracer notices, finalizes its files and exits 0.  Every file must parse
# and validate with Go 1.23's and Go 1.27's parsers, name main.Node with
# size 56, and count at least 99.9% (and at most 100%) of the N Nodes.
VER=$1
FLAVOUR=${2:-}
source "$(dirname "$0")/lib.sh"
TEST_NAME="skeleton_go$VER$FLAVOUR"
N=${N:-200000}
# BUSY=1: the workload allocates main.Warm non-stop while the tracer
# attaches (a production process is never idle), then main.Node as usual.
BUSY=${BUSY:-}
[ -n "$BUSY" ] && TEST_NAME="${TEST_NAME}_busy"

[ -x "$TRACER" ] || fail "tracer not built: $TRACER"
BIN=$(workload knownalloc "$VER" "$FLAVOUR") || exit 1
TC123=$(tracecheck 1.23) || exit 1
TC127=$(tracecheck 1.27) || exit 1

start_bg "$TMP/workload.log" "$BIN" -n "$N" ${BUSY:+-busy}
WPID=$BG_PID
wait_for_line "$TMP/workload.log" '^ready' 20 || fail "workload did not start"

OUT=$TMP/out
start_bg "$TMP/tracer.log" "$TRACER" -p "$WPID" -o "$OUT" -g 250ms
TPID=$BG_PID
wait_for_line "$TMP/tracer.log" 'attached' 60 ||
	fail "tracer did not attach: $(cat "$TMP/tracer.log")"

kill -USR1 "$WPID"
wait_exit "$WPID" 300
wrc=$?
[ $wrc -eq 0 ] || fail "workload exited with $wrc: $(tail -n 5 "$TMP/workload.log")"
grep -q "^done nodes=$N" "$TMP/workload.log" || fail "workload output: $(cat "$TMP/workload.log")"

wait_exit "$TPID" 60
trc=$?
[ $trc -eq 0 ] || fail "tracer exited with $trc: $(tail -n 20 "$TMP/tracer.log")"

files=("$OUT"/*.trace)
[ -f "${files[0]}" ] || fail "no trace files written: $(cat "$TMP/tracer.log")"
for f in "${files[@]}"; do
	case $(basename "$f") in
	*-"$WPID"-*.trace) ;;
	*) fail "file name $(basename "$f") does not carry PID $WPID" ;;
	esac
done

total=0
for tc in "$TC123" "$TC127"; do
	count=0
	for f in "${files[@]}"; do
		"$tc" "$f" >"$TMP/check.out" 2>&1 ||
			fail "$(basename "$tc") rejects $(basename "$f"): $(grep -m1 '^error' "$TMP/check.out")"
		[ "$(kv "$TMP/check.out" valid)" = 1 ] || fail "$(basename "$tc"): $f not valid"
		line=$(awk '$1 == "type" && $2 == "main.Node" { print; exit }' "$TMP/check.out")
		if [ -n "$line" ]; then
			size=$(awk '{ print $3 }' <<<"$line")
			[ "$size" = 56 ] || fail "main.Node has size $size, want 56"
			count=$((count + $(awk '{ print $5 }' <<<"$line")))
		fi
	done
	[ $((count * 1000)) -ge $((N * 999)) ] ||
		fail "$(basename "$tc") counts $count main.Node allocations, want >= 99.9% of $N"
	[ "$count" -le "$N" ] || fail "$(basename "$tc") counts $count main.Node allocations, more than the $N made"
	total=$count
	if [ -n "$BUSY" ]; then
		warm=0
		for f in "${files[@]}"; do
			"$tc" "$f" >"$TMP/check.out" 2>&1
			w=$(awk '$1 == "type" && $2 == "main.Warm" && $4 == "allocs" { print $5; exit }' "$TMP/check.out")
			warm=$((warm + ${w:-0}))
		done
		[ "$warm" -gt 0 ] || fail "no main.Warm allocations traced while the workload was busy"
	fi
done
pass "Go $VER$FLAVOUR: $total/$N main.Node allocations in ${#files[@]} file(s)"
