#!/bin/bash
# bench_probes.sh - what tracing costs an allocating Go program, per
# allocation, next to the floor of one do-nothing uprobe per allocation.
# Not a test: it prints a table.
#
# For each Go version and allocation kind (tests/go/allocbench):
#   untraced   the loop alone
#   floor      bpf/floor.bpf.c (one atomic add) on the PUSHQ BP of the
#              function every allocation of that kind enters (emulated)
#   entry-ret  traceaf-bpf with TRACEAF_ALLOC_PROBES=entry-ret: entry probe
#              + a probe on every RET (single-stepped), the scheme before
#              the allocation-site analysis
#   sites      traceaf-bpf as built: one probe per allocation on an
#              emulated instruction inside the producing function
#   stacks     sites with --stacks (the call stack of every allocation)
#   prog       in the sites runs, what the allocation probe's BPF program
#              itself takes per run (the kernel's bpf_stats: run_time_ns /
#              run_cnt of alloc_site; the trap around it is not counted)
# and the ratios sites/floor (whole cost per allocation) and
# (sites-untraced)/(floor-untraced) (what the probes add).
#
# Kinds: node (new(T) with a pointer), bytes (make([]byte, n)), tiny,
# string (concatenation), append (growth), map (make + insert): see
# tests/go/allocbench.  On Go 1.27 bytes, string, append and map go
# through mallocgc's size-class tables.
#
# Usage: scripts/bench_probes.sh            (as root, after make all)
# Env:   BUILD=build  VERSIONS="1.23 1.25 1.27"
#        KINDS="node bytes tiny string append map"
#        MODES="untraced floor entry-ret sites stacks" (a column left out
#        prints as -)
#        N=1000000 (fast modes)  NSLOW=100000 (entry-ret)  REPS=3
#        METRIC=ns (wall time per allocation) or cpu (the process's CPU
#        time per allocation: use it on a loaded machine)
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
VERSIONS=${VERSIONS:-"1.23 1.25 1.27"}
KINDS=${KINDS:-"node bytes tiny string append map"}
MODES=${MODES:-"untraced floor entry-ret sites stacks"}
METRIC=${METRIC:-ns}
N=${N:-1000000}
NSLOW=${NSLOW:-100000}
REPS=${REPS:-3}
TRACER=$BUILD/traceaf-bpf
FLOOR=$BUILD/floor_probe
GOBIN=${TRACEAF_GOBIN_DIR:-$BUILD/go-bin}
TMP=$(mktemp -d /tmp/bench_probes.XXXXXX)
PIDS=()

cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

die() { echo "bench_probes: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (uprobes)"
[ -x "$TRACER" ] || die "no $TRACER: run make BUILD=$BUILD all"
[ -f "$BUILD/floor.skel.h" ] || die "no $BUILD/floor.skel.h: run make BUILD=$BUILD all"

# The floor loader links against the tracer's own modules (not main.o).
if [ ! -x "$FLOOR" ] || [ "$ROOT/tools/floor_probe.c" -nt "$FLOOR" ] ||
   [ "$BUILD/floor.skel.h" -nt "$FLOOR" ]; then
	objs=$(find "$BUILD/obj" -name '*.o' ! -path "$BUILD/obj/main.o" | sort)
	cc -O2 -g -std=gnu11 -D_GNU_SOURCE -Iinclude -Iuser -I"$BUILD" tools/floor_probe.c \
		$objs -o "$FLOOR" -lbpf -lelf -ldw -lcapstone -lprotobuf-c -lz -lm -lpthread ||
		die "cannot build $FLOOR"
fi
GO_VERSIONS="$VERSIONS" OUT="$GOBIN" tests/go/build-workloads.sh allocbench >/dev/null ||
	die "cannot build tests/go/allocbench"

wait_line() { # FILE REGEX TENTHS
	local t=$3
	while [ "$t" -gt 0 ]; do
		grep -qE "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
		t=$((t - 1))
	done
	return 1
}

# The function every allocation of this kind enters, for the floor probe.
hot_func() { # VERSION KIND
	local minor=${1#1.}
	if [ "$minor" -lt 26 ]; then
		echo runtime.mallocgc
		return
	fi
	case $2 in
	node) echo runtime.mallocgcSmallScanNoHeaderSC6 ;;  # new(Node): 56 -> 64
	tiny) echo runtime.mallocgcTinySC2 ;;
	*) echo runtime.mallocgc ;;
	esac
}

