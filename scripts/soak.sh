#!/bin/bash
# make soak: a long --stacks run of tests/stress/soak_stacks.sh (issue 13,
# item 3): churn for SOAK_SECS (default 3600) under --stacks -r 64M -n 4.
# Prints the figures BENCHMARKS.md quotes.  Not part of `make test`.
# Env: SOAK_SECS VER MAX_WHOLE_PCT WARMUP TRACER_BIN (see the test), BUILD.
set -u
cd "$(dirname "$0")/.."
export BUILD=${BUILD:-build}
export TRACEAF_GOBIN_DIR=${TRACEAF_GOBIN_DIR:-$BUILD/go-bin}
start=$(date +%s)
echo "soak: $(date -u +%Y-%m-%d), Linux $(uname -r), $("$BUILD/traceaf-bpf" --version)"
SOAK_SECS=${SOAK_SECS:-3600} tests/stress/soak_stacks.sh
rc=$?
echo "soak: $(( $(date +%s) - start )) s"
exit $rc
