#!/bin/bash
# make stress: the long run of tests/stress/attach_cycles.sh (issue 6):
# 1000 attach/detach cycles and 5 SIGKILLs of the tracer on one busy Go
# process, speed windows of 5 s.  Takes about 10 minutes on a 2-vCPU VM.
# Prints the figures that tests/README.md's "Stress" section quotes.
# Env: CYCLES KILLS WINDOW VER (see tests/stress/attach_cycles.sh), BUILD.
set -u
cd "$(dirname "$0")/.."
export BUILD=${BUILD:-build}
export TRACEAF_GOBIN_DIR=${TRACEAF_GOBIN_DIR:-$BUILD/go-bin}
start=$(date +%s)
echo "stress: $(date -u +%Y-%m-%d), Linux $(uname -r), $("$BUILD/traceaf-bpf" --version)"
CYCLES=${CYCLES:-1000} KILLS=${KILLS:-5} WINDOW=${WINDOW:-5} \
	tests/stress/attach_cycles.sh
rc=$?
echo "stress: $(( $(date +%s) - start )) s"
exit $rc
