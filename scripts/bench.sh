#!/bin/bash
# make bench: performance figures, printed (not asserted; see BENCHMARKS.md).
#   1. probe cost per allocation: untraced / floor / entry+RET / sites
#      (scripts/bench_probes.sh, Go 1.23 and 1.27)
#   2. shadow heap ns per operation (tests/bench/bench_shadow_heap.c)
#   3. daemon throughput offline, one core (tests/bench/bench_daemon.c)
#   4. bytes per event on disk, ours and the runtime's (fullwork)
#   5. attach snapshot: how long the target is stopped, daemon peak RSS
#      (tests/bench/bigheap)
#   6. attach time on a > 100 MB Go binary (tests/bench/bigbin/gen.sh)
#   7. ring-buffer drops at a sustained event rate (tests/bench/ratealloc)
#   8. the production mode: the target's slowdown under --memprofilerate
#      524288 and 1 (and --memprofilerate-exact 524288 on the loop),
#      beside full mode and the runtime's own AllocFree
#      tracer (allocbench's new(Node) loop and fullwork, Go 1.23 and 1.27;
#      encoding/json's benchmarks)
#   9. start to "attached" on big code: a generated ~45 MB-of-.text Go 1.27
#      service (tests/bench/bigcode/gen.sh) and the Go programs Debian
#      builds (prometheus, caddy: fetched with apt-get download, unpacked,
#      never installed; BENCH_DEBIAN=0 skips), first and cached attach,
#      full mode and --memprofilerate
#  10. report on a ~1 GB trace set (fullwork -scale 20 under --stacks,
#      128 MiB files; made once, ~6 min, kept in $BUILD/bench/report-set):
#      events/s on one core and peak RSS, with and without the stacks
# Env: SECTIONS="1 2 3 4 5 6 7 8 9 10" (which to run), REPS=3, SNAP_N=4194304,
#      RATES="500000 1000000" (allocations/s; ~2 events each), RATE_SECS=3,
#      REPORT_SCALE=20 (section 10's workload scale)
#      S8="loop cpu phase json" (section 8's parts), LOOP_REPS, LOOP_N
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
export BUILD

echo "== machine: $(nproc) vCPUs, $(uname -r), $(date -u +%Y-%m-%d)"
SECTIONS=${SECTIONS:-"1 2 3 4 5 6 7 8 9 10"}
REPS=${REPS:-3}
export REPS
GOBIN=${TRACEAF_GOBIN_DIR:-$BUILD/go-bin}
TMP=$(mktemp -d /tmp/bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
on() { case " $SECTIONS " in *" $1 "*) return 0 ;; esac; return 1; }
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# gobuild DIR OUT: a module-less Go 1.27 build, like tests/go's workloads
gobuild() {
	(cd "$1" && GOTOOLCHAIN=local GOFLAGS=-buildvcs=false GOPROXY=off \
		GOCACHE="$BUILD/go-cache" CGO_ENABLED=0 \
		/usr/lib/go-1.27/bin/go build -trimpath -o "$2" ./main.go)
}
make -s BUILD="$BUILD" workloads >/dev/null
make -s BUILD="$BUILD" "$BUILD/bench/bench_daemon" >/dev/null

if on 1; then
	echo
	echo "== 1. what tracing costs an allocating Go program (ns per allocation)"
	./scripts/bench_probes.sh
fi
if on 2; then
	echo
	echo "== 2. daemon: shadow heap (ns per operation)"
	mkdir -p "$BUILD/bench"
	gcc -std=gnu11 -O2 -D_GNU_SOURCE -Iinclude -Iuser tests/bench/bench_shadow_heap.c \
		user/trace/shadow_heap*.c user/util/u64_map.c -o "$BUILD/bench/bench_shadow_heap"
	"$BUILD/bench/bench_shadow_heap"
