#!/bin/bash
# test_rotation_by_size - --rotate-size holds within one generation's size
# even when the period alone would make one long generation (issue 13,
# item 2: generations are also cut by size).
#
# fullwork -scale $SCALE (default 0.1: ~2.5 M events, a few seconds),
# Go 1.27, started by the tracer with -r 256K and a 10 s generation
# period, so that without the size cut the whole run is one generation in
# one file.  Generations are also cut at a quarter of --rotate-size (64K
# of encoded events after a file's exists events; session.h
# SESSION_GEN_SIZE_*).  Checks: at least 8 files; none above 256K + one
# generation (64K of events, plus the exists events repeated at the start
# of each file, ~200K of fullwork's live heap here, and the generation's
# tables: allowed 256K + 64K + SLACK, SLACK default 192K); every file
# valid for Go 1.23's and Go 1.27's tracecheck; main.Node summed over the
# files = what fullwork made (nothing lost at the cuts).
# Observed (2026-12-03, this VM): 44 files of 0.3-0.45 MB, 82 generations.
source "$(dirname "$0")/lib/lib.sh"
SCALE=${SCALE:-0.1}
SLACK=${SLACK:-196608}

[ -x "$TRACER" ] || fail "tracer not built: $TRACER"
TC123=$(tracecheck 1.23) || exit 1
TC127=$(tracecheck 1.27) || exit 1
bin=$(workload fullwork 1.27) || exit 1

"$TRACER" -r 256K -g 10s -o "$TMP/out" -- "$bin" -scale "$SCALE" -wait=false \
	>"$TMP/tracer.log" 2>&1 || fail "tracer (fullwork's status) failed: $(tail -n 5 "$TMP/tracer.log")"
grep -q '^done nodes=' "$TMP/tracer.log" || fail "workload output: $(grep -v '^traceaf' "$TMP/tracer.log" | tail -n 3)"

mapfile -t files < <(ls "$TMP"/out/*.trace)
n=${#files[@]}
max=0
for f in "${files[@]}"; do
	sz=$(stat -c %s "$f")
	[ "$sz" -gt "$max" ] && max=$sz
done
[ "$n" -ge 8 ] || fail "$n files with -r 256K (sizes up to $max bytes): the size cut did not split the 10 s generation"
limit=$((262144 + 65536 + SLACK))
[ "$max" -le "$limit" ] || fail "a file of $max bytes, more than 256K + one generation ($limit)"
check_files "$TMP/check" "${files[@]}"

# Every main.Node fullwork made is in exactly one file.
want=$(sed -n 's/^done nodes=\([0-9]*\).*/\1/p' "$TMP/tracer.log")
got=0
for f in "${files[@]}"; do
	c=$(kv "$TMP/check/$(basename "$f").tc127" "type main.Node 56 allocs")
	got=$((got + ${c:-0}))
done
[ "$got" -eq "$want" ] || fail "main.Node over $n files: $got, fullwork made $want"
pass "$n files of at most $max bytes (limit $limit), all valid, $got main.Node"
