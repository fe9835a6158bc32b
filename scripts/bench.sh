#!/bin/bash
# make bench: performance figures, printed (not asserted; see BENCHMARKS.md).
#   1. probe cost per allocation: untraced / floor / entry+RET / sites
#      (scripts/bench_probes.sh, Go 1.23 and 1.27)
#   2. shadow heap ns per operation (tests/bench/bench_shadow_heap.c)
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
export BUILD

echo "== machine: $(nproc) vCPUs, $(uname -r), $(date -u +%Y-%m-%d)"
echo
echo "== 1. what tracing costs an allocating Go program (ns per allocation)"
make -s BUILD="$BUILD" workloads >/dev/null
./scripts/bench_probes.sh
echo
echo "== 2. daemon: shadow heap (ns per operation)"
mkdir -p "$BUILD/bench"
gcc -std=gnu11 -O2 -D_GNU_SOURCE -Iinclude tests/bench/bench_shadow_heap.c \
	user/shadow_heap.c user/u64_map.c -o "$BUILD/bench/bench_shadow_heap"
"$BUILD/bench/bench_shadow_heap"
