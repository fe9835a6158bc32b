#!/bin/bash
# test_report - `traceaf-bpf report` and `traceaf-bpf pprof` on a program
# that leaks one type through one function (tests/go/leaky: main.leak
# appends a new *main.leakRecord to a global slice; main.churnNode and
# []byte are garbage at once), traced from its start (-- CMD, Go 1.27):
#  - report --json names main.leakRecord as the top leak suspect, counts
#    at least 99.9% of the N leakRecords the program says it made (and
#    no more), all of them live at the end, and main.churnNode is no
#    suspect;
#  - its totals equal the tracer's own account (summary.json: the
#    HeapObjectAlloc and HeapObjectFree events written);
#  - with --stacks (when the tracer has it), the suspect's site is
#    main.leak;
#  - the terminal report lists it under LEAK SUSPECTS, --html writes a
#    page that names it;
#  - `go tool pprof -top` (Go 1.27) on the exported profile lists
#    main.leakRecord (main.leak with stacks; main.leakRecord again with
#    pprof --no-stacks) first;
#  - the runtime's own trace of the same run (GODEBUG=traceallocfree=1,
#    runtime/trace) gives the same top suspect, with exactly N allocs;
#  - a rotated DIR written by gen_sample_trace (trace_writer + trace_sink,
#    each new file starting with "exists" events for all that is live) is
#    one timeline: per type allocs are the sums of the files' .expect
#    lines, no "exists" counted again, no event out of place.
source "$(dirname "$0")/lib/lib.sh"
N=${N:-20000}
ARGS=(-n "$N" -steps 24 -step 50ms -churn 3000)
GO=/usr/lib/go-1.27/bin/go

[ -x "$TRACER" ] || fail "tracer not built: $TRACER"
LK=$(workload leaky 1.27) || { echo "$LK"; exit 1; }
STACKS=()
if "$TRACER" --help | grep -q -- '--stacks'; then
	STACKS=(--stacks)
fi

# check_json FILE N WANT_SITE [SUMMARY]: the report's claims, in python.
check_json() {
	python3 - "$@" <<'EOF'
import json, sys
path, n, want_site = sys.argv[1], int(sys.argv[2]), sys.argv[3]
summary = sys.argv[4] if len(sys.argv) > 4 else ""
d = json.load(open(path))
assert len(d["processes"]) == 1, "want one process, got %d" % len(d["processes"])
p = d["processes"][0]
types = {t["name"]: t for t in p["types"]}
sus = p["leak_suspects"]
if not sus:
    sys.exit("no leak suspect (checkpoints %d)" % p["checkpoints"])
if sus[0]["type"] != "main.leakRecord":
    sys.exit("top leak suspect is %s, want main.leakRecord" % sus[0]["type"])
if any(s["type"] == "main.churnNode" for s in sus):
    sys.exit("main.churnNode (garbage) reported as a leak suspect")
lr = types["main.leakRecord"]
if not (n * 0.999 <= lr["allocs"] <= n):
    sys.exit("main.leakRecord allocs %d, want >= 99.9%% of %d" % (lr["allocs"], n))
if lr["live"] != lr["allocs"] or lr["frees"]:
    sys.exit("main.leakRecord live %d frees %d, allocs %d" % (lr["live"], lr["frees"], lr["allocs"]))
if lr["alloc_bytes"] != 192 * lr["allocs"]:
    sys.exit("main.leakRecord bytes %d, want 192 per object" % lr["alloc_bytes"])
if want_site:
    site = sus[0]["site"]
    if not site or not site["func"].startswith(want_site):
        sys.exit("leak site %s, want %s" % (site, want_site))
    if not any(st["type"] == "main.leakRecord" and
               st["frames"][0]["func"].startswith(want_site) for st in p["stacks"]):
        sys.exit("no call stack of main.leakRecord starting in %s" % want_site)
if summary:
    s = json.load(open(summary))
    w = s["events_written"]
    tot = p["totals"]
    if tot["allocs"] != w["HeapObjectAlloc"] or tot["frees"] != w["HeapObjectFree"]:
        sys.exit("report allocs/frees %d/%d, tracer wrote %d/%d" % (
            tot["allocs"], tot["frees"], w["HeapObjectAlloc"], w["HeapObjectFree"]))
    if sum(t["allocs"] for t in p["types"]) != w["HeapObjectAlloc"]:
        sys.exit("per-type allocs do not add up to the tracer's count")
print("%s allocs %d/%d live %d, suspects %s, site %s" % (
    sus[0]["type"], lr["allocs"], n, lr["live"],
    ",".join(x["type"] for x in sus), sus[0]["site"] and sus[0]["site"]["func"]))
EOF
}

