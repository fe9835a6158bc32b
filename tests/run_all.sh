#!/bin/bash
# Runs every unit test (cmocka, TAP output), the unit tests again under
# AddressSanitizer + UBSan (built by `make unit-asan-build` in $ASAN_BUILD),
# every libFuzzer harness for $FUZZ_TIME seconds (built by `make fuzz` in
# $FUZZ_BUILD; one test each) and every end-to-end test
# (tests/e2e/test_*.sh, exit status) and ends with one line:
#   N passed, M failed
# Usage: tests/run_all.sh [unit|asan|fuzz|e2e] [NAME-FILTER]
set -u
cd "$(dirname "$0")/.."

BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
export BUILD
# Unit tests read the Go workloads `make workloads` built.
export TRACEAF_GOBIN_DIR=${TRACEAF_GOBIN_DIR:-$BUILD/go-bin}
ASAN_BUILD=${ASAN_BUILD:-$BUILD-asan}
case $ASAN_BUILD in /*) ;; *) ASAN_BUILD=$PWD/$ASAN_BUILD ;; esac
FUZZ_BUILD=${FUZZ_BUILD:-$BUILD-fuzz}
case $FUZZ_BUILD in /*) ;; *) FUZZ_BUILD=$PWD/$FUZZ_BUILD ;; esac
FUZZ_TIME=${FUZZ_TIME:-10}
WHAT=${1:-all}
FILTER=${2:-}
E2E_TIMEOUT=${E2E_TIMEOUT:-900}
passed=0
failed=0
failures=()

run_unit() {
	local bin=$1 name out rc ok notok plan
	name=${2:-}$(basename "$bin")
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

# One harness, FUZZ_TIME seconds from its seed corpus.  New inputs go to a
# temporary directory (the committed corpus is not touched); a crash, leak,
# sanitizer report or timeout fails the test and its input is kept.
run_fuzz() {
	local bin=$1 name short work out rc args dirs
	name=$(basename "$bin")
	short=${name#fuzz_}
	work=$(mktemp -d "/tmp/$name.XXXXXX")
	mkdir "$work/new"
	args=(-runs=-1 -max_total_time="$FUZZ_TIME" -timeout=25
	      -rss_limit_mb=2048 -print_final_stats=1
	      -artifact_prefix="$work/")
	[ -f "tests/fuzz/$short.dict" ] && args+=(-dict="tests/fuzz/$short.dict")
	dirs=("$work/new" "tests/fuzz/corpus/$short")
	# Inputs that once crashed it (test_fuzz_regress.c has their tests).
	[ -d "tests/fuzz/regress/$short" ] && dirs+=("tests/fuzz/regress/$short")
	out=$(timeout --kill-after=10 $((FUZZ_TIME + 120)) \
		"$bin" "${args[@]}" "${dirs[@]}" 2>&1)
	rc=$?
	if [ $rc -eq 0 ]; then
		passed=$((passed + 1))
		echo "fuzz  $name: passed ($(sed -n 's/^stat::number_of_executed_units: *//p' <<<"$out") runs)"
		rm -rf "$work"
	else
		failed=$((failed + 1))
		failures+=("$name")
		echo "--- $name FAILED (exit $rc); inputs kept in $work"
		echo "$out" | grep -v '^#[0-9]' | tail -n 60
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

if [ "$WHAT" = all ] || [ "$WHAT" = asan ]; then
	if ! compgen -G "$ASAN_BUILD/tests/test_*" >/dev/null; then
		echo "asan: no unit tests in $ASAN_BUILD (make unit-asan-build)"
	fi
	for bin in "$ASAN_BUILD"/tests/test_*; do
		[ -x "$bin" ] || continue
		[ -n "$FILTER" ] && [[ "$bin" != *"$FILTER"* ]] && continue
		ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
		UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
			run_unit "$bin" asan/
	done
fi

if [ "$WHAT" = all ] || [ "$WHAT" = fuzz ]; then
	if ! compgen -G "$FUZZ_BUILD/fuzz_*" >/dev/null; then
		echo "fuzz: no harnesses in $FUZZ_BUILD (make fuzz)"
	fi
	for bin in "$FUZZ_BUILD"/fuzz_*; do
		[ -x "$bin" ] || continue
		[ -n "$FILTER" ] && [[ "$bin" != *"$FILTER"* ]] && continue
		run_fuzz "$bin"
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
