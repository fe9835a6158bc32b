#!/bin/bash
# Runs every unit test (cmocka, TAP output) and every end-to-end test
# (tests/e2e/test_*.sh, exit status) and ends with one line:
#   N passed, M failed
# Usage: tests/run_all.sh [unit|e2e] [NAME-FILTER]
set -u
cd "$(dirname "$0")/.."

BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
export BUILD
# Unit tests read the Go workloads `make workloads` built.
export TRACEAF_GOBIN_DIR=${TRACEAF_GOBIN_DIR:-$BUILD/go-bin}
WHAT=${1:-all}
FILTER=${2:-}
E2E_TIMEOUT=${E2E_TIMEOUT:-900}
passed=0
failed=0
failures=()

run_unit() {
	local bin=$1 name out rc ok notok plan
	name=$(basename "$bin")
	out=$(CMOCKA_MESSAGE_OUTPUT=TAP "$bin" 2>&1)
	rc=$?
	ok=$(grep -c '^ok ' <<<"$out")
	notok=$(grep -c '^not ok ' <<<"$out")
	plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' <<<"$out" | head -n1)
	# A crash or an early exit loses the tests that never reported.
	if [ -n "$plan" ] && [ $((ok + notok)) -lt "$plan" ]; then
		notok=$((plan - ok))
	fi
	if [ $rc -ne 0 ] && [ "$notok" -eq 0 ]; then
		notok=1
	fi
	passed=$((passed + ok))
	failed=$((failed + notok))
	if [ "$notok" -ne 0 ]; then
		failures+=("$name")
		echo "--- $name (exit $rc)"
		echo "$out"
	else
		echo "unit  $name: $ok passed"
	fi
}

run_e2e() {
	local script=$1 name out rc start
	name=$(basename "$script" .sh)
	start=$(date +%s)
	out=$(timeout --kill-after=10 "$E2E_TIMEOUT" "$script" 2>&1)
	rc=$?
	if [ $rc -eq 0 ]; then
		passed=$((passed + 1))
		echo "e2e   $name: passed ($(( $(date +%s) - start ))s)"
		[ -n "${VERBOSE:-}" ] && echo "$out"
	else
		failed=$((failed + 1))
		failures+=("$name")
		echo "--- $name FAILED (exit $rc, $(( $(date +%s) - start ))s)"
		echo "$out" | tail -n 60
	fi
}

if [ "$WHAT" = all ] || [ "$WHAT" = unit ]; then
	for bin in "$BUILD"/tests/test_*; do
		[ -x "$bin" ] || continue
		[ -n "$FILTER" ] && [[ "$bin" != *"$FILTER"* ]] && continue
		run_unit "$bin"
	done
fi

if [ "$WHAT" = all ] || [ "$WHAT" = e2e ]; then
	for script in tests/e2e/test_*.sh; do
		[ -x "$script" ] || continue
		[ -n "$FILTER" ] && [[ "$script" != *"$FILTER"* ]] && continue
		run_e2e "$script"
	done
fi

if [ ${#failures[@]} -gt 0 ]; then
	echo "failed: ${failures[*]}"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
