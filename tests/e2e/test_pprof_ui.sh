#!/bin/bash
# test_pprof_ui - `traceaf-bpf pprof` as `go tool pprof` shows it, on
# leaky (tests/go/leaky: main.leak keeps what it allocates, main.churn
# makes garbage) traced with --stacks, Go 1.23 plain, Go 1.27 PIE and
# stripped PIE: the profile's mapping names the executable (and, from Go
# 1.24 on, its GNU build ID as readelf prints it), so pprof prints no
# warning about the binary and disassembles main.leak with the samples on
# its call to the allocator (the PCs are link addresses, PIE or not; pprof
# finds functions to disassemble by the symbol table, which a stripped
# binary lacks, so not there); the start time
# is today's; shortlived_space puts main.churn first and survived_space
# main.leak; -diff_base between the two runs works.
source "$(dirname "$0")/lib/lib.sh"
GO=/usr/lib/go-1.27/bin/go
GO123=/usr/lib/go-1.23/bin/go
ARGS=(-n 20000 -steps 12 -step 50ms -churn 20000)

[ -x "$TRACER" ] || fail "tracer not built: $TRACER"
[ -x "$GO" ] && [ -x "$GO123" ] || fail "no Go 1.27 / 1.23 (run make deps)"
export GOTOOLCHAIN=local GOFLAGS= HOME=${HOME:-/tmp}

pprof_out() {	# GO ARGS... -> stdout and stderr, or fail
	local go=$1
	shift
	"$go" tool pprof "$@" >"$TMP/pp.out" 2>&1 ||
		fail "go tool pprof $*: $(tail -n 3 "$TMP/pp.out")"
	if grep -qi 'binary filename\|symbolization failed\|build ID mismatch' "$TMP/pp.out"; then
		fail "go tool pprof $* warns: $(grep -i binary "$TMP/pp.out" | head -n 2)"
	fi
	cat "$TMP/pp.out"
}

first_row() {	# the function of the first row of a -top listing
	awk 'seen { print $NF; exit } $1 == "flat" { seen = 1 }'
}

summary=""
for case in 1.23: 1.27:-pie 1.27:-stripped-pie; do
	ver=${case%%:*}
	flavour=${case#*:}
	LK=$(workload leaky "$ver" "$flavour") || exit 1
	exe=$(readlink -f "$LK")
	out=$TMP/out$ver$flavour
	mkdir -p "$out"
	GOGC=20 "$TRACER" -o "$out" --stacks -- "$LK" "${ARGS[@]}" \
		>"$TMP/work$ver.log" 2>"$TMP/tracer$ver.err" ||
		fail "tracer ($ver): $(tail -n 3 "$TMP/tracer$ver.err" | tr '\n' ' ')"
	prof=$TMP/heap$ver$flavour.pb.gz
	"$TRACER" pprof "$out" -o "$prof" 2>"$TMP/p.err" ||
		fail "pprof ($ver): $(cat "$TMP/p.err")"

	raw=$(pprof_out "$GO" -raw "$prof") || { echo "$raw"; exit 1; }
	map=$(sed -n '/^Mappings/{n;p}' <<<"$raw")
	[[ $map == "1: 0x"*" $exe "* ]] || fail "mapping ($ver) does not name $exe: $map"
	[[ $map == *"[FN][FL][LN][IN]" ]] || fail "mapping ($ver) not marked symbolized: $map"
	gnu=$(readelf -n "$LK" | awk '$1 == "Build" && $2 == "ID:" { print $3 }')
	if [ -n "$gnu" ]; then
		[[ $map == *" $gnu "* ]] || fail "mapping ($ver) has not the build ID $gnu: $map"
	fi
	# "Time: 2026-12-03 13:22:36.60417465 +0000 UTC"
	when=$(sed -n 's/^Time: \([0-9-]* [0-9:]*\).*/\1/p' <<<"$raw")
	[ -n "$when" ] || fail "no Time in the profile ($ver)"
	t=$(date -u -d "$when UTC" +%s) || fail "bad Time $when ($ver)"
	age=$(( $(date +%s) - t ))
	[ "$age" -ge 0 ] && [ "$age" -lt 120 ] || fail "profile time $when is ${age}s ago ($ver)"

	short=$(pprof_out "$GO" -top -sample_index=shortlived_space "$prof" | first_row)
	[ "$short" = main.churn ] || fail "shortlived_space ($ver): first is '$short', want main.churn"
	surv=$(pprof_out "$GO" -top -sample_index=survived_space "$prof" | first_row)
	[ "$surv" = main.leak ] || fail "survived_space ($ver): first is '$surv', want main.leak"
	life=$(pprof_out "$GO" -top -sample_index=lifetime_space "$prof" | first_row)
	[ "$life" = main.leak ] || fail "lifetime_space ($ver): first is '$life', want main.leak"
	# Go 1.23's pprof too: no warning about the binary.
	pprof_out "$GO123" -top "$prof" >/dev/null || exit 1

	if [[ $flavour != *stripped* ]]; then
		dis=$(pprof_out "$GO" -disasm main.leak "$prof") || { echo "$dis"; exit 1; }
		grep -Eq '^ +[0-9.]+[kM]?B +[0-9.]+[kM]?B +[0-9a-f]+: +CALL runtime\.(newobject|mallocgc)' <<<"$dis" ||
			fail "-disasm main.leak ($ver$flavour): no samples on the allocating CALL: $(head -n 20 <<<"$dis")"
	fi
	cycles=$(sed -n 's/^Comment: traceaf-bpf: .*, \([0-9]*\) GC cycles.*/\1/p' <<<"$raw")
	# The tracer probes gcSweep: the comment counts the runtime's cycles.
	grep -q "GC cycles (the runtime's)" <<<"$raw" ||
		fail "pprof comment ($ver$flavour) does not count the runtime's GC cycles: $(grep -m1 'GC cycles' <<<"$raw")"
	summary+="go$ver$flavour: $map; GC cycles ${cycles:-?} (the runtime's); "
done

diff=$(pprof_out "$GO" -top -sample_index=alloc_space -diff_base "$TMP/heap1.23.pb.gz" "$TMP/heap1.27-pie.pb.gz") ||
	{ echo "$diff"; exit 1; }
grep -q '^Showing nodes accounting for' <<<"$diff" || fail "-diff_base: $(head -n 8 <<<"$diff")"
pass "$summary-diff_base ok"