# 1. Traced by us, from its first instruction.
mkdir -p "$TMP/out"
"$TRACER" -o "$TMP/out" -g 200ms "${STACKS[@]}" -- "$LK" "${ARGS[@]}" \
	>"$TMP/work.log" 2>"$TMP/tracer.err" ||
	fail "tracer: $(tail -n 3 "$TMP/tracer.err" | tr '\n' ' ')"
made=$(sed -n 's/^done leaked=\([0-9]*\) .*/\1/p' "$TMP/work.log")
[ "$made" = "$N" ] || fail "workload: $(cat "$TMP/work.log")"
summary=$(ls "$TMP/out"/*.summary.json 2>/dev/null | head -n 1)
[ -f "$summary" ] || fail "no summary.json"

"$TRACER" report --json "$TMP/out" >"$TMP/r.json" 2>"$TMP/r.err" ||
	fail "report --json: $(cat "$TMP/r.err")"
site=""
[ ${#STACKS[@]} -gt 0 ] && site=main.leak
ours=$(check_json "$TMP/r.json" "$N" "$site" "$summary") || fail "ours: $ours"

"$TRACER" report "$TMP/out" --html "$TMP/heap.html" >"$TMP/r.txt" 2>"$TMP/r.err" ||
	fail "report: $(cat "$TMP/r.err")"
sed -n '/^LEAK SUSPECTS/,/^$/p' "$TMP/r.txt" | grep -q '^  main.leakRecord: live' ||
	fail "text report: no main.leakRecord under LEAK SUSPECTS: $(sed -n '/^LEAK/,/^$/p' "$TMP/r.txt" | tr '\n' ' ')"
grep -q 'main.leakRecord' "$TMP/heap.html" || fail "--html page does not name main.leakRecord"

# 2. pprof: the leaked type (or, with stacks, function) first.
"$TRACER" pprof "$TMP/out" -o "$TMP/heap.pb.gz" 2>"$TMP/p.err" ||
	fail "pprof: $(cat "$TMP/p.err")"
top=$("$GO" tool pprof -top "$TMP/heap.pb.gz" 2>/dev/null |
	awk 'seen { print $NF; exit } $1 == "flat" { seen = 1 }')
want=main.leakRecord
[ ${#STACKS[@]} -gt 0 ] && want=main.leak
[ "$top" = "$want" ] || fail "go tool pprof -top: first is '$top', want $want"
if [ ${#STACKS[@]} -gt 0 ]; then
	# By type, as a trace without stacks gives it.
	"$TRACER" pprof --no-stacks "$TMP/out" -o "$TMP/bytype.pb.gz" 2>"$TMP/p.err" ||
		fail "pprof --no-stacks: $(cat "$TMP/p.err")"
	bytype=$("$GO" tool pprof -top "$TMP/bytype.pb.gz" 2>/dev/null |
		awk 'seen { print $NF; exit } $1 == "flat" { seen = 1 }')
	[ "$bytype" = main.leakRecord ] ||
		fail "go tool pprof -top (--no-stacks): first is '$bytype', want main.leakRecord"
	top="$top (by type: $bytype)"
fi

# 3. The runtime's own trace of the same program.
GODEBUG=traceallocfree=1 "$LK" "${ARGS[@]}" -native "$TMP/native.trace" >"$TMP/native.log" ||
	fail "native run: $(cat "$TMP/native.log")"
"$TRACER" report --json "$TMP/native.trace" >"$TMP/n.json" 2>"$TMP/n.err" ||
	fail "report of the native trace: $(cat "$TMP/n.err")"
native=$(check_json "$TMP/n.json" "$N" "") || fail "native: $native"
python3 -c "import json,sys; t={x['name']:x for x in json.load(open(sys.argv[1]))['processes'][0]['types']}; sys.exit(t['main.leakRecord']['allocs'] != int(sys.argv[2]))" \
	"$TMP/n.json" "$N" || fail "native trace: main.leakRecord allocs differ from $N"

# 4. Rotation: several files, one process, nothing counted twice.
${CC:-cc} -std=gnu11 -O2 -Wall -Wextra -Werror -Wno-unused-parameter \
	-D_GNU_SOURCE -I"$ROOT/include" -I"$ROOT/user" "$ROOT/tests/e2e/lib/gen_sample_trace.c" \
	"$ROOT/user/format/trace_events.c" "$ROOT/user/format/type_catalog.c" "$ROOT/user/format/trace_writer.c" "$ROOT/user/format/trace_sink.c" \
	"$ROOT/user/util/u64_map.c" -o "$TMP/gen" || fail "cannot build gen_sample_trace"
mkdir "$TMP/sample"
"$TMP/gen" "$TMP/sample" 6 800000 >"$TMP/sample.files" || fail "gen_sample_trace failed"
"$TRACER" report --json "$TMP/sample" >"$TMP/s.json" 2>"$TMP/s.err" ||
	fail "report of the rotated sample: $(cat "$TMP/s.err")"
rotated=$(python3 - "$TMP/s.json" "$TMP/sample"/*.expect <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["processes"]) == 1, "%d processes, want 1" % len(d["processes"])
p = d["processes"][0]
want, frees, first_exists = {}, 0, None
for path in sys.argv[2:]:
    exists = 0
    for line in open(path):
        f = line.split()
        if f[0] == "type" and f[-2] == "allocs":
            name = " ".join(f[1:-3])
            want[name] = want.get(name, 0) + int(f[-1])
        if f[0] == "type" and f[-2] == "exists":
            exists += int(f[-1])
        if f[:2] == ["ev", "HeapObjectFree"]:
            frees += int(f[2])
    if first_exists is None:
        first_exists = exists
got = {t["name"]: t["allocs"] for t in p["types"] if t["allocs"]}
if got != want:
    bad = [(k, got.get(k), want.get(k)) for k in set(got) | set(want) if got.get(k) != want.get(k)]
    sys.exit("per type allocs differ (type, report, expect): %s" % bad[:5])
a, t = p["anomalies"], p["totals"]
if a["alloc_of_live"] or a["free_of_unknown"] or a["span_free_unknown"] or a["stack_free_unknown"]:
    sys.exit("anomalies in a consistent trace: %s" % a)
if t["exists"] != first_exists or t["frees"] != frees:
    sys.exit("exists %d (want %d, the first file's), frees %d (want %d)" % (t["exists"], first_exists, t["frees"], frees))
if t["live"] != sum(want.values()) + first_exists - frees:
    sys.exit("live %d, want allocs - frees" % t["live"])
if len(p["files"]) < 2:
    sys.exit("%d file(s): not rotated" % len(p["files"]))
print("%d files, %d types, %d allocs, %d frees" % (len(p["files"]), len(got), t["allocs"], t["frees"]))
EOF
) || fail "rotated sample: $rotated"

pass "rotated sample: $rotated; ours (${STACKS[*]:-no stacks}): $ours; pprof top $top; native: $native"
