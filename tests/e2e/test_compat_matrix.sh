#!/bin/bash
# The compatibility matrix: every installed Go 1.21..1.27 x {plain,
# stripped (-ldflags='-s -w')} x {non-PIE, PIE}.  For each of the 28
# knownalloc binaries (tests/go/build-workloads.sh), the run of
# known_alloc.sh: the workload waits, the tracer attaches (-v), SIGUSR1, the
# workload allocates N main.Node and exits, the tracer finalizes.  A cell is
# ok when:
#   - the tracer exits 0 and prints no warning and no data-loss line
#     (types unread, events not written, records dropped);
#   - its attach snapshot is complete: spans and goroutine stacks found
#     (stripped binaries need mheap_.allspans from the layout table and
#     runtime.allgs from the code);
#   - every file is valid for Go 1.23's and Go 1.27's parsers, names
#     main.Node with size 56, and counts >= 99.9% (and <= 100%) of N.
# Writes $BUILD/compat-matrix.md (the table `make compat-table` puts into
# README.md) and fails if any cell fails.
#
# Env: N (default 20000), JOBS cells at a time (default 2: a cell is two
# processes on a two-core VM), GO_VERSIONS (default: every installed
# /usr/lib/go-1.NN from 1.21).
source "$(dirname "$0")/lib/lib.sh"
N=${N:-20000}
JOBS=${JOBS:-2}
FLAVOURS=("" -stripped -pie -stripped-pie)
OUTMD=$BUILD/compat-matrix.md

