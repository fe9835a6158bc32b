#!/bin/bash
# test_memprofilerate_program_rate - a program that sets
# runtime.MemProfileRate itself after --memprofilerate did is named, once:
# from then on its samples are made at its rate (at 0, none), which
# without a word looked like a program that stopped allocating.
#
# liveprof (Go 1.23 and 1.27 stripped PIE) started under
# `--memprofilerate 4096 -- liveprof -rate R`: with R = 8192 it sets the
# variable in main, after the tracer set it at the exec stop, and runs
# two GCs (the tracer reads the variable at each GC cycle): one warning
# naming 8192 and 4096, files valid.  With R = 0 (liveprof leaves the
# variable alone): no such warning.
source "$(dirname "$0")/lib/lib.sh"

[ -x "$TRACER" ] || fail "tracer not built: $TRACER"
TC123=$(tracecheck 1.23) || exit 1
TC127=$(tracecheck 1.27) || exit 1

res=""
for spec in "1.23:" "1.27:-stripped-pie"; do
	ver=${spec%%:*} fl=${spec#*:}
	BIN=$(workload liveprof "$ver" "$fl") || exit 1
	for R in 8192 0; do
		log=$TMP/t$ver$R.log
		start_bg "$log" "$TRACER" --memprofilerate 4096 -o "$TMP/out$ver$R" -- \
			"$BIN" -n 2000 -rate "$R"
		TPID=$BG_PID
		wait_for_line "$log" '^ready' 60 ||
			fail "Go $ver$fl -rate $R: liveprof did not start: $(tail -n 3 "$log")"
		wpid=$(sed -n 's/^ready \([0-9]*\) .*/\1/p' "$log")
		# Its two GCs before "ready" are the tracer's moments to look
		# (read ~0.1 s later); after SIGUSR1 it exits at once.
		if [ "$R" = 0 ]; then
			sleep 1
		else
			wait_for_line "$log" 'set runtime.MemProfileRate' 10
		fi
		kill -USR1 "$wpid"
		wait_exit "$TPID" 60
		rc=$?
		[ $rc -eq 0 ] || fail "Go $ver$fl -rate $R: tracer exited $rc: $(tail -n 3 "$log")"
		n=$(grep -c "set runtime.MemProfileRate to" "$log")
		if [ "$R" = 0 ]; then
			[ "$n" = 0 ] || fail "Go $ver$fl: a warning though liveprof left the rate alone: $(grep MemProfileRate "$log")"
		else
			[ "$n" = 1 ] &&
				grep -q "PID $wpid set runtime.MemProfileRate to 8192 itself (--memprofilerate had set 4096)" "$log" ||
				fail "Go $ver$fl: want one warning naming 8192 and 4096, got $n: $(grep -i MemProfileRate "$log")"
		fi
		files=("$TMP/out$ver$R"/*.trace)
		check_files "$TMP/tc$ver$R" "${files[@]}"
	done
	res="$res Go $ver$fl: said at 8192, silent at 0;"
done
pass "$res"