fi
if on 3; then
	echo
	echo "== 3. daemon: records -> files offline, one core (median of $REPS)"
	for i in $(seq "$REPS"); do
		"$BUILD/bench/bench_daemon" "$GOBIN/fullwork-go1.27" >"$TMP/d.$i" ||
			exit 1
	done
	head -n 1 "$TMP/d.1"
	for k in events_per_s ns_per_event bytes_per_event; do
		printf '%s %s\n' "$k" "$(cat "$TMP"/d.* | awk -v k=$k '$1 == k { print $2 }' | median)"
	done
	echo "(target: >= 5 M events/s; bytes/event of the synthesized stream)"
fi

# traced_fullwork VER DIR: fullwork -scale 0.1 traced from its phase start
traced_fullwork() {
	local w t
	"$GOBIN/fullwork-go$1" -scale 0.1 >"$2.w" 2>&1 &
	w=$!
	for _ in $(seq 100); do grep -qs '^ready' "$2.w" && break; sleep 0.1; done
	"$BUILD/traceaf-bpf" -p "$w" -o "$2" >"$2.t" 2>&1 &
	t=$!
	for _ in $(seq 600); do grep -qs attached "$2.t" && break; sleep 0.1; done
	kill -USR1 "$w"
	wait "$w"
	wait "$t"
}

