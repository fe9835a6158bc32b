#!/bin/bash
# test_rotation - rotating files stand alone.
#
# fullwork -scale $SCALE (default 0.3) traced with --rotate-size 256K and
# --generation-period 200ms:
#  1. Go 1.27 workload, every file kept: several files (>= 4); every file
#     is valid with Go 1.23's and Go 1.27's tracecheck; each file starts with
#     the AllocFree info batch (info_batches = generations, so the first
#     generation has one) and carries exists events (ev Span, ev HeapObject,
#     ev GoroutineStack > 0: the tracer repeats what is live at the start of
#     every file); replaying each file alone, per ID family, alloc_of_live +
#     free_of_unknown stay below 0.1% of the family's events; file names are
#     COMM-PID-TIME-SEQ.trace with the workload's PID, SEQ = 1..N, and ls
#     order = creation order (SEQ order = modification-time order, since a
#     file is complete before the next is opened); main.Node summed over the
#     files = what fullwork made.
#  2. Go 1.23 workload with --rotate-files 3: exactly 3 files remain, the
#     newest 3 (SEQ N-2..N, N > 3, the last one is the "last file" the
#     tracer names), each valid alone with the same checks.
# Observed (2026-12-02, this VM, 2 runs): run 1: 13-14 files of 23-690 KB
# (a 200 ms generation can exceed 256K: 1-6 generations per file), the last
# written at exit; worst per-file replay heap 3/122184, span and stack 0.
# Run 2: SEQ 11-13 or 12-14 of 13-14 kept.  ~30 s.
source "$(dirname "$0")/lib/lib.sh"
export BUILD
SCALE=${SCALE:-0.3}

[ -x "$TRACER" ] || fail "tracer not built: $TRACER"
TC123=$(tracecheck 1.23) || exit 1
TC127=$(tracecheck 1.27) || exit 1

# traced_run VER DIR TRACER-ARGS...: fullwork traced from before its phase
# until it exits; sets WPID.
traced_run() {
	local ver=$1 d=$2 bin tpid rc
	shift 2
	bin=$(workload fullwork "$ver") || exit 1
	mkdir -p "$d"
	start_bg "$d/work.log" "$bin" -scale "$SCALE"
	WPID=$BG_PID
	wait_for_line "$d/work.log" '^ready' 20 || fail "workload did not start: $(cat "$d/work.log")"
	start_bg "$d/tracer.log" "$TRACER" -p "$WPID" -o "$d/out" "$@"
	tpid=$BG_PID
	wait_for_line "$d/tracer.log" 'attached' 60 || fail "tracer did not attach: $(cat "$d/tracer.log")"
	kill -USR1 "$WPID"
	wait_exit "$WPID" 300
	rc=$?
	[ $rc -eq 0 ] || fail "workload exited with $rc: $(tail -n 5 "$d/work.log")"
	grep -q '^done nodes=' "$d/work.log" || fail "workload output: $(cat "$d/work.log")"
	wait_exit "$tpid" 120
	rc=$?
	[ $rc -eq 0 ] || fail "tracer exited with $rc: $(tail -n 20 "$d/tracer.log")"
}

# check_each DIR FILE...: per-file checks (validity, info, exists, replay).
# Sets WORST to the worst replay line.
check_each() {
	local d=$1 f out r g i
	shift
	check_files "$d/check" "$@"
	WORST=
	for f in "$@"; do
		for out in "$d/check/$(basename "$f").tc123" "$d/check/$(basename "$f").tc127"; do
			g=$(kv "$out" generations)
			i=$(kv "$out" info_batches)
			[ "$g" -ge 1 ] && [ "$i" = "$g" ] ||
				fail "$(basename "$f"): $i info batches in $g generations ($(basename "$out"))"
			for k in Span HeapObject GoroutineStack; do
				[ "$(kv "$out" "ev $k")" -gt 0 ] ||
					fail "$(basename "$f") has no $k (exists) events ($(basename "$out"): $(grep -E '^ev ' "$out" | tr '\n' ' '))"
			done
		done
		r=$(replay_check "$d/check/$(basename "$f").tc127" 0.1) ||
			fail "replay of $(basename "$f") alone:$r (alloc_of_live + free_of_unknown / events, want < 0.1%)"
		WORST="$WORST
    $(basename "$f"): $(stat -c %s "$f") B, $(kv "$d/check/$(basename "$f").tc127" generations) gen,$r"
	done
}