# run_one MODE VERSION KIND N -> ns/alloc on stdout
run_one() {
	local mode=$1 ver=$2 kind=$3 n=$4 bin wpid apid=""
	bin=$GOBIN/allocbench-go$ver
	if [ "$mode" = untraced ]; then
		"$bin" -wait=false -kind "$kind" -n "$n" | awk -v m="$METRIC/alloc" '$1 == m { print $2 }'
		return
	fi
	"$bin" -kind "$kind" -n "$n" >"$TMP/w.log" 2>&1 &
	wpid=$!
	PIDS+=("$wpid")
	wait_line "$TMP/w.log" '^ready' 100 || die "allocbench did not start"
	case $mode in
	floor)
		"$FLOOR" "$wpid" "$(hot_func "$ver" "$kind")" >"$TMP/a.log" 2>&1 &
		;;
	entry-ret)
		TRACEAF_ALLOC_PROBES=entry-ret "$TRACER" -p "$wpid" -o "$TMP/out" >"$TMP/a.log" 2>&1 &
		;;
	sites)
		"$TRACER" -p "$wpid" -o "$TMP/out" >"$TMP/a.log" 2>&1 &
		;;
	stacks)
		"$TRACER" -p "$wpid" -o "$TMP/out" --stacks >"$TMP/a.log" 2>&1 &
		;;
	esac
	apid=$!
	PIDS+=("$apid")
	wait_line "$TMP/a.log" '^(traceaf-bpf: )?attached' 600 ||
		die "$mode did not attach: $(cat "$TMP/a.log")"
	# On this kernel a uprobe registered a moment ago can miss the first
	# hits of a thread that was asleep meanwhile: let it settle.
	sleep "${SETTLE:-1}"
	[ "$mode" = sites ] && prog_stats >"$TMP/prog.before"
	kill -USR1 "$wpid"
	wait "$wpid"
	[ "$mode" = sites ] && prog_stats >"$TMP/prog.after" &&
		join "$TMP/prog.before" "$TMP/prog.after" |
		awk '$4 > $2 { printf "%.1f\n", ($5 - $3) / ($4 - $2) }' >>"$TMP/prog"
	kill -INT "$apid" 2>/dev/null
	wait "$apid" 2>/dev/null
	rm -rf "$TMP/out"
	echo "$(awk -v m="$METRIC/alloc" '$1 == m { print $2 }' "$TMP/w.log")"
	if [ "$mode" = floor ] && [ -n "${VERBOSE:-}" ]; then
		grep -E '^(attached|hits)' "$TMP/a.log" >&2
	fi
}

# "ID run_cnt run_time_ns" of every alloc_site program, sorted by ID.
prog_stats() {
	bpftool -j prog show 2>/dev/null | python3 -c '
import json, sys
for p in json.load(sys.stdin):
    if p.get("name") == "alloc_site":
        print(p["id"], p.get("run_cnt", 0), p.get("run_time_ns", 0))' | sort
}

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

measure() { # MODE VERSION KIND N
	local i
	case " $MODES " in *" $1 "*) ;; *) echo nan; return ;; esac
	for i in $(seq "$REPS"); do run_one "$@"; done | median
}

# The programs' own time (prog column): counted only while this is set.
stats_was=$(sysctl -n kernel.bpf_stats_enabled 2>/dev/null || echo 0)
sysctl -qw kernel.bpf_stats_enabled=1 2>/dev/null
trap 'sysctl -qw kernel.bpf_stats_enabled="$stats_was" 2>/dev/null; cleanup' EXIT

printf '%-5s %-6s %10s %10s %12s %10s %10s %8s %12s %14s\n' go kind untraced floor entry-ret sites stacks prog sites/floor added/floor-add
for ver in $VERSIONS; do
	for kind in $KINDS; do
		u=$(measure untraced "$ver" "$kind" "$N")
		f=$(measure floor "$ver" "$kind" "$N")
		e=$(measure entry-ret "$ver" "$kind" "$NSLOW")
		rm -f "$TMP/prog"
		s=$(measure sites "$ver" "$kind" "$N")
		p=$( [ -s "$TMP/prog" ] && median <"$TMP/prog" || echo nan)
		k=$(measure stacks "$ver" "$kind" "$N")
		awk -v ver="$ver" -v kind="$kind" -v u="$u" -v f="$f" -v e="$e" -v s="$s" -v k="$k" -v p="$p" 'BEGIN {
			printf "%-5s %-6s %10.1f %10.1f %12.1f %10.1f %10.1f %8.1f %12.2f %14.2f\n",
				ver, kind, u, f, e, s, k, p, s / f, (s - u) / (f - u) }'
	done
done
echo "(ns per allocation, $METRIC time, median of $REPS runs; entry-ret with $NSLOW allocations, the rest $N)"
