#!/bin/bash
# soak_stacks - a long --stacks run stays healthy (issue 13, item 3).  Run
# by `make soak` (scripts/soak.sh; SOAK_SECS, default 3600); not part of
# `make test`.
#
# Target: churn (tests/go/churn, Go $VER, default 1.27), started by the
# tracer (-- CMD) with --stacks -r 64M -n 4 -v, stopped with SIGTERM
# after $SOAK_SECS s (passed on to churn, which ends its round, prints its
# checksum line and exits).  Checks:
#   - at most $MAX_WHOLE_PCT % (default 5) of the allocations with a stack
#     record were sent whole (the stack map had no room: the two maps
#     alternate per epoch, user/attach/stack_maps.h);
#   - the daemon's RSS (its -v lines, one a second) is flat after the
#     first $WARMUP s (default a third of the run, at most 300): no
#     sample after it above the sample at it by more than $RSS_SLACK_PCT %
#     (default 10) or 8 MiB; samples are printed every $SAMPLE_EVERY s;
#   - exactly 4 trace files are kept, each with its stack sidecar, and
#     every one is valid for Go 1.23's and Go 1.27's parsers;
#   - churn never printed a checksum mismatch, and exited 0.
# TRACER_BIN overrides the tracer (e.g. an older build, for "before").
source "$(cd "$(dirname "$0")/../e2e/lib" && pwd)/lib.sh"
VER=${VER:-1.27}
SOAK_SECS=${SOAK_SECS:-3600}
MAX_WHOLE_PCT=${MAX_WHOLE_PCT:-5}
RSS_SLACK_PCT=${RSS_SLACK_PCT:-10}
WARMUP=${WARMUP:-$(( SOAK_SECS / 3 < 300 ? SOAK_SECS / 3 : 300 ))}
SAMPLE_EVERY=${SAMPLE_EVERY:-$(( SOAK_SECS / 12 > 10 ? SOAK_SECS / 12 : 10 ))}
TRACER=${TRACER_BIN:-$TRACER}

CHURN=$(workload churn "$VER")
TC123=$(tracecheck 1.23)
TC127=$(tracecheck 1.27)
OUT=$TMP/out
LOG=$TMP/tracer.log

start_bg "$LOG" "$TRACER" --stacks -r 64M -n 4 -v -o "$OUT" -- "$CHURN"
tracer=$BG_PID
wait_for_line "$LOG" attached 60 || fail "not attached in 60 s: $(tail -n 3 "$LOG")"
t0=$(date +%s)
echo "soak: $SOAK_SECS s of churn (Go $VER) under --stacks -r 64M -n 4, $(date -u +%FT%TZ), Linux $(uname -r)"
while [ $(( $(date +%s) - t0 )) -lt "$SOAK_SECS" ]; do
	kill -0 "$tracer" 2>/dev/null || fail "the tracer ended early: $(tail -n 5 "$LOG")"
	sleep 5
done
kill -TERM "$tracer"
wait_exit "$tracer" 120
rc=$?
[ $rc -ne 124 ] || fail "the tracer did not stop within 120 s of SIGTERM"

# The -v lines: "...; daemon RSS N KiB", then "stacks: N allocations with a
# stack record, M sent whole (P%), ...", once a second.
awk '/daemon RSS/ { for (i = 1; i < NF; i++) if ($i == "RSS") print $(i + 1) }' \
	"$LOG" >"$TMP/rss"
n=$(wc -l <"$TMP/rss")
[ "$n" -ge 3 ] || fail "only $n -v progress lines with the daemon's RSS"
echo "soak: daemon RSS (KiB) every $SAMPLE_EVERY s:" \
	"$(awk -v e="$SAMPLE_EVERY" 'NR == 1 || NR % e == 0 { printf "%s%s", sep, $1; sep = " " }' "$TMP/rss")"
at=$(( WARMUP < n ? WARMUP : n ))
base=$(sed -n "${at}p" "$TMP/rss")
peak=$(tail -n +"$at" "$TMP/rss" | sort -n | tail -n 1)
echo "soak: RSS at ${at} s $base KiB, highest after it $peak KiB ($(pct "$peak" "$base") %)"
awk -v p="$peak" -v b="$base" -v s="$RSS_SLACK_PCT" \
	'BEGIN { exit !(p <= b * (1 + s / 100) || p - b <= 8192) }' ||
	fail "daemon RSS grew after ${at} s: $base -> $peak KiB"

line=$(grep '^traceaf-bpf: stacks: .* sent whole' "$LOG" | tail -n 1)
seen=$(sed -n 's/.*stacks: \([0-9]*\) allocations with a stack record.*/\1/p' <<<"$line")
whole=$(sed -n 's/.*, \([0-9]*\) sent whole.*/\1/p' <<<"$line")
[ -n "$seen" ] && [ "$seen" -gt 0 ] || fail "no --stacks counts in the -v lines: $line"
echo "soak: $seen allocations with a stack record, $whole sent whole" \
	"($(awk -v w="$whole" -v s="$seen" 'BEGIN { printf "%.2f", 100 * w / s }') %)"
awk -v w="$whole" -v s="$seen" -v m="$MAX_WHOLE_PCT" 'BEGIN { exit !(w <= s * m / 100) }' ||
	fail "more than $MAX_WHOLE_PCT % of stacks sent whole: $whole of $seen"

grep -q mismatch "$LOG" && fail "churn: $(grep -m1 mismatch "$LOG")"
[ $rc -eq 0 ] || fail "tracer (churn's status) exited $rc: $(grep -E '^done|traceaf-bpf: (PID|done)' "$LOG" | tail -n 3)"

mapfile -t files < <(ls "$OUT"/*.trace 2>/dev/null)
echo "soak: files kept: $(for f in "${files[@]}"; do printf '%s (%s bytes) ' "$(basename "$f")" "$(stat -c %s "$f")"; done)"
[ "${#files[@]}" -eq 4 ] || fail "${#files[@]} trace files kept, want 4"
for f in "${files[@]}"; do
	[ -s "$f.stacks" ] || fail "no stack sidecar for $(basename "$f")"
done
check_files "$TMP/tc" "${files[@]}"
pass "$SOAK_SECS s: $whole of $seen stacks sent whole, RSS $base -> $peak KiB after ${at} s, 4 valid files"
