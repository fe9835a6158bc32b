#!/bin/bash
# make demo: build the bundled demo Go program, start it, attach
# traceaf-bpf to the running process for a few seconds, stop, and print
# what was written, checked by Go's own trace parser.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
GOV=${DEMO_GO:-1.27}
SECONDS_TRACED=${DEMO_SECONDS:-4}
DEMO_DIR=$BUILD/demo
OUT=$DEMO_DIR/traceaf-out
GO=/usr/lib/go-$GOV/bin/go

mkdir -p "$DEMO_DIR"
rm -rf "$OUT"
echo "== building demo/allocdemo with Go $GOV"
(cd "$ROOT/demo/allocdemo" &&
	GOTOOLCHAIN=local GOFLAGS=-buildvcs=false GOPROXY=off \
	GOCACHE="$BUILD/go-cache" GOPATH="$BUILD/go-path" CGO_ENABLED=0 \
	"$GO" build -o "$DEMO_DIR/allocdemo" ./main.go)

echo "== building Go $GOV's trace parser (internal/trace) to check the output"
"$ROOT/tests/go/build-tracecheck.sh" "$GOV" "$BUILD/tracecheck-go$GOV" >/dev/null

"$DEMO_DIR/allocdemo" >"$DEMO_DIR/allocdemo.log" 2>&1 &
DEMO_PID=$!
trap 'kill $DEMO_PID 2>/dev/null; wait $DEMO_PID 2>/dev/null || true' EXIT
sleep 0.5

echo "== sudo traceaf-bpf -p $DEMO_PID -d ${SECONDS_TRACED}s --stacks -o $OUT"
"$BUILD/traceaf-bpf" -p "$DEMO_PID" -d "${SECONDS_TRACED}s" --stacks -o "$OUT" -v

echo
echo "== what was written"
total_events=0
for f in "$OUT"/*.trace; do
	"$BUILD/tracecheck-go$GOV" "$f" >"$DEMO_DIR/check.out" || {
		echo "$(basename "$f"): REJECTED by Go's parser:"
		cat "$DEMO_DIR/check.out"
		exit 1
	}
	printf '%s  %s bytes  valid (Go %s parser)\n' "$(basename "$f")" \
		"$(stat -c %s "$f")" "$GOV"
	awk '$1 == "ev" { printf "    %-22s %s\n", $2, $3 }' "$DEMO_DIR/check.out"
	echo "    top types by allocations:"
	awk '$1 == "type" && $(NF-1) == "allocs" { n = $NF; $NF = ""; $(NF-1) = ""; print n "\t" $0 }' \
		"$DEMO_DIR/check.out" | sort -rn | head -n 6 |
		awk -F'\t' '{ sub(/^type /, "", $2); printf "    %10d  %s\n", $1, $2 }'
done

echo
echo "== traceaf-bpf report $OUT --html $DEMO_DIR/heap.html"
"$BUILD/traceaf-bpf" report "$OUT" --top 8 --html "$DEMO_DIR/heap.html"
echo "(the live heap over time, as a page: $DEMO_DIR/heap.html;"
echo " a profile for go tool pprof: $BUILD/traceaf-bpf pprof $OUT -o heap.pb.gz)"