if on 4; then
	echo
	echo "== 4. bytes per event on disk (fullwork -scale 0.1; tracecheck's bytes_per_event)"
	for ver in 1.23 1.27; do
		tc=$BUILD/tracecheck-go$ver
		[ -x "$tc" ] || tests/go/build-tracecheck.sh "$ver" "$tc" >/dev/null ||
			exit 1
		traced_fullwork "$ver" "$TMP/bpe$ver"
		ours=$(cat "$TMP/bpe$ver"/*.trace | "$tc" | awk '$1 == "bytes_per_event" { print $2 }')
		GODEBUG=traceallocfree=1 "$GOBIN/fullwork-go$ver" -scale 0.1 \
			-wait=false -native "$TMP/native$ver.trace" >/dev/null 2>&1
		native=$("$tc" "$TMP/native$ver.trace" | awk '$1 == "bytes_per_event" { print $2 }')
		echo "Go $ver: ours $ours, the runtime's own $native (target: ours <= 6)"
	done
fi

if on 5; then
	echo
	n=${SNAP_N:-4194304}
	echo "== 5. attach snapshot: $n live 64-byte objects (median of $REPS)"
	gobuild tests/bench/bigheap "$BUILD/bench/bigheap-go1.27" || exit 1
	for i in $(seq "$REPS"); do
		"$BUILD/bench/bigheap-go1.27" -n "$n" >"$TMP/h.w" 2>&1 &
		w=$!
		for _ in $(seq 600); do grep -qs '^holding' "$TMP/h.w" && break; sleep 0.1; done
		/usr/bin/time -v "$BUILD/traceaf-bpf" -v -p "$w" -o "$TMP/h.out" -d 1s \
			>"$TMP/h.t" 2>&1
		kill "$w"
		wait "$w" 2>/dev/null || true
		rm -rf "$TMP/h.out"
		sed -n 's/.*snapshot: \(.*\); stopped \([0-9.]*\) ms/\2 \1/p' "$TMP/h.t" >>"$TMP/h.stop"
		awk '/Maximum resident/ { print $NF / 1024 }' "$TMP/h.t" >>"$TMP/h.rss"
	done
	echo "snapshot: $(head -n 1 "$TMP/h.stop" | cut -d' ' -f2-)"
	echo "target stopped ms: $(cut -d' ' -f1 "$TMP/h.stop" | median) (runs: $(cut -d' ' -f1 "$TMP/h.stop" | tr '\n' ' '))"
	echo "daemon peak RSS MiB: $(median <"$TMP/h.rss")"
fi

if on 6; then
	echo
	echo "== 6. attach time on a large Go binary (median of $REPS)"
	src=$BUILD/bench/bigbin-src
	big=$BUILD/bench/bigbin-go1.27
	if [ ! -x "$big" ] || [ tests/bench/bigbin/gen.sh -nt "$big" ]; then
		tests/bench/bigbin/gen.sh "$src" 20000 100 && gobuild "$src" "$big" ||
			exit 1
	fi
	echo "binary: $(stat -c %s "$big") bytes; $(size "$big" | awk 'NR == 2 { printf "text %.1f MB, data %.1f MB", $1 / 1e6, $2 / 1e6 }')"
	for i in $(seq "$REPS"); do
		"$big" >"$TMP/b.w" 2>&1 &
		w=$!
		for _ in $(seq 600); do grep -qs '^ready' "$TMP/b.w" && break; sleep 0.1; done
		t0=$(date +%s%N)
		"$BUILD/traceaf-bpf" -p "$w" -o "$TMP/b.out" >"$TMP/b.t" 2>&1 &
		t=$!
		for _ in $(seq 6000); do grep -qs attached "$TMP/b.t" && break; sleep 0.01; done
		echo $((($(date +%s%N) - t0) / 1000000)) >>"$TMP/b.ms"
		kill -INT "$t"
		wait "$t" || true
		kill "$w"
		wait "$w" 2>/dev/null || true
		rm -rf "$TMP/b.out"
	done
	echo "start to attached, ms: $(median <"$TMP/b.ms") (runs: $(tr '\n' ' ' <"$TMP/b.ms")) (target < 1000)"
fi

if on 7; then
	echo
	echo "== 7. ring-buffer drops at a sustained rate (Go 1.27, 2 goroutines, ${RATE_SECS:-3} s)"
	gobuild tests/bench/ratealloc "$BUILD/bench/ratealloc-go1.27" || exit 1
	for rate in ${RATES:-500000 1000000}; do
		"$BUILD/bench/ratealloc-go1.27" -rate "$rate" -secs "${RATE_SECS:-3}" >"$TMP/r.w" 2>&1 &
		w=$!
		for _ in $(seq 100); do grep -qs '^ready' "$TMP/r.w" && break; sleep 0.1; done
		"$BUILD/traceaf-bpf" -p "$w" -o "$TMP/r.out" >"$TMP/r.t" 2>&1 &
		t=$!
		for _ in $(seq 600); do grep -qs attached "$TMP/r.t" && break; sleep 0.1; done
		sleep 1
		kill -USR1 "$w"
		wait "$w"
		wait "$t"
		rm -rf "$TMP/r.out"
		awk -v r="$rate" '/^done allocs=/ { sub(/.*secs=/, ""); secs = $1 + 0 }
			/done: / { sub(/.*done: /, ""); ev = $3; dr = $(NF - 1) }
			END { printf "%d allocations/s asked: %.2f M events/s written, %s dropped\n", r, ev / secs / 1e6, dr }' \
			"$TMP/r.w" "$TMP/r.t"
	done
	echo "(events include the frees: ~2 per allocation; target: no drops at 1 M events/s)"
fi

if on 8; then
	echo
	echo "== 8. production mode: the target's time, untraced = 1.00 (median of $REPS, modes interleaved)"
	# mode_run MODE CMD...: the program's own figure for its work (METRIC
	# reads its stdout: fullwork's phase ms=, a Go benchmark's ns/op sum),
	# so the tracer's start-up is not counted.
	mode_run() {
		local mode=$1
		shift
		rm -rf "$TMP/m.out"
		case $mode in
		untraced) "$@" >"$TMP/m.stdout" 2>/dev/null ;;
		rate512k) "$BUILD/traceaf-bpf" -o "$TMP/m.out" --memprofilerate 524288 -- "$@" >"$TMP/m.stdout" 2>/dev/null ;;
		exact512k) "$BUILD/traceaf-bpf" -o "$TMP/m.out" --memprofilerate-exact 524288 -- "$@" >"$TMP/m.stdout" 2>/dev/null ;;
		rate1) "$BUILD/traceaf-bpf" -o "$TMP/m.out" --memprofilerate 1 -- "$@" >"$TMP/m.stdout" 2>/dev/null ;;
		full) "$BUILD/traceaf-bpf" -o "$TMP/m.out" -- "$@" >"$TMP/m.stdout" 2>/dev/null ;;
		native) GODEBUG=traceallocfree=1 "$@" >"$TMP/m.stdout" 2>/dev/null ;;
		esac
		$METRIC <"$TMP/m.stdout"
	}
	fullwork_ms() { sed -n 's/^done .* ms=\([0-9]*\).*/\1/p'; }
	bench_ns() { awk '$NF == "ns/op" || $4 == "ns/op" { s += $3 } END { print s }'; }
	# compare NAME MODES -- CMD...: one line of ratios to the untraced median
	compare() {
		local name=$1 modes=$2 m i
		shift 3
		for i in $(seq "$REPS"); do
			for m in untraced $modes; do
				mode_run "$m" "$@" >>"$TMP/m.$m"
			done
		done
		base=$(median <"$TMP/m.untraced")   # the native line's base too
		# shellcheck disable=SC2086
		echo "$name: $(ratios "$TMP/m" $modes)"
		rm -rf "$TMP"/m.*
	}
	# ratios PREFIX MODE...: "untraced U, MODE R, ..." from the figures
	# in PREFIX.untraced and PREFIX.MODE, each the ratio of the medians
	ratios() {
		local pre=$1 m b line
		shift
		b=$(median <"$pre.untraced")
		line="untraced $b"
		for m in "$@"; do
			line="$line, $m $(median <"$pre.$m" | awk -v b="$b" '{ printf "%.3f", $1 / b }')"
		done
		echo "$line"
	}
	# cpu_run MODE BIN: fullwork's CPU time (user + sys, ms) over its
	# phase, attached with -p while it waits: CPU time is what the probes
	# add to the target, and shared CPUs disturb it less than wall time.
	cpu_run() {
		local mode=$1 bin=$2 w t flags=""
		rm -rf "$TMP/c.out" "$TMP/c.w" "$TMP/c.t"
		/usr/bin/time -f "%U %S" -o "$TMP/c.time" "$bin" -scale 0.3 >"$TMP/c.w" 2>&1 &
		w=$!
		for _ in $(seq 100); do grep -qs '^ready' "$TMP/c.w" && break; sleep 0.1; done
		case $mode in
		rate512k) flags="--memprofilerate 524288" ;;
		rate1) flags="--memprofilerate 1" ;;
		esac
		if [ "$mode" != untraced ]; then
			"$BUILD/traceaf-bpf" -p "$(awk '/^ready/ { print $2 }' "$TMP/c.w")" \
				-o "$TMP/c.out" $flags >"$TMP/c.t" 2>&1 &
			t=$!
			for _ in $(seq 600); do grep -qs attached "$TMP/c.t" && break; sleep 0.1; done
		fi
		kill -USR1 "$(awk '/^ready/ { print $2 }' "$TMP/c.w")"
		wait "$w"
		[ "$mode" != untraced ] && wait "$t"
		awk '{ printf "%d\n", ($1 + $2) * 1000 }' "$TMP/c.time"
	}
	cpu_compare() {
		local ver=$1 m i line
		for i in $(seq "$REPS"); do
			for m in untraced rate512k rate1 full; do
				cpu_run "$m" "$GOBIN/fullwork-go$ver" >>"$TMP/cpu.$m"
			done
		done
		echo "fullwork Go $ver -scale 0.3 (target CPU ms, -p): $(ratios "$TMP/cpu" rate512k rate1 full)"
		rm -f "$TMP"/cpu.*
	}
	# loop_run MODE VER KIND N: allocbench's wall ns per allocation over
	# its loop alone (the tracer attaches with -p before the loop starts;
	# the runtime's own tracer runs only around the loop).
	loop_run() {
		local mode=$1 bin=$GOBIN/allocbench-go$2 kind=$3 n=$4 w t flags=""
		rm -rf "$TMP/l.out" "$TMP/l.w" "$TMP/l.t" "$TMP/l.trace"
		case $mode in
		untraced)
			"$bin" -wait=false -kind "$kind" -n "$n" >"$TMP/l.w" ;;
		sampled)
			# The runtime's own heap sampling at 524288, no tracer:
			# what --memprofilerate turns on in a program that never
			# reads its profile (allocbench's rate is 0 otherwise).
			"$bin" -wait=false -kind "$kind" -n "$n" \
				-memprofilerate 524288 >"$TMP/l.w" ;;
		native)
			GODEBUG=traceallocfree=1 "$bin" -wait=false -kind "$kind" -n "$n" \
				-native "$TMP/l.trace" >"$TMP/l.w" ;;
		*)
			[ "$mode" = rate512k ] && flags="--memprofilerate 524288"
			[ "$mode" = exact512k ] && flags="--memprofilerate-exact 524288"
			"$bin" -kind "$kind" -n "$n" >"$TMP/l.w" 2>&1 &
			w=$!
			for _ in $(seq 100); do grep -qs '^ready' "$TMP/l.w" && break; sleep 0.1; done
			"$BUILD/traceaf-bpf" -p "$w" -o "$TMP/l.out" $flags >"$TMP/l.t" 2>&1 &
			t=$!
			for _ in $(seq 600); do grep -qs attached "$TMP/l.t" && break; sleep 0.1; done
			sleep 1   # a just-registered uprobe can miss a sleeping thread's first hits
			kill -USR1 "$w"
			wait "$w"
			kill -INT "$t" 2>/dev/null
			wait "$t" ;;
		esac
		awk '$1 == "ns/alloc" { print $2 }' "$TMP/l.w"
	}
	# An allocation-bound loop (new(Node), 56 bytes), the modes in turns:
	# the steadiest figure for the 2 % target (fullwork's phases spread
	# by +-10 % between untraced runs).  Full mode with fewer allocations
	# (per-allocation figure; it is ~30x slower).
	part() { case " ${S8:-loop cpu phase json} " in *" $1 "*) return 0 ;; esac; return 1; }
	# allocbench is not among `make workloads` (section 1 builds it too).
	part loop && { GO_VERSIONS="1.23 1.27" OUT="$GOBIN" tests/go/build-workloads.sh allocbench >/dev/null ||
		{ echo "bench: cannot build tests/go/allocbench" >&2; exit 1; }; }
	part loop && for ver in 1.23 1.27; do
		for i in $(seq "${LOOP_REPS:-$((REPS * 3))}"); do
			for m in untraced sampled rate512k exact512k native full; do
				n=${LOOP_N:-20000000}
				[ "$m" = full ] && n=$((n / 20))
				loop_run "$m" "$ver" node "$n" >>"$TMP/loop.$m"
			done
		done
		echo "allocbench node Go $ver (ns/alloc, loop only): $(ratios "$TMP/loop" rate512k exact512k native full) (median of $(wc -l <"$TMP/loop.untraced") paired runs; rate512k runs: $(sort -g "$TMP/loop.rate512k" | tr '\n' ' '); untraced: $(sort -g "$TMP/loop.untraced" | tr '\n' ' '))"
		# The tracer's own part: rate512k against the same sampling
		# untraced (the rest is the runtime's sampler).
		echo "  the tracer's part: rate512k / sampled = $(awk -v a="$(median <"$TMP/loop.rate512k")" -v b="$(median <"$TMP/loop.sampled")" 'BEGIN { printf "%.3f", a / b }') (sampled untraced $(median <"$TMP/loop.sampled") ns/alloc)"
		rm -f "$TMP"/loop.*
	done
	part cpu && for ver in 1.23 1.27; do
		cpu_compare "$ver"
	done
	METRIC=fullwork_ms
	part phase && for ver in 1.23 1.27; do
		# The native tracer needs -native (runtime/trace.Start) to write.
		compare "fullwork Go $ver -scale 0.3 (phase ms)" "rate512k rate1 full" -- \
			"$GOBIN/fullwork-go$ver" -scale 0.3 -wait=false
		for i in $(seq "$REPS"); do
			mode_run native "$GOBIN/fullwork-go$ver" -scale 0.3 -wait=false \
				-native "$TMP/native.trace" >>"$TMP/n.ms"
		done
		echo "  runtime's own tracer (GODEBUG=traceallocfree=1 + runtime/trace): $(median <"$TMP/n.ms" | awk -v b="$base" '{ printf "%.3f", $1 / b }')"
		rm -f "$TMP/n.ms" "$TMP/native.trace"
	done
	# A real standard-library benchmark, a fixed number of iterations.
	jt=$BUILD/bench/json-go1.27.test
	if part json && [ ! -x "$jt" ]; then
		(cd /usr/lib/go-1.27/src/encoding/json && GOTOOLCHAIN=local \
			GOCACHE="$BUILD/go-cache" GOFLAGS=-buildvcs=false \
			/usr/lib/go-1.27/bin/go test -c -o "$jt" .) || exit 1
	fi
	METRIC=bench_ns
	part json && (cd /usr/lib/go-1.27/src/encoding/json &&
		compare "encoding/json CodeUnmarshal+CodeEncoder x200 (Go 1.27, ns/op)" "rate512k rate1 full" -- \
			"$jt" -test.run='^$' -test.bench='^Benchmark(CodeUnmarshal|CodeEncoder)$' \
			-test.benchtime=200x)
	echo "(targets: rate512k within 2 % of untraced; full mode ~30x and the runtime's tracer ~5x on allocation-bound loops)"
