#!/bin/bash
# test_all_short_lived - `traceaf-bpf --all` and short-lived Go processes
# whose executable is already attached.
#
# A nodeburst (Go $VER, default 1.27) copy in $TMP/bin runs with -hold
# before the tracer starts, so the tracer attaches that executable at
# start ("attached to 1 Go processes (1 executables)").  Every later run of
# the same executable is seen at exec and probed from its first
# instruction (the uprobes are on the inode); each allocates N (default
# 20000) main.Node from the start of main, without waiting for anything,
# and exits.  Two phases:
#  - burst: RUNS (default 20) runs started at once (BURST_HOGS=K: beside K
#    CPU hogs; default 0);
#  - contended: SEQ (default 10) runs one after another while HOGS
#    (default 2) CPU-bound processes (`yes`) keep the CPUs busy, as on a
#    loaded host: the tracer gets to each exec record late relative to
#    the program's progress, or early, depending on the scheduler.
#
# Checks: every run exits 0 after "done nodes=N"; the tracer reports
# "tracing PID" and "PID exited" for each; each has its own files
# (nb-<pid>-...), valid with Go 1.23's and Go 1.27's parsers, counting >= 99%
# (and <= 100%) of N main.Node; the tracer keeps running and exits 0 on
# SIGINT.  The tracer runs with -v -v so that a process it skips leaves its
# reason in the log, which a FAIL line quotes.
#
# Found 2026-12-02 (burst phase fails in roughly 1 run of 4-6, 1-4 runs
# missed): the tracer handles exec records in ring-buffer order, behind the
# allocation records, and each session it opens costs ~10 ms of its CPU
# even for an executable already attached (the ELF and its compressed DWARF
# are read again: adler32_z, dwarf_siblingof, strcmp on top in perf; a
# burst used 0.31 s of tracer CPU in all, ~0.3 us per record), so with 20
# busy processes on 2 CPUs, where it gets ~1/10 of a CPU, it reaches the
# last runs' exec records 2-4.5 s after they started, when some have
# already exited.  open_session()
# needs the live process; it fails ("cannot find the Go heap of PID N",
# printed only with -v -v, or nothing when /proc/PID is already gone), the
# PID is ignored and every record it left in the ring buffer is dropped.
# The FAIL line shows, per missed run, when it ran and when the tracer
# spoke of it (tracer log lines are time-stamped as they are read).
source "$(dirname "$0")/lib.sh"
TEST_NAME=test_all_short_lived
N=${N:-20000}
RUNS=${RUNS:-20}
SEQ=${SEQ:-10}
HOGS=${HOGS:-2}
VER=${VER:-1.27}

[ -x "$TRACER" ] || fail "tracer not built: $TRACER"
TC123=$(tracecheck 1.23) || exit 1
TC127=$(tracecheck 1.27) || exit 1
B=$TMP/bin
OUT=$TMP/out
mkdir -p "$B"
src=$(workload nodeburst "$VER") || { echo "$src"; exit 1; }
cp "$src" "$B/nb" || fail "cannot copy $src"

start_bg "$TMP/holder.log" "$B/nb" -n 100 -hold
HOLDER=$BG_PID
wait_for_line "$TMP/holder.log" '^holding' 30 || fail "holder did not start: $(cat "$TMP/holder.log")"

# The tracer's stderr, each line prefixed with the time it was read (no
# fork per line: $EPOCHREALTIME), to tell when it handled each process.
stamp() {
	local l
	while IFS= read -r l; do
		printf '%s %s\n' "$EPOCHREALTIME" "$l"
	done
}
"$TRACER" --all --include "$B/*" -o "$OUT" -g 250ms -v -v >"$TMP/tracer.out" 2> >(stamp >"$TMP/tracer.log") &
TPID=$!
BG_PIDS+=("$TPID")
wait_for_line "$TMP/tracer.log" 'attached' 120 || fail "tracer did not attach: $(cat "$TMP/tracer.log")"
# Let the probes settle a moment before the counted phase (README
# "Limits": events lost under load; this did not make it go away).
sleep "${SETTLE:-1}"
grep -q 'attached to 1 Go processes (1 executables)' "$TMP/tracer.log" ||
	fail "want 'attached to 1 Go processes (1 executables)': $(cat "$TMP/tracer.log")"

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# run_one PHASE I: starts one run in the background; sets BG_PID and
# LAUNCHED[pid] (its start time; its end time is its log's mtime)
declare -A LAUNCHED
run_one() {
	local t=$EPOCHREALTIME
	start_bg "$TMP/$1$2.log" "$B/nb" -n "$N"
	LAUNCHED[$BG_PID]=$t
	LOG_OF[$BG_PID]=$TMP/$1$2.log
}
declare -A LOG_OF
# finish PHASE I PID: the run must exit 0 and print its line
finish() {
	wait_exit "$3" 300
	local rc=$?
	[ $rc -eq 0 ] || fail "$1 run $2 (PID $3) exited with $rc: $(cat "$TMP/$1$2.log")"
	grep -q "^done nodes=$N$" "$TMP/$1$2.log" || fail "$1 run $2 (PID $3) output: $(cat "$TMP/$1$2.log")"
}

