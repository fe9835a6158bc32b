#!/bin/bash
# attach_cycles - attaching, detaching and killing the tracer never harms
# a busy target (issue 6, item 1).  Run by `make stress` (scripts/stress.sh,
# 1000 cycles) and, short, by tests/e2e/test_attach_cycles.sh.
#
# Target: churn (tests/go/churn, Go $VER, default 1.27: the most probes),
# one process for the whole run: allocation, GC and goroutine churn in
# rounds of ~1 ms, each checked against the first round of its seed.
#
#  1. Reference: an untraced `churn -rounds 128`: its stdout and status.
#  2. After $WARMUP s, its speed untraced, then while traced (one attach of $WINDOW s, to
#     show the measure sees probes), each the median CPU time per round
#     over $WINDOW s (CPU time, user + system of every thread: what the
#     probes cost, and less disturbed than wall time by other load).
#  3. $CYCLES cycles: `traceaf-bpf -p PID` until its "attached" line,
#     a random 0..$DWELL_MS ms, SIGINT, wait.  Every cycle: the tracer
#     exits 0; while attached, the target's code differs from its file in
#     exactly as many bytes as the tracer has probes (one int3 each);
#     after the exit, within 5 s (at once unless another process holds a
#     reference for a moment), in none, and the tracer's BPF links (their
#     IDs, read from its fdinfo while attached) no longer exist; its
#     programs go within 5 s more (freed after RCU grace periods).  The files
#     of the first and last cycle and of every $VALIDATE_EVERY-th are
#     checked with Go 1.23's and 1.27's parsers, and removed.
#  4. After the last detach: no uprobe_events entry of the target's
#     executable (tracefs, mounted in a private namespace if need be), and
#     the speed back within $MAX_SLOWDOWN % of the untraced speed (in the
#     best of up to 3 windows: other load inflates one now and then).
#  5. $KILLS times: the tracer with -g 200ms -r 1M (several files), killed
#     with SIGKILL 0.4..1.4 s after attaching.  The kernel closes its links
#     when the process dies: then, as in 3, no probe and no link remain.
#     Files: what the tracer guarantees is that a file is written a
#     generation at a time and a new file is begun only after the previous
#     one got its last generation, so every file but the newest is valid;
#     the newest is valid, or (the kill cut a write short) its whole
#     generations are, or (killed right after creating it) it holds no
#     generation yet.
#  6. The target stopped with SIGUSR1: its stdout and exit status equal
#     the reference's; speed after the kills measured again.
#
# Prints the figures (cycles, attach and detach times mean/p99, speed
# before/during/after) and "PASS ..." or "FAIL ...: why"; exit 0 / 1.
# Run it alone: a tracer with --all running at the same time would probe
# churn too, and its probes would count as left behind.
source "$(cd "$(dirname "$0")/../e2e/lib" && pwd)/lib.sh"
VER=${VER:-1.27}
CYCLES=${CYCLES:-1000}
KILLS=${KILLS:-5}
DWELL_MS=${DWELL_MS:-150}
WINDOW=${WINDOW:-5}
WARMUP=${WARMUP:-3}
VALIDATE_EVERY=${VALIDATE_EVERY:-100}
MAX_SLOWDOWN=${MAX_SLOWDOWN:-50}

[ -x "$TRACER" ] || fail "tracer not built: $TRACER"
command -v bpftool >/dev/null || fail "needs bpftool"
BIN=$(workload churn "$VER") || exit 1
TC123=$(tracecheck 1.23) || exit 1
TC127=$(tracecheck 1.27) || exit 1

now_ms() { echo $(( ${EPOCHREALTIME/./} / 1000 )); }

# --- 1. reference ------------------------------------------------------
"$BIN" -rounds 128 >"$TMP/ref.out" 2>/dev/null
REF_RC=$?
[ $REF_RC -eq 0 ] && grep -qE '^done seeds=64 checksum=[0-9a-f]{16}$' "$TMP/ref.out" ||
	fail "untraced churn: exit $REF_RC, output $(cat "$TMP/ref.out")"