fi

if on 9; then
	echo
	echo "== 9. start to \"attached\" on big code, ms (median of $REPS; first: empty plan cache, cached: the plan from the first)"
	# attach_ms CACHE FLAGS -p PID | -- CMD...: one start-to-"attached" time
	attach_ms() {
		local cache=$1 flags=$2 t t0 ms
		shift 2
		rm -rf "$TMP/a.out"
		t0=$(date +%s%N)
		# shellcheck disable=SC2086
		"$BUILD/traceaf-bpf" $flags --cache-dir "$cache" -o "$TMP/a.out" "$@" >"$TMP/a.t" 2>&1 &
		t=$!
		for _ in $(seq 60000); do grep -qs attached "$TMP/a.t" && break; kill -0 "$t" 2>/dev/null || break; sleep 0.01; done
		ms=$((($(date +%s%N) - t0) / 1000000))
		grep -qs attached "$TMP/a.t" || ms=failed
		kill -INT "$t" 2>/dev/null || true
		wait "$t" 2>/dev/null || true
		echo "$ms"
	}
	# row NAME FLAGS -p PID | -- CMD...: first and cached, REPS each
	row() {
		local name=$1 flags=$2 i c
		shift 2
		for i in $(seq "$REPS"); do
			c=$TMP/cache.$i
			rm -rf "$c"
			attach_ms "$c" "$flags" "$@" >>"$TMP/a.first"
			attach_ms "$c" "$flags" "$@" >>"$TMP/a.cached"
		done
		echo "$name${flags:+ $flags}: first $(median <"$TMP/a.first") (runs: $(tr '\n' ' ' <"$TMP/a.first")), cached $(median <"$TMP/a.cached") (runs: $(tr '\n' ' ' <"$TMP/a.cached"))"
		rm -rf "$TMP"/a.* "$TMP"/cache.*
	}
	textmb() {
		local h
		h=$(readelf -SW "$1" | awk '{ for (i = 1; i < NF; i++) if ($i == ".text") print $(i + 4) }')
		awk -v b=$((16#${h:-0})) 'BEGIN { printf "%.1f", b / 1e6 }'
	}
	src=$BUILD/bench/bigcode-src
	big=$BUILD/bench/bigcode-go1.27
	if [ ! -x "$big" ] || [ tests/bench/bigcode/gen.sh -nt "$big" ]; then
		tests/bench/bigcode/gen.sh "$src" &&
			(cd "$src" && GOTOOLCHAIN=local GOFLAGS=-buildvcs=false GOPROXY=off \
				GOCACHE="$BUILD/go-cache" CGO_ENABLED=0 \
				/usr/lib/go-1.27/bin/go build -trimpath -o "$big" .) || exit 1
	fi
	# Stripped, as services ship (no .symtab, no DWARF: their reading is
	# not planning and the cache does not save it).
	strip -o "$TMP/bigcode" "$big"
	"$TMP/bigcode" >"$TMP/g.w" 2>&1 &
	w=$!
	for _ in $(seq 600); do grep -qs '^ready' "$TMP/g.w" && break; sleep 0.1; done
	for flags in "" "--memprofilerate 524288"; do
		row "generated Go 1.27 service (stripped, $(textmb "$big") MB .text, -p)" "$flags" -p "$w"
	done
	kill "$w"
	wait "$w" 2>/dev/null || true
	deb=$BUILD/bench/debian
	if [ "${BENCH_DEBIAN:-1}" != 0 ] && [ ! -d "$deb/usr/bin" ]; then
		mkdir -p "$deb/pkgs"
		# The newest in the configured suites (trixie's are go1.24+).
		(cd "$deb/pkgs" && for p in prometheus caddy; do
			v=$(apt-cache madison "$p" 2>/dev/null | awk '{ print $3 }' | sort -V | tail -n 1)
			[ -n "$v" ] && apt-get download -q "$p=$v" >/dev/null 2>&1 || true
		done)
		for d in "$deb"/pkgs/*.deb; do [ -f "$d" ] && dpkg-deb -x "$d" "$deb"; done
	fi
	for b in "$deb"/usr/bin/prometheus "$deb"/usr/bin/caddy; do
		[ -x "$b" ] || continue
		case $b in *caddy) arg=version ;; *) arg=--version ;; esac
		name="$(basename "$b") ($(/usr/lib/go-1.27/bin/go version "$b" | awk "{ print \$2 }"), $(textmb "$b") MB .text, -- $arg)"
		for flags in "" "--memprofilerate 524288"; do
			row "$name" "$flags" -- "$b" "$arg"
		done
	done
	echo "(targets: first <= 2000, cached <= 500 for >= 40 MB of .text)"
fi
if on 10; then
	echo
	echo "== 10. report: a ~1 GB trace set on one core (events/s, peak RSS)"
	set_dir=$BUILD/bench/report-set
	if ! compgen -G "$set_dir/*.trace" >/dev/null; then
		rm -rf "$set_dir"
		mkdir -p "$set_dir"
		"$BUILD/traceaf-bpf" --stacks -r 128M -o "$set_dir" -- \
			"$GOBIN/fullwork-go1.27" -wait=false -scale "${REPORT_SCALE:-20}" \
			>/dev/null 2>"$TMP/set.err" || { tail -n 3 "$TMP/set.err"; exit 1; }
	fi
	echo "set: $(ls "$set_dir"/*.trace | wc -l) files, $(du -cb "$set_dir"/*.trace | tail -n 1 | cut -f1) bytes of traces, $(du -cb "$set_dir"/*.stacks | tail -n 1 | cut -f1) of stack sidecars"
	for flags in --no-stacks ""; do
		for _ in $(seq "$REPS"); do
			/usr/bin/time -f "%e %U %M" -o "$TMP/t" taskset -c 0 \
				"$BUILD/traceaf-bpf" report --json $flags "$set_dir" >"$TMP/r.json"
			ev=$(python3 -c "import json,sys; print(sum(p['events'] for p in json.load(open(sys.argv[1]))['processes']))" "$TMP/r.json")
			read -r wall user rss <"$TMP/t"
			echo "$wall $user $rss $ev"
		done | sort -g | awk -v f="${flags:-with stacks}" '{ r[NR] = $0 } END {
			split(r[int((NR + 1) / 2)], m, " ")
			printf "report %-12s %d events in %.1f s wall (%.1f s user): %.1f M events/s, peak RSS %.0f MiB (median of %d)\n",
				f, m[4], m[1], m[2], m[4] / m[1] / 1e6, m[3] / 1024, NR }'
	done
	echo "(target: >= 20 M events/s; memory bounded by the live heap, not the files)"
fi