# Phase 1: burst (BURST_HOGS CPU hogs beside it, default none).
hogs=()
for i in $(seq 1 "${BURST_HOGS:-0}"); do
	start_bg /dev/null yes
	hogs+=("$BG_PID")
done
burst=()
t0=$(now)
for i in $(seq 1 "$RUNS"); do
	run_one burst "$i"
	burst+=("$BG_PID")
done
for i in $(seq 1 "$RUNS"); do
	finish burst "$i" "${burst[$((i - 1))]}"
done
burst_s=$(since "$t0")
for p in "${hogs[@]}"; do
	kill -KILL "$p"
	wait "$p" 2>/dev/null
done

# Phase 2: one at a time on busy CPUs.
hogs=()
for i in $(seq 1 "$HOGS"); do
	start_bg /dev/null yes
	hogs+=("$BG_PID")
done
contended=()
t0=$(now)
for i in $(seq 1 "$SEQ"); do
	run_one contended "$i"
	contended+=("$BG_PID")
	finish contended "$i" "$BG_PID"
done
contended_s=$(since "$t0")
for p in "${hogs[@]}"; do
	kill -KILL "$p"
	wait "$p" 2>/dev/null
done

# Every run the tracer took must be finalized once its records are drained.
for p in "${burst[@]}" "${contended[@]}"; do
	grep -q "tracing PID $p " "$TMP/tracer.log" || continue
	wait_for_line "$TMP/tracer.log" "PID $p exited" 120 ||
		fail "tracer did not notice PID $p exit: $(tail -n 5 "$TMP/tracer.log")"
done
sleep 1
kill -0 "$TPID" 2>/dev/null || fail "tracer stopped: $(tail -n 5 "$TMP/tracer.log")"

# check_phase NAME PID...: sets RES (summary), MISSING, SHORT, and LAG,
# the longest time from a run's start to the tracer's "tracing PID" line
check_phase() {
	local name=$1 p files c123 c127 bad c traced=0 min=-1 max=0 t
	shift
	MISSING="" SHORT="" LAG=0
	for p in "$@"; do
		t=$(awk -v p="$p" '$2 == "traceaf-bpf:" && $3 == "tracing" && $5 == p { print $1; exit }' "$TMP/tracer.log")
		[ -n "$t" ] && LAG=$(awk -v a="${LAUNCHED[$p]}" -v b="$t" -v m="$LAG" 'BEGIN { d = b - a; printf "%.2f", (d > m ? d : m) }')
		files=("$OUT"/nb-"$p"-*.trace)
		if [ ! -f "${files[0]}" ]; then
			MISSING="$MISSING $p"
			continue
		fi
		res=$(node_check "${files[@]}") || fail "$name PID $p: $res"
		read -r c123 c127 bad <<<"$res"
		traced=$((traced + 1))
		for c in "$c123" "$c127"; do
			{ [ $min -lt 0 ] || [ "$c" -lt $min ]; } && min=$c
			[ "$c" -gt $max ] && max=$c
			enough "$c" "$N" 990 || SHORT="$SHORT $p:$c"
		done
	done
	RES="$name $traced/$# traced, main.Node per run min $min max $max of $N, start-to-traced lag up to ${LAG}s"
}
check_phase burst "${burst[@]}"
res_burst=$RES missing=$MISSING short=$SHORT
check_phase contended "${contended[@]}"
res_cont=$RES
missing="$missing$MISSING" short="$short$SHORT"

kill -INT "$TPID"
wait_exit "$TPID" 120
trc=$?
[ $trc -eq 0 ] || fail "tracer exited with $trc after SIGINT: $(tail -n 5 "$TMP/tracer.log")"

summary="Go $VER: $res_burst (all $RUNS at once${BURST_HOGS:+ beside $BURST_HOGS CPU hogs}, ${burst_s}s); $res_cont (one at a time beside $HOGS CPU hogs, ${contended_s}s)"
if [ -n "$missing" ]; then
	# For each: when it started and ended, and what the tracer said about
	# it when (times relative to its start).
	why=""
	for p in $missing; do
		a=${LAUNCHED[$p]}
		e=$(stat -c %.9Y "${LOG_OF[$p]}")
		said=$(awk -v p="$p" -v a="$a" '{ for (i = 2; i < NF; i++) if ($i == "PID" && ($(i + 1) == p || $(i + 1) == p ":")) { $1 = sprintf("+%.3fs", $1 - a); print; next } }' "$TMP/tracer.log" | sed 's/traceaf-bpf: //' | head -n 2 | tr '\n' ' ')
		why="$why [PID $p ran +0s..+$(awk -v a="$a" -v e="$e" 'BEGIN { printf "%.3f", e - a }')s; tracer: ${said:-nothing}]"
	done
	fail "$summary; no files for PIDs$missing:$why"
fi
[ -z "$short" ] || fail "$summary; under 99% of $N:$short"
pass "$summary"