# Its stderr (one line per round) apart from its stdout.
"$BIN" >"$TMP/work.out" 2>"$TMP/work.err" &
WPID=$!
BG_PIDS+=("$WPID")

# rounds_done -> number of the last round churn reported
rounds_done() {
	tail -n 1 "$TMP/work.err" | awk '$1 == "round" { print $2; exit } END { if (!NR) print -1 }'
}

# speed SECONDS -> "CPU_US WALL_US ROUNDS": medians per round over the
# rounds that began and ended within the next SECONDS.
speed() {
	local r0 r1
	sleep 0.2
	r0=$(rounds_done)
	sleep "$1"
	r1=$(rounds_done)
	awk -v a="$r0" -v b="$r1" '$1 == "round" && $2 > a && $2 <= b { c[n] = $4; w[n] = $3; n++ }
	function med(v,   i, j, t) {
		for (i = 1; i < n; i++) for (j = i; j > 0 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
		return v[int(n / 2)]
	}
	END { if (n < 10) { print "0 0", n; exit } print med(c), med(w), n }' "$TMP/work.err"
}

# speed_after -> like speed, but measured again (up to 3 windows, the
# fastest kept) while above the limit: other load on the machine inflates
# one window now and then, a probe left behind (+700 %) every window.
speed_after() {
	local c w n i=1 best=
	while :; do
		read -r c w n < <(speed "$WINDOW")
		if [ -z "$best" ] || [ "$c" -lt "${best%% *}" ]; then
			best="$c $w $n"
		fi
		awk -v a="${best%% *}" -v b="$BASE_CPU" -v m="$MAX_SLOWDOWN" \
			'BEGIN { exit !(a <= b * (1 + m / 100)) }' && break
		[ $i -lt 3 ] || break
		i=$((i + 1))
	done
	echo "$best $i"
}

t=0
while [ "$(rounds_done)" -lt 64 ]; do
	kill -0 "$WPID" 2>/dev/null || fail "churn exited early: $(cat "$TMP/work.out")"
	[ $t -lt 100 ] || fail "churn did not get through its seeds in 10 s"
	sleep 0.1
	t=$((t + 1))
done

# The heap grows to its steady size over the first rounds (slower ones).
sleep "$WARMUP"

# --- helpers for one tracer run ------------------------------------------
FIFO=$TMP/tracer.fifo
mkfifo "$FIFO"

# tracer_start OUTDIR ARGS...: starts the tracer on the target, waits for
# "attached"; sets TPID, TFD (its stderr), ATTACH_MS, NPROBES, IDS
tracer_start() {
	local out=$1 line t0
	shift
	t0=$(now_ms)
	"$TRACER" -p "$WPID" -o "$out" "$@" >/dev/null 2>"$FIFO" &
	TPID=$!
	BG_PIDS+=("$TPID")
	exec {TFD}<"$FIFO"
	TLOG=
	while IFS= read -r -t 60 -u "$TFD" line; do
		TLOG+="$line"$'\n'
		case $line in *"attached to PID $WPID"*) break ;; esac
	done
	case $line in
	*"attached to PID $WPID"*) ;;
	*) fail "cycle $CYCLE: the tracer did not attach: $TLOG" ;;
	esac
	ATTACH_MS=$(($(now_ms) - t0))
	NPROBES=$(sed -n 's/.*: \([0-9]*\) probes, writing.*/\1/p' <<<"$line")
	[ -n "$NPROBES" ] || fail "cycle $CYCLE: no probe count in '$line'"
	IDS=$(grep -hE '^(link|prog)_id:' /proc/$TPID/fdinfo/* 2>/dev/null | sort -u | tr -s ' \t' ' ')
	grep -q '^link_id:' <<<"$IDS" || fail "cycle $CYCLE: no BPF link in the tracer's fdinfo"
}

# tracer_reaped STATUS: reads the rest of its stderr; checks the status
tracer_reaped() {
	local want=$1 rc=$2
	TLOG+=$(cat <&"$TFD")
	exec {TFD}<&-
	BG_PIDS=("$WPID") # the tracer's PID may be reused from now on
	[ "$rc" -eq "$want" ] || fail "cycle $CYCLE: tracer exit $rc, want $want: $TLOG"
}

# link_holders -> the processes holding uprobe_multi links on the target's
# executable (their fdinfo names the path), for a failure message
link_holders() {
	local f pid exe
	exe=$(readlink "/proc/$WPID/exe")
	grep -lsx "path:.$exe" /proc/[0-9]*/fdinfo/* | while read -r f; do
		pid=${f#/proc/}
		pid=${pid%%/*}
		echo "PID $pid ($(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-60), for PID $(awk '$1 == "pid:" { print $2 }' "$f"))"
	done | sort -u | tr '\n' ';'
}

# nothing_left WHEN: no probe in the target's code and no link of the
# tracer in the kernel, within 5 s of its exit (the kernel removes a
# link's uprobes and frees its ID when the last reference goes: at the
# exit, unless another process, e.g. a `bpftool link` listing, holds one
# for a moment), and its programs gone within 5 s more (an uprobe_multi
# link drops its program only after RCU grace periods).  Keeps the
# longest waits in MAX_TEXT_LAG_MS and MAX_LAG_MS.
nothing_left() {
	local p ids id kind t0 t left lag
	t0=$(now_ms)
	while :; do
		t=$(now_ms) # the wait is until the check that succeeds starts
		p=$(text_patched "$WPID") || fail "$1: cannot read the target's code"
		ids=$(bpftool link show -j | jq -r '.[] | "link_id: \(.id)"') ||
			fail "$1: cannot list BPF links"
		left=$(grep -c -x -F -f <(grep '^link_id:' <<<"$IDS") <<<"$ids")
		[ "$p" -eq 0 ] && [ "$left" -eq 0 ] && break
		[ $(($(now_ms) - t0)) -lt 5000 ] ||
			fail "$1: 5 s after the tracer's exit, $p bytes of the target's code differ from its file and $left of its BPF links exist; uprobe links on the target's executable: $(link_holders)"
		sleep 0.05
	done
	lag=$((t - t0))
	[ "$lag" -le "$MAX_TEXT_LAG_MS" ] || MAX_TEXT_LAG_MS=$lag
	t0=$(now_ms)
	while :; do
		t=$(now_ms)
		ids=$(bpftool prog show -j | jq -r '.[] | "prog_id: \(.id)"') ||
			fail "$1: cannot list BPF programs"
		left=$(grep -c -x -F -f <(grep '^prog_id:' <<<"$IDS") <<<"$ids")
		[ "$left" -eq 0 ] && break
		[ $(($(now_ms) - t0)) -lt 5000 ] ||
			fail "$1: $left BPF programs of the dead tracer still exist 5 s after its links went"
		sleep 0.05
	done
	lag=$((t - t0))
	[ "$lag" -le "$MAX_LAG_MS" ] || MAX_LAG_MS=$lag
}
MAX_LAG_MS=0
MAX_TEXT_LAG_MS=0

# --- 2. speed untraced, then traced --------------------------------------
read -r BASE_CPU BASE_WALL BASE_N < <(speed "$WINDOW")
[ "$BASE_N" -ge 10 ] || fail "churn made $BASE_N rounds in $WINDOW s"
CYCLE=speed
tracer_start "$TMP/speed"
P=$(text_patched "$WPID") || fail "cannot read the target's code"
[ "$P" -eq "$NPROBES" ] ||
	fail "attached: $P bytes of the target's code differ from its file, want $NPROBES (one per probe)"
read -r ON_CPU ON_WALL ON_N < <(speed "$WINDOW")
kill -INT "$TPID"
wait "$TPID"
tracer_reaped 0 $?
nothing_left "after the speed run"
rm -rf "$TMP/speed"

# --- 3. cycles ------------------------------------------------------------
ATT=()
DET=()
validated=0
for ((CYCLE = 1; CYCLE <= CYCLES; CYCLE++)); do
	out=$TMP/c
	tracer_start "$out" -g 100ms
	ATT+=("$ATTACH_MS")
	P=$(text_patched "$WPID") || fail "cycle $CYCLE: cannot read the target's code"
	[ "$P" -eq "$NPROBES" ] ||
		fail "cycle $CYCLE: attached, $P bytes of the target's code differ from its file, want $NPROBES"
	sleep "$(awk -v r=$RANDOM -v m="$DWELL_MS" 'BEGIN { printf "%.3f", r / 32768 * m / 1000 }')"
	t0=$(now_ms)
	kill -INT "$TPID"
	wait "$TPID"
	rc=$?
	DET+=($(($(now_ms) - t0)))
	tracer_reaped 0 $rc
	kill -0 "$WPID" 2>/dev/null || fail "cycle $CYCLE: the target died: $(cat "$TMP/work.out")"
	nothing_left "cycle $CYCLE"
	if [ $CYCLE -eq 1 ] || [ $CYCLE -eq "$CYCLES" ] || [ $((CYCLE % VALIDATE_EVERY)) -eq 0 ]; then
		files=("$out"/*.trace)
		[ -f "${files[0]}" ] || fail "cycle $CYCLE: no trace file: $TLOG"
		check_files "$TMP/check" "${files[@]}"
		validated=$((validated + ${#files[@]}))
	fi
	rm -rf "$out"
	if [ $((CYCLE % 100)) -eq 0 ]; then
		echo "  $CYCLE cycles, target at round $(rounds_done)"
	fi
done
CYCLES_DONE=$((CYCLE - 1))

# --- 4. after the last detach -----------------------------------------
# perf-event and uprobe_multi probes are not tracefs events: the tracer
# never adds any, and none of the target's executable may be there.
EXE=$(readlink "/proc/$WPID/exe")
UPEV=$(unshare -m --propagation private sh -c \
	'mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
	 cat /sys/kernel/tracing/uprobe_events' 2>&1) ||
	fail "cannot read uprobe_events: $UPEV"
if grep -qF "$EXE" <<<"$UPEV"; then
	fail "uprobe_events names the target's executable: $(grep -F "$EXE" <<<"$UPEV")"
fi
read -r AFTER_CPU AFTER_WALL AFTER_N AFTER_TRIES < <(speed_after)

# --- 5. SIGKILL --------------------------------------------------------
KILL_NOTES=()
REAP=()
exec 3>&2 2>/dev/null # no "Killed" job notices
for ((k = 1; k <= KILLS; k++)); do
	CYCLE=kill$k
	out=$TMP/k$k
	tracer_start "$out" -g 200ms -r 1M
	sleep "$(awk -v r=$RANDOM 'BEGIN { printf "%.3f", 0.4 + r / 32768 }')"
	t0=$(now_ms)
	kill -KILL "$TPID"
	wait "$TPID"
	rc=$?
	REAP+=($(($(now_ms) - t0)))
	tracer_reaped 137 $rc
	kill -0 "$WPID" 2>/dev/null || fail "$CYCLE: the target died: $(cat "$TMP/work.out")"
	nothing_left "$CYCLE (tracer reaped)"
	files=("$out"/*.trace)
	n=${#files[@]}
	[ -f "${files[0]}" ] || fail "$CYCLE: no trace file written before the kill"
	[ "$n" -gt 1 ] && check_files "$TMP/check" "${files[@]:0:n-1}"
	newest=${files[n - 1]}
	note="$n files"
	"$TC123" "$newest" >"$TMP/newest.tc123" 2>&1
	"$TC127" "$newest" >"$TMP/newest.tc127" 2>&1
	if [ "$(stat -c %s "$newest")" -le 16 ]; then
		# Killed between creating it and writing its first generation.
		note="$note, newest cut before its first generation"
	elif [ "$(kv "$TMP/newest.tc123" valid)" != 1 ] || [ "$(kv "$TMP/newest.tc127" valid)" != 1 ]; then
		read -r off gens complete ended <<<"$(last_gen_offset "$newest")"
		# Batches stream as they fill: a kill between two leaves a file
		# that ends at a boundary, but not after its last generation's end.
		[ "$complete" = 0 ] || [ "$ended" = 0 ] ||
			fail "$CYCLE: newest file ends with a whole generation but is invalid: $(grep -m1 ^error "$TMP/newest.tc127")"
		note="$note, newest cut inside its generation $gens"
		if [ "$gens" -gt 1 ]; then
			head -c "$off" "$newest" >"$TMP/whole.trace"
			check_files "$TMP/check" "$TMP/whole.trace"
		fi
	fi
	compgen -G "$out/*.summary.json" >/dev/null && note="$note, summary.json" || note="$note, no summary.json"
	KILL_NOTES+=("$note")
	validated=$((validated + n))
	rm -rf "$out"
done
exec 2>&3 3>&-
read -r KAFTER_CPU KAFTER_WALL KAFTER_N KAFTER_TRIES < <(speed_after)

# --- 6. the target's own result ----------------------------------------
kill -USR1 "$WPID"
wait_exit "$WPID" 60
WRC=$?
[ $WRC -eq $REF_RC ] || fail "target exit status $WRC, untraced $REF_RC: $(cat "$TMP/work.out")"
cmp -s "$TMP/work.out" "$TMP/ref.out" ||
	fail "target output '$(cat "$TMP/work.out")', untraced '$(cat "$TMP/ref.out")'"
ROUNDS=$(($(rounds_done) + 1))

# --- figures --------------------------------------------------------------
stats() { # values... -> "mean p99 max" (integers)
	printf '%s\n' "$@" | sort -n | awk '{ v[n++] = $1; s += $1 }
		END { i = int(n * 0.99); if (i >= n) i = n - 1
		      printf "%d %d %d\n", s / n, v[i], v[n - 1] }'
}
read -r AM AP AX < <(stats "${ATT[@]}")
read -r DM DP DX < <(stats "${DET[@]}")
slow() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f%%", (a - b) / b * 100 }'; }
echo "  cycles: $CYCLES_DONE attach/detach + $KILLS SIGKILL; target: $ROUNDS rounds, output and exit status ($WRC) as untraced"
echo "  attach (start to \"attached\"): mean $AM ms, p99 $AP ms, max $AX ms"
echo "  detach (SIGINT to exit, last generation written): mean $DM ms, p99 $DP ms, max $DX ms"
if [ "$KILLS" -gt 0 ]; then
	read -r KM KP KX < <(stats "${REAP[@]}")
	echo "  SIGKILL to reaped (kernel closes the links): mean $KM ms, max $KX ms"
	printf '  kill %s\n' "${KILL_NOTES[@]}"
fi
echo "  after each exit: no probe in the target's code and no link within $MAX_TEXT_LAG_MS ms; programs freed within $MAX_LAG_MS ms more"
echo "  uprobe_events after: $(grep -c . <<<"$UPEV") entries, none of the target's executable"
echo "  $validated trace files validated (Go 1.23 and 1.27 parsers)"
echo "  CPU per round (median over $WINDOW s): untraced $BASE_CPU us ($BASE_N rounds); traced $ON_CPU us ($(slow "$ON_CPU" "$BASE_CPU")); after the last detach $AFTER_CPU us ($(slow "$AFTER_CPU" "$BASE_CPU"), window $AFTER_TRIES of 3); after the kills $KAFTER_CPU us ($(slow "$KAFTER_CPU" "$BASE_CPU"), window $KAFTER_TRIES of 3)"
echo "  wall per round (median): untraced $BASE_WALL us, traced $ON_WALL us, after $AFTER_WALL us, after the kills $KAFTER_WALL us"

for pair in "after the last detach:$AFTER_CPU" "after the kills:$KAFTER_CPU"; do
	awk -v a="${pair##*:}" -v b="$BASE_CPU" -v m="$MAX_SLOWDOWN" 'BEGIN { exit !(a <= b * (1 + m / 100)) }' ||
		fail "${pair%%:*} the target needs $(slow "${pair##*:}" "$BASE_CPU") CPU per round (limit +$MAX_SLOWDOWN%)"
done
awk -v a="$ON_CPU" -v b="$BASE_CPU" -v m="$MAX_SLOWDOWN" 'BEGIN { exit !(a > b * (1 + m / 100)) }' ||
	fail "the speed measure does not see the probes: traced $ON_CPU us per round, untraced $BASE_CPU us"
pass "$CYCLES_DONE cycles and $KILLS kills; target unharmed"
