# Shared helpers for end-to-end tests.  Source it; it sets ROOT, BUILD, TMP.
# Every test prints "PASS name" or "FAIL name: reason" and exits 0 / 1.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
TRACER=$BUILD/traceaf-bpf
GOBIN_DIR=${TRACEAF_GOBIN_DIR:-$BUILD/go-bin}
TRACECHECK_DIR=${TRACECHECK_DIR:-$BUILD}
TEST_NAME=$(basename "$0" .sh)
TMP=$(mktemp -d "/tmp/$TEST_NAME.XXXXXX")
BG_PIDS=()

cleanup() {
	local p
	for p in "${BG_PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null
	done
	wait 2>/dev/null
	[ -n "${KEEP_TMP:-}" ] || rm -rf "$TMP"
}
trap cleanup EXIT

fail() {
	echo "FAIL $TEST_NAME: $*"
	exit 1
}

pass() {
	echo "PASS $TEST_NAME${1:+: $*}"
	exit 0
}

# workload NAME VERSION [FLAVOUR] -> path of the built binary (builds if needed)
workload() {
	local name=$1 ver=$2 flavour=${3:-}
	local bin=$GOBIN_DIR/$name-go$ver$flavour
	GO_VERSIONS=$ver OUT=$GOBIN_DIR "$ROOT/tests/go/build-workloads.sh" "$name" >/dev/null ||
		fail "cannot build workload $name with Go $ver"
	[ -x "$bin" ] || fail "no workload binary $bin"
	echo "$bin"
}

# tracecheck VERSION -> path of tracecheck built with that Go (builds once)
tracecheck() {
	local ver=$1 bin=$TRACECHECK_DIR/tracecheck-go$1
	if [ ! -x "$bin" ] || [ -n "$(find "$ROOT/tests/go/tracecheck" -newer "$bin" -type f)" ]; then
		"$ROOT/tests/go/build-tracecheck.sh" "$ver" "$bin" >/dev/null 2>"$TMP/tracecheck-build.log" ||
			fail "cannot build tracecheck with Go $ver: $(tail -n 5 "$TMP/tracecheck-build.log")"
	fi
	echo "$bin"
}

# agree_check -> path of tests/e2e/lib/agree_check built into $TMP (its
# pairing of our events with the runtime's own trace of one process)
agree_check() {
	local bin=$TMP/agree_check
	[ -x "$bin" ] || cc -std=gnu11 -O2 -Wall -Wextra -Werror -Wno-unused-parameter \
		-D_GNU_SOURCE -I"$ROOT/include" -I"$ROOT/user" "$ROOT/tests/e2e/lib/agree_check.c" \
		"$ROOT/user/format/trace_reader.c" "$ROOT/user/format/trace_events.c" \
		"$ROOT/user/util/u64_map.c" -o "$bin" >&2 || fail "cannot build agree_check"
	echo "$bin"
}

# start_bg LOG CMD... : runs CMD in the background, stdout+stderr to LOG; sets BG_PID
start_bg() {
	local log=$1
	shift
	"$@" >"$log" 2>&1 &
	BG_PID=$!
	BG_PIDS+=("$BG_PID")
}

# wait_for_line FILE REGEX TIMEOUT_S
wait_for_line() {
	local file=$1 re=$2 t=$((${3:-30} * 10))
	while [ $t -gt 0 ]; do
		grep -qE "$re" "$file" 2>/dev/null && return 0
		sleep 0.1
		t=$((t - 1))
	done
	return 1
}

# wait_exit PID TIMEOUT_S -> exit status of PID (124 on timeout)
wait_exit() {
	local pid=$1 t=$((${2:-30} * 10))
	while [ $t -gt 0 ]; do
		if ! kill -0 "$pid" 2>/dev/null; then
			wait "$pid"
			return $?
		fi
		sleep 0.1
		t=$((t - 1))
	done
	return 124
}

