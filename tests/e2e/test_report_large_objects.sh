#!/bin/bash
# test_report_large_objects - report's bytes for large pointer-free
# objects (> 32 KiB, one to a span: a big []byte) match what the runtime
# itself counted.  tests/go/knownalloc -big 100 makes 100 x
# make([]byte, 131072) and 100 x make([]byte, 139264) (16 and 17 pages,
# noscan) and prints MemStats.TotalAlloc's delta over its loops; traced
# from its start (-- CMD, Go 1.27 and 1.21), `report --json` must give
# []uint8 200 allocations of those bytes and, over all types, at least
# the program's TotalAlloc delta (the tracer sees the program's start
# too, so its total can only be larger).  Sizing such an object by its
# element type (1 byte for uint8) gave 13.2 MB where the runtime
# counted 27.1 MB.
source "$(dirname "$0")/lib/lib.sh"
BIG=100
SIZES=131072,139264

[ -x "$TRACER" ] || fail "tracer not built: $TRACER"

results=()
for ver in 1.27 1.21; do
	BIN=$(workload knownalloc "$ver") || { echo "$BIN"; exit 1; }
	out=$TMP/out$ver
	log=$TMP/work$ver.log
	mkdir -p "$out"
	start_bg "$TMP/tracer$ver.log" "$TRACER" -o "$out" -g 250ms -- \
		"$BIN" -n 0 -big "$BIG" -bigsizes "$SIZES"
	TPID=$BG_PID
	wait_for_line "$TMP/tracer$ver.log" '^ready' 60 ||
		fail "go$ver: workload did not start: $(tail -n 5 "$TMP/tracer$ver.log")"
	wpid=$(sed -n 's/^ready \([0-9]*\)$/\1/p' "$TMP/tracer$ver.log" | head -n 1)
	[ -n "$wpid" ] || fail "go$ver: no pid in the ready line"
	kill -USR1 "$wpid"
	wait_exit "$TPID" 120
	rc=$?
	[ $rc -eq 0 ] || fail "go$ver: tracer exited $rc: $(tail -n 5 "$TMP/tracer$ver.log")"
	total=$(sed -n 's/^done .* totalalloc=\([0-9]*\)$/\1/p' "$TMP/tracer$ver.log")
	[ -n "$total" ] || fail "go$ver: workload output: $(grep -v '^traceaf' "$TMP/tracer$ver.log" | tail -n 3)"

	"$TRACER" report --json "$out" >"$TMP/r$ver.json" 2>"$TMP/r.err" ||
		fail "go$ver: report --json: $(cat "$TMP/r.err")"
	res=$(python3 - "$TMP/r$ver.json" "$total" "$BIG" "$SIZES" 2>&1 <<'EOF'
import json, sys
path, total, big = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
sizes = [int(s) for s in sys.argv[4].split(",")]
d = json.load(open(path))
p = d["processes"][0]
types = {t["name"]: t for t in p["types"]}
b = types.get("[]uint8") or types.get("uint8")
if not b:
    sys.exit("no []uint8 in the report: %s" % sorted(types)[:10])
want = big * sum(sizes)
# Other []byte the runtime makes at start-up are small; the large ones
# alone are want bytes.
if b["alloc_bytes"] < want:
    sys.exit("[]uint8 alloc_bytes %d, want at least %d (%d x %s)" % (
        b["alloc_bytes"], want, big, sizes))
got = p["totals"]["alloc_bytes"]
if got < total:
    sys.exit("report alloc_bytes %d < the program's TotalAlloc delta %d" % (got, total))
if got > total + 8 * 2**20:
    sys.exit("report alloc_bytes %d, more than 8 MiB over TotalAlloc's %d" % (got, total))
print("[]uint8 %d B, total %d B vs TotalAlloc %d B" % (b["alloc_bytes"], got, total))
EOF
	) || fail "go$ver: $res"
	results+=("go$ver: $res")
done

pass "${results[*]}"
