#!/bin/bash
# test_report_before_trace - objects already live when the tracer
# attached are named for what they are.  tests/go/leaky (Go 1.27) leaks
# main.leakRecord for a while; the tracer attaches (-p, --stacks) once
# it holds some, so the first file starts with "exists" events for them:
#  - RETENTION gives them rows of their own, "live at trace start", and
#    --json marks those rows before_trace with no alloc_bytes, while every
#    other row has the allocations its share is of (no "0.0 % of its
#    bytes" for objects that are all retained);
#  - `go tool pprof -top` lists them as "TYPE [live before the trace]"
#    (the pseudo-frame of a sample without a stack), and no frame falls
#    back to the mapping's name ("[leaky-go1.27]", "[binary]"): pprof
#    drops names in angle brackets, like "<notype>".
source "$(dirname "$0")/lib/lib.sh"
GO=/usr/lib/go-1.27/bin/go

[ -x "$TRACER" ] || fail "tracer not built: $TRACER"
LK=$(workload leaky 1.27) || { echo "$LK"; exit 1; }

start_bg "$TMP/work.log" "$LK" -n 60000 -steps 100 -step 50ms
WPID=$BG_PID
sleep 1
kill -0 "$WPID" 2>/dev/null || fail "workload ended early: $(cat "$TMP/work.log")"
"$TRACER" --stacks -p "$WPID" -o "$TMP/out" -g 250ms >"$TMP/tracer.log" 2>&1 ||
	fail "tracer: $(tail -n 3 "$TMP/tracer.log")"
grep -q '^done leaked=60000' "$TMP/work.log" || fail "workload: $(cat "$TMP/work.log")"

"$TRACER" report --json "$TMP/out" >"$TMP/r.json" 2>"$TMP/r.err" ||
	fail "report --json: $(cat "$TMP/r.err")"
"$TRACER" report "$TMP/out" >"$TMP/r.txt" 2>"$TMP/r.err" ||
	fail "report: $(cat "$TMP/r.err")"
sed -n '/^RETENTION/,/^$/p' "$TMP/r.txt" >"$TMP/ret.txt"
grep -q 'objects live at trace start  ' "$TMP/ret.txt" ||
	fail "RETENTION has no 'live at trace start' row: $(tr '\n' ' ' <"$TMP/ret.txt")"
ret=$(python3 - "$TMP/r.json" 2>&1 <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))["processes"][0]
rows = p["retention"]
before = [r for r in rows if r["before_trace"]]
if not before:
    sys.exit("no before_trace row in retention: %s" % rows[:3])
for r in before:
    if r["alloc_bytes"] or not r["objects"] or not r["bytes"]:
        sys.exit("before_trace row with allocations or nothing in it: %s" % r)
for r in rows:
    if not r["before_trace"] and not r["alloc_bytes"]:
        sys.exit("row of objects allocated in the trace without alloc_bytes: %s" % r)
if p["totals"]["exists"] == 0:
    sys.exit("no exists events: the tracer saw no live object at attach")
print("%d of %d rows before the trace, %d B" % (len(before), len(rows),
      sum(r["bytes"] for r in before)))
EOF
) || fail "report --json: $ret"

"$TRACER" pprof "$TMP/out" -o "$TMP/heap.pb.gz" 2>"$TMP/p.err" ||
	fail "pprof: $(cat "$TMP/p.err")"
"$GO" tool pprof -sample_index=inuse_space -top -nodefraction=0 \
	"$TMP/heap.pb.gz" >"$TMP/top.txt" 2>/dev/null ||
	fail "go tool pprof -top failed"
grep -q ' \[live before the trace\]$' "$TMP/top.txt" ||
	fail "pprof -top names no frame '[live before the trace]': $(sed -n 6,12p "$TMP/top.txt" | tr '\n' ' ')"
if awk 'seen { print } $1 == "flat" { seen = 1 }' "$TMP/top.txt" |
	grep -q '  \[[^]]*\]$'; then
	fail "pprof -top shows a frame by its mapping's name: $(grep '  \[[^]]*\]$' "$TMP/top.txt" | head -n 3 | tr '\n' ' ')"
fi

pass "$ret; pprof: $(grep -c 'live before the trace' "$TMP/top.txt") types live before the trace"