# check_names PID FILE...: names carry the PID, SEQ increases by 1 from the
# first, ls order = SEQ order = modification-time order.  Sets SEQS.
check_names() {
	local pid=$1 f want seq
	shift
	SEQS=()
	for f in "$@"; do
		case $(basename "$f") in
		fullwork-go1.2[0-9]-"$pid"-[0-9]*T[0-9]*Z-[0-9]*.trace) ;;
		*) fail "file name $(basename "$f") is not COMM-$pid-TIME-SEQ.trace" ;;
		esac
		seq=$(basename "$f" .trace)
		seq=$((10#${seq##*-}))
		if [ ${#SEQS[@]} -gt 0 ]; then
			want=$((SEQS[${#SEQS[@]} - 1] + 1))
			[ "$seq" -eq "$want" ] || fail "ls order: $(basename "$f") has SEQ $seq after $((want - 1))"
		fi
		SEQS+=("$seq")
	done
	# Modification times must not decrease in SEQ (= ls) order.  Compare
	# the times themselves rather than "ls -t": files finished within one
	# clock tick share an mtime, and ls breaks such ties by name in the
	# order -r reverses.
	local t last='' lastf=''
	for f in "$@"; do
		t=$(stat -c %.9Y -- "$f") || fail "stat $f"
		# Same-width "seconds.nanoseconds": string order is time order.
		if [ -n "$last" ] && [[ $t < $last ]]; then
			fail "ls order is not modification order: $(basename "$lastf") ($last) is newer than $(basename "$f") ($t)"
		fi
		last=$t lastf=$f
	done
}

# ---- 1: keep all
D1=$TMP/all
traced_run 1.27 "$D1" --rotate-size 256K --generation-period 200ms
W1=$WPID
files=("$D1"/out/*.trace)
[ -f "${files[0]}" ] || fail "no trace files: $(cat "$D1/tracer.log")"
[ ${#files[@]} -ge 4 ] || fail "only ${#files[@]} file(s) with --rotate-size 256K: $(ls -l "$D1/out")"
check_names "$W1" "${files[@]}"
[ "${SEQS[0]}" -eq 1 ] || fail "first file has SEQ ${SEQS[0]}, want 1"
check_each "$D1" "${files[@]}"
worst1=$WORST
nodes=0
for f in "${files[@]}"; do
	v=$(kv "$D1/check/$(basename "$f").tc127" "type main.Node 56 allocs")
	nodes=$((nodes + ${v:-0}))
done
made=$(sed -n 's/^done nodes=\([0-9]*\) .*/\1/p' "$D1/work.log")
[ "$nodes" -eq "$made" ] || fail "main.Node over ${#files[@]} files: $nodes, fullwork made $made"
n1=${#files[@]}

# ---- 2: --rotate-files 3
D2=$TMP/keep3
traced_run 1.23 "$D2" --rotate-size 256K --generation-period 200ms --rotate-files 3
W2=$WPID
files=("$D2"/out/*.trace)
[ ${#files[@]} -eq 3 ] || fail "--rotate-files 3 left ${#files[@]} files: $(ls "$D2/out" | tr '\n' ' ')"
check_names "$W2" "${files[@]}"
last=$(sed -n 's/^traceaf-bpf: last file //p' "$D2/tracer.log")
[ "$(basename "$last")" = "$(basename "${files[2]}")" ] ||
	fail "newest remaining file $(basename "${files[2]}") is not the tracer's last file '$last'"
[ "${SEQS[2]}" -gt 3 ] || fail "only ${SEQS[2]} files were written: nothing was rotated away"
check_each "$D2" "${files[@]}"

[ -n "${VERBOSE:-}" ] && echo "run 1:$worst1" && echo "run 2:$WORST"
pass "$n1 files (SEQ 1..$n1) each valid alone with exists and info; --rotate-files 3 kept SEQ ${SEQS[*]} of ${SEQS[2]}"
