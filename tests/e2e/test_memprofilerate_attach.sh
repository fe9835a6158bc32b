#!/bin/bash
# test_memprofilerate_attach - --memprofilerate's first file shows the
# heap-profile samples the program held before the tracer came, typed, and
# their frees follow.
#
# liveprof (Go 1.23 and Go 1.27 stripped PIE) runs its own heap profiler at
# 4096, keeps -n main.Keep values and prints how many of them its own
# runtime.MemProfile holds as live samples (S); `traceaf-bpf -p PID
# --memprofilerate 4096 -v` attaches; then SIGUSR1 drops them, two GCs
# sweep them and three more follow (-linger 3). Checked:
#  - the tracer read S' >= S live samples, at most 1 % without a type (-v
#    line; a runtime-internal allocation can pass no typed call site);
#  - tracecheck -replay: main.Keep exists events = S (the runtime's own
#    count: it does not change while liveprof waits), less the untyped
#    and unreadable samples of the -v line at most, every file
#    valid with Go 1.23's and 1.27's tracecheck, heap frees >= S and no
#    free of an unknown ID (the exists IDs are the addresses the frees name);
#  - with --stacks, the exists events carry their profile bucket's stack:
#    `report --json` of the first file puts every main.Keep exists event
#    at the site main.newKeep (the type's exists = that site's); the
#    estimate is S scaled as the runtime's scaleHeapSample does
#    (S / (1 - e^(-256/4096)), within 0.5 %), and on Go >= 1.24 it is N
#    within 15 % (S samples: ~3 % standard error). Go <= 1.23 keeps each
#    P's first sample point drawn at the old 512 KiB rate after the
#    program lowers MemProfileRate (only 1.24+ compares c.memProfRate in
#    mallocgc), so there S itself is short by up to a few 512 KiB draws
#    and only the scaling is checked.
# Observed (2026-12-03, this VM): S = 1282, exists 1282, 0-1 untyped; ~10 s.
source "$(dirname "$0")/lib/lib.sh"
N=${N:-20000}

[ -x "$TRACER" ] || fail "tracer not built: $TRACER"
TC123=$(tracecheck 1.23) || exit 1
TC127=$(tracecheck 1.27) || exit 1

res=""
for spec in "1.23:" "1.27:-stripped-pie"; do
	ver=${spec%%:*} fl=${spec#*:}
	BIN=$(workload liveprof "$ver" "$fl") || exit 1
	# -linger 3: three more GCs, 50 ms apart, after the two that free
	# the samples.  liveprof's ~1 200 samples are over the default
	# --pause-budget, so the daemon reads them during the marks; a mark
	# this small can end before the daemon's read does (a missed read,
	# counted and said), and without later marks the program exits with
	# its frees unread: 0 frees in about 1 run in 17 (2026-12-07).
	start_bg "$TMP/w$ver.log" "$BIN" -n "$N" -rate 4096 -linger 3
	WPID=$BG_PID
	wait_for_line "$TMP/w$ver.log" '^ready' 30 || fail "liveprof $ver did not start"
	S=$(sed -n 's/^ready [0-9]* samples=\([0-9]*\)$/\1/p' "$TMP/w$ver.log")
	[ -n "$S" ] && [ "$S" -gt 100 ] || fail "liveprof $ver holds '$S' samples, want > 100"
	OUT=$TMP/out$ver
	start_bg "$TMP/t$ver.log" "$TRACER" -v -p "$WPID" -o "$OUT" --memprofilerate 4096 --stacks
	TPID=$BG_PID
	wait_for_line "$TMP/t$ver.log" 'attached' 60 ||
		fail "tracer did not attach to liveprof $ver: $(cat "$TMP/t$ver.log")"
	line=$(grep 'live heap-profile samples' "$TMP/t$ver.log")
	[ -n "$line" ] || fail "no live-sample line (-v): $(cat "$TMP/t$ver.log")"
	read -r got untyped unread < <(sed -n 's/.*: \([0-9]*\) live heap-profile samples (\([0-9]*\) untyped, \([0-9]*\) unreadable).*/\1 \2 \3/p' <<<"$line")
	[ -n "$got" ] && [ "$got" -ge "$S" ] || fail "Go $ver$fl: read ${got:-?} live samples, the program holds $S: $line"
	[ $((untyped * 100)) -le "$got" ] || fail "Go $ver$fl: samples without a type: $line"
	kill -USR1 "$WPID"
	wait_exit "$WPID" 60
	rc=$?
	[ $rc -eq 0 ] || fail "liveprof $ver exited with $rc"
	wait_exit "$TPID" 60
	rc=$?
	[ $rc -eq 0 ] || fail "tracer exited with $rc: $(tail -n 5 "$TMP/t$ver.log")"
	files=("$OUT"/*.trace)
	[ -f "${files[0]}" ] || fail "no trace files for Go $ver"
	check_files "$TMP/check$ver" "${files[@]}"
	first=$TMP/check$ver/$(basename "${files[0]}").tc127
	ex=$(awk '$1 == "type" && $2 == "main.Keep" && $4 == "exists" { print $5; exit }' "$first")
	# Every one of the program's samples, typed main.Keep but for the
	# untyped ones (allowed above) and the unreadable ones the tracer
	# counted (once in about 25 runs one main.Keep sample came out one
	# short, before the line said which).
	[ "${ex:-0}" -le "$S" ] && [ $((${ex:-0} + untyped + unread)) -ge "$S" ] ||
		fail "Go $ver$fl: ${ex:-0} main.Keep exists events in the first file, the program's own profile holds $S: $line"
	"$TRACER" report --json "${files[0]}" >"$TMP/r$ver.json" || fail "Go $ver$fl: report failed"
	site=$(python3 - "$TMP/r$ver.json" "$N" "$S" "$ver" <<'PYX'
import json, math, sys
p = json.load(open(sys.argv[1]))["processes"][0]
n, s, ver = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
typ = sum(t["exists"] for t in p["types"] if t["name"] == "main.Keep")
at = sum(s["exists"] for s in p["sites"] if s["type"] == "main.Keep" and s["site"]["func"] == "main.newKeep")
want = s / (1 - math.exp(-256 / 4096))
ok = typ > 0 and at == typ and abs(typ - want) <= 0.005 * want
if int(ver.split(".")[1]) >= 24:
    ok = ok and abs(typ - n) <= 0.15 * n
print(("ok" if ok else "bad") + " type_exists=%d newKeep_exists=%d scaled_want=%.0f n=%d" % (typ, at, want, n))
PYX
)
	[[ $site == ok* ]] || fail "Go $ver$fl: exists events not at their site or not scaled as the runtime scales: $site"
	frees=0 unknown=0
	for f in "${files[@]}"; do
		o=$TMP/check$ver/$(basename "$f").tc127
		frees=$((frees + $(kv "$o" "replay heap frees")))
		unknown=$((unknown + $(kv "$o" "replay heap free_of_unknown")))
	done
	[ "$frees" -ge "$S" ] || fail "Go $ver$fl: $frees heap frees after dropping $S sampled objects"
	[ "$unknown" -eq 0 ] || fail "Go $ver$fl: $unknown frees of IDs the files never had"
	res="$res Go $ver$fl: $S samples live, $ex exists ($untyped untyped, $unread unreadable; ${site#ok }), $frees frees;"
done
pass "$res"
