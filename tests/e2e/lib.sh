# Shared helpers for end-to-end tests.  Source it; it sets ROOT, BUILD, TMP.
# Every test prints "PASS name" or "FAIL name: reason" and exits 0 / 1.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
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