# kv FILE KEY -> value of the first "KEY value" line of tracecheck output
kv() {
	awk -v k="$2" '{ v = $NF; $NF = ""; sub(/ +$/, ""); if ($0 == k) { print v; exit } }' "$1"
}

# ---- helpers for the tests that trace fullwork (added; nothing above uses them)

# within A B PCT [SLACK]: true iff |A - B| <= PCT percent of |B| (or <= SLACK)
within() {
	awk -v a="$1" -v b="$2" -v p="$3" -v s="${4:-0}" 'BEGIN {
		d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b
		exit !(d <= m * p / 100 || d <= s)
	}'
}

# pct A B -> (A - B) / B in percent, "+1.23"
pct() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print (a == 0 ? "+0.00" : "inf"); else printf "%+.2f\n", (a - b) / b * 100 }'
}

# check_files OUTDIR FILE... : every FILE must be valid with tracecheck
# built by Go 1.23 and Go 1.27 (in TC123, TC127; set by the caller).  Keeps
# `tracecheck -replay` outputs in OUTDIR/<file>.tc123 and .tc127.
check_files() {
	local dir=$1 f tc v
	shift
	mkdir -p "$dir"
	for f in "$@"; do
		for v in 123 127; do
			[ $v = 123 ] && tc=$TC123 || tc=$TC127
			"$tc" -replay "$f" >"$dir/$(basename "$f").tc$v" 2>&1
			[ "$(kv "$dir/$(basename "$f").tc$v" valid)" = 1 ] ||
				fail "tracecheck-go1.$v rejects $(basename "$f") ($(stat -c %s "$f") bytes): $(grep -m1 -E '^error|^panic|tracecheck' "$dir/$(basename "$f").tc$v")"
		done
	done
}

# replay_check TCOUT PCT: in one file's `tracecheck -replay` output, for each
# ID family, alloc_of_live + free_of_unknown must be below PCT percent of the
# family's events (allocs + frees).  Prints "family bad/events" per family.
replay_check() {
	local out=$1 p=$2 fam ev bad res=""
	for fam in heap span stack; do
		ev=$(($(kv "$out" "replay $fam allocs") + $(kv "$out" "replay $fam frees")))
		bad=$(($(kv "$out" "replay $fam alloc_of_live") + $(kv "$out" "replay $fam free_of_unknown")))
		res="$res $fam $bad/$ev"
		awk -v b="$bad" -v e="$ev" -v p="$p" 'BEGIN { exit !(b == 0 || b * 100 < e * p) }' ||
			{ echo "$res"; return 1; }
	done
	echo "$res"
}

# last_gen_offset FILE -> "OFFSET GENS COMPLETE ENDED": walks the batches of
# a Go trace file ("go 1.2x trace" format: 16-byte header, then event
# batches (byte 1) and experimental batches (byte 49), each [gen, M, ts,
# size] and size bytes).  OFFSET is where the batches of the file's last
# generation begin, GENS the number of generations seen, COMPLETE 1 iff the
# file ends exactly at a batch boundary, ENDED 1 iff its last generation
# holds its frequency batch (an event batch whose data starts with
# EvFrequency, 8), which the tracer writes at a generation's end: a file
# with COMPLETE 1 and ENDED 0 was cut between the batches of a generation
# still being streamed.  `head -c OFFSET FILE` keeps the whole generations
# before the last one: for a file cut inside a write.
last_gen_offset() {
	od -An -v -tu1 "$1" | awk '
	{ for (i = 1; i <= NF; i++) b[n++] = $i }
	function uv(   v, m, x) { v = 0; m = 1
		while (p < n) { x = b[p++]; v += (x % 128) * m; m *= 128; if (x < 128) return v }
		bad = 1; return v }
	END {
		p = 16; last = -1; gens = 0; off = 16; bad = 0
		while (p < n && !bad) {
			start = p; t = b[p++]
			if (t == 49) p++
			else if (t != 1) { bad = 1; break }
			g = uv(); uv(); uv(); sz = uv()
			if (bad || p + sz > n) { bad = 1; break }
			if (g != last) { if (g > last) { gens++; off = start }; last = g }
			if (t == 1 && sz > 0 && b[p] == 8) freq[g] = 1
			p += sz
		}
		print off, gens, (bad ? 0 : 1), (freq[last] ? 1 : 0)
	}'
}