[ -x "$TRACER" ] || fail "tracer not built: $TRACER"
if [ -z "${GO_VERSIONS:-}" ]; then
	for d in /usr/lib/go-1.*; do
		v=${d#/usr/lib/go-}
		[ -x "$d/bin/go" ] && [ "${v#1.}" -ge 21 ] && GO_VERSIONS="${GO_VERSIONS:-} $v"
	done
	GO_VERSIONS=$(tr ' ' '\n' <<<"$GO_VERSIONS" | sort -t. -k2 -n | xargs)
fi
[ -n "$GO_VERSIONS" ] || fail "no Go toolchain in /usr/lib/go-1.*"
GO_VERSIONS="$GO_VERSIONS" OUT=$GOBIN_DIR "$ROOT/tests/go/build-workloads.sh" knownalloc \
	>"$TMP/build.log" 2>&1 || fail "cannot build knownalloc: $(tail -n 5 "$TMP/build.log")"
TC123=$(tracecheck 1.23) || exit 1
TC127=$(tracecheck 1.27) || exit 1

# Processes of the cells, so that an interrupted run leaves none behind
# (cells are subshells: lib.sh's cleanup sees only the subshells).
kill_cells() {
	local p
	[ -d "$TMP" ] || return 0
	for p in $(cat "$TMP"/cell-*/pids 2>/dev/null); do
		kill -KILL "$p" 2>/dev/null
	done
}
trap 'kill_cells; cleanup' EXIT

# cell VER FLAVOUR: runs one cell in $TMP/cell-VER-FLAVOUR; its verdict goes
# to the file `result`: "ok COUNT FILES SPANS STACKS" or "FAIL reason".
cell() {
	local ver=$1 flavour=$2 dir bin wpid tpid rc f tc count total=0 line size
	local spans stacks
	dir=$TMP/cell-$ver$flavour
	mkdir -p "$dir"
	verdict() { echo "$*" >"$dir/result"; exit 0; }
	trap 'for p in $(cat "$dir/pids" 2>/dev/null); do kill -KILL $p 2>/dev/null; done' EXIT

	bin=$GOBIN_DIR/knownalloc-go$ver$flavour
	[ -x "$bin" ] || verdict "FAIL no binary $bin"
	"$bin" -n "$N" >"$dir/workload.log" 2>&1 &
	wpid=$!
	echo $wpid >>"$dir/pids"
	wait_for_line "$dir/workload.log" '^ready' 20 || verdict "FAIL workload did not start"

	"$TRACER" -v -p "$wpid" -o "$dir/out" -g 250ms >"$dir/tracer.log" 2>&1 &
	tpid=$!
	echo $tpid >>"$dir/pids"
	wait_for_line "$dir/tracer.log" 'attached' 60 ||
		verdict "FAIL no attach: $(grep -m1 -v '^$' "$dir/tracer.log" | cut -c1-120)"

	kill -USR1 "$wpid"
	wait_exit "$wpid" 120
	rc=$?
	[ $rc -eq 0 ] || verdict "FAIL workload exit $rc: $(tail -n 1 "$dir/workload.log" | cut -c1-100)"
	grep -q "^done nodes=$N" "$dir/workload.log" || verdict "FAIL workload output"
	wait_exit "$tpid" 60
	rc=$?
	[ $rc -eq 0 ] || verdict "FAIL tracer exit $rc: $(tail -n 1 "$dir/tracer.log" | cut -c1-100)"

	line=$(grep -m1 -E 'warning|could not be read|not written|dropped [0-9]+ [A-Za-z]+ records' "$dir/tracer.log")
	[ -z "$line" ] || verdict "FAIL tracer: $(sed 's/^traceaf-bpf: //' <<<"$line" | cut -c1-120)"
	line=$(grep -m1 ' snapshot: ' "$dir/tracer.log") || verdict "FAIL no snapshot line"
	spans=$(sed -n 's/.* snapshot: \([0-9]*\) spans.*/\1/p' <<<"$line")
	stacks=$(sed -n 's/.*, \([0-9]*\) stacks;.*/\1/p' <<<"$line")
	[ "${spans:-0}" -gt 0 ] && [ "${stacks:-0}" -gt 0 ] ||
		verdict "FAIL snapshot incomplete: ${spans:-?} spans, ${stacks:-?} stacks"

	shopt -s nullglob
	local files=("$dir"/out/*.trace)
	[ ${#files[@]} -gt 0 ] || verdict "FAIL no trace file"
	for tc in "$TC123" "$TC127"; do
		count=0
		for f in "${files[@]}"; do
			"$tc" "$f" >"$dir/check.out" 2>&1 ||
				verdict "FAIL $(basename "$tc") rejects $(basename "$f"): $(grep -m1 -E '^error|panic' "$dir/check.out" | cut -c1-80)"
			[ "$(kv "$dir/check.out" valid)" = 1 ] || verdict "FAIL $(basename "$tc"): not valid"
			line=$(awk '$1 == "type" && $2 == "main.Node" { print; exit }' "$dir/check.out")
			[ -n "$line" ] || continue
			size=$(awk '{ print $3 }' <<<"$line")
			[ "$size" = 56 ] || verdict "FAIL main.Node size $size"
			count=$((count + $(awk '{ print $5 }' <<<"$line")))
		done
		[ $((count * 1000)) -ge $((N * 999)) ] ||
			verdict "FAIL $(basename "$tc"): $count/$N main.Node"
		[ "$count" -le "$N" ] || verdict "FAIL $(basename "$tc"): $count/$N main.Node (too many)"
		total=$count
	done
	verdict "ok $total ${#files[@]} $spans $stacks"
}

start=$(date +%s)
running=0
for v in $GO_VERSIONS; do
	for f in "${FLAVOURS[@]}"; do
		if [ $running -ge "$JOBS" ]; then
			wait -n
			running=$((running - 1))
		fi
		cell "$v" "$f" &
		BG_PIDS+=($!)
		running=$((running + 1))
	done
done
wait
secs=$(($(date +%s) - start))

# The table: one row per version, one column per build flavour.
cell_text() {
	local r
	r=$(cat "$TMP/cell-$1$2/result" 2>/dev/null || echo "FAIL no result")
	case $r in
	ok\ *) set -- $r; echo "ok, $2/$N" ;;
	*) echo "**${r}**" | sed 's/|/\\|/g' ;;
	esac
}
failed=0
{
	echo "main.Node allocations counted / made (N=$N) by tracing \`knownalloc\`"
	echo "built by each Go toolchain; a cell is ok when every file validates"
	echo "with Go 1.23's and 1.27's parsers, main.Node has size 56, >= 99.9% of"
	echo "the allocations are counted and the tracer printed no warning (attach"
	echo "snapshot complete). Stripped: \`-ldflags='-s -w'\` (no symbols, no"
	echo "DWARF). Generated by \`tests/e2e/test_compat_matrix.sh\`"
	echo "($(date -u +%Y-%m-%d), Linux $(uname -r), traceaf-bpf $("$TRACER" --version | awk '{ print $2 }'))."
	echo
	echo "| Go | plain | stripped | PIE | stripped PIE |"
	echo "|---|---|---|---|---|"
	for v in $GO_VERSIONS; do
		row="| $v"
		for f in "${FLAVOURS[@]}"; do
			row="$row | $(cell_text "$v" "$f")"
		done
		echo "$row |"
	done
} >"$TMP/matrix.md"
for v in $GO_VERSIONS; do
	for f in "${FLAVOURS[@]}"; do
		r=$(cat "$TMP/cell-$v$f/result" 2>/dev/null || echo "FAIL no result")
		case $r in
		ok\ *) ;;
		*) failed=$((failed + 1)); echo "  go$v${f:-} $r" ;;
		esac
	done
done
mkdir -p "$(dirname "$OUTMD")"
cp "$TMP/matrix.md" "$OUTMD"
cat "$OUTMD"
cells=$(($(wc -w <<<"$GO_VERSIONS") * ${#FLAVOURS[@]}))
[ $failed -eq 0 ] || fail "$failed of $cells cells failed (table in $OUTMD)"
pass "$cells cells ok in ${secs}s (table in $OUTMD)"