# ---- helpers for the multi-process tests (--all, -- CMD; added; nothing above uses them)

# node_check FILE... : every FILE must be valid with Go 1.23's and Go 1.27's
# tracecheck (TC123, TC127; set by the caller) and name main.Node with size
# 56 where it has any.  Prints "C123 C127 BAD": the main.Node allocations
# summed over the files by each parser, and BAD, the heap alloc_of_live +
# free_of_unknown of Go 1.27's replay.  On a rejected file prints the reason
# instead and returns 1.  No FILE: "0 0 0".
node_check() {
	local f tc out line c bad=0 res=""
	for tc in "$TC123" "$TC127"; do
		c=0
		for f in "$@"; do
			out=$("$tc" -replay "$f" 2>&1)
			[ "$(kv <(printf '%s\n' "$out") valid)" = 1 ] || {
				echo "$(basename "$tc") rejects $(basename "$f") ($(stat -c %s "$f") bytes): $(grep -m1 -E '^error|^panic|tracecheck' <<<"$out")"
				return 1
			}
			line=$(awk '$1 == "type" && $2 == "main.Node" && $4 == "allocs" { print $3, $5; exit }' <<<"$out")
			if [ -n "$line" ]; then
				[ "${line% *}" = 56 ] || { echo "$(basename "$f"): main.Node has size ${line% *}, want 56"; return 1; }
				c=$((c + ${line#* }))
			fi
			if [ "$tc" = "$TC127" ]; then
				bad=$((bad + $(kv <(printf '%s\n' "$out") "replay heap alloc_of_live") +
					$(kv <(printf '%s\n' "$out") "replay heap free_of_unknown")))
			fi
		done
		res="$res $c"
	done
	echo "${res# } $bad"
}

# enough COUNT N PERMILLE: true iff N*PERMILLE/1000 <= COUNT <= N
enough() {
	[ $(($1 * 1000)) -ge $(($2 * $3)) ] && [ "$1" -le "$2" ]
}

# ---- helpers for the probe-safety tests (added; nothing above uses them)

# text_patched PID -> how many bytes of PID's executable code (its r-xp
# mappings of /proc/PID/exe) differ in memory from the file.  A uprobe is
# an int3 written over the first byte of one instruction, so this counts
# the probes installed in the process; 0: none is left.  Fails when the
# code cannot be read.
text_patched() {
	local pid=$1 exe start end off len n=0 maps=0 a=$TMP/.text.mem b=$TMP/.text.file
	exe=$(readlink "/proc/$pid/exe") || return 1
	while read -r start end off; do
		len=$((16#$end - 16#$start))
		dd if="/proc/$pid/mem" of="$a" bs=64K iflag=skip_bytes,count_bytes \
			skip=$((16#$start)) count=$len status=none || return 1
		dd if="/proc/$pid/exe" of="$b" bs=64K iflag=skip_bytes,count_bytes \
			skip=$((16#$off)) count=$len status=none || return 1
		[ "$(stat -c %s "$a")" -eq $len ] && [ "$(stat -c %s "$b")" -eq $len ] || return 1
		n=$((n + $(cmp -l "$a" "$b" | wc -l)))
		maps=$((maps + 1))
	done < <(awk -v exe="$exe" '$2 ~ /^r.xp/ {
		p = $0; for (i = 0; i < 5; i++) sub(/^[^ ]+ +/, "", p)
		if (p == exe) { split($1, r, "-"); print r[1], r[2], $3 } }' "/proc/$pid/maps")
	rm -f "$a" "$b"
	[ $maps -gt 0 ] || return 1
	echo $n
}
