#!/bin/bash
# test_binary_kinds - the binaries and processes issue 4 names besides the
# version x stripped x PIE matrix (test_compat_matrix.sh):
#   cgo       a dynamically linked cgo executable (Go 1.27, CGO_ENABLED=1)
#   deleted   the executable is deleted after the process started
#   replaced  the executable's path holds another file after the start
#   chroot    the process runs in its own mount namespace and root
#             (unshare -m + chroot into a directory holding only it)
# Each: the tracer attaches to the running process, the process allocates
# N main.Node, exits; every file validates with Go 1.23's and 1.27's
# parsers and counts >= 99.9% of N.
source "$(dirname "$0")/lib/lib.sh"
N=${N:-20000}

[ -x "$TRACER" ] || fail "tracer not built: $TRACER"
TC123=$(tracecheck 1.23) || exit 1
TC127=$(tracecheck 1.27) || exit 1
KA=$(workload knownalloc 1.27) || exit 1

# run_case NAME LAUNCH... : LAUNCH starts the workload (args appended)
run_case() {
	local name=$1 d=$TMP/$1 wpid tpid rc count f line
	shift
	mkdir -p "$d"
	start_bg "$d/work.log" "$@" -n "$N"
	wait_for_line "$d/work.log" '^ready' 20 || fail "$name: workload did not start: $(cat "$d/work.log")"
	wpid=$(sed -n 's/^ready \([0-9]*\)$/\1/p' "$d/work.log")
	[ -n "$wpid" ] || fail "$name: no PID in: $(cat "$d/work.log")"
	[ -n "${AFTER_START:-}" ] && eval "$AFTER_START"
	start_bg "$d/tracer.log" "$TRACER" -p "$wpid" -o "$d/out" -g 250ms
	tpid=$BG_PID
	wait_for_line "$d/tracer.log" 'attached' 30 ||
		fail "$name: tracer did not attach: $(cat "$d/tracer.log")"
	grep -q warning "$d/tracer.log" && fail "$name: $(grep warning "$d/tracer.log")"
	kill -USR1 "$wpid"
	wait_for_line "$d/work.log" "^done nodes=$N" 120 || fail "$name: workload: $(cat "$d/work.log")"
	wait_exit "$tpid" 60
	rc=$?
	[ $rc -eq 0 ] || fail "$name: tracer exited with $rc: $(tail -n 5 "$d/tracer.log")"
	for tc in "$TC123" "$TC127"; do
		count=0
		for f in "$d"/out/*.trace; do
			[ -f "$f" ] || fail "$name: no trace files"
			"$tc" "$f" >"$d/check.out" 2>&1 ||
				fail "$name: $(basename "$tc") rejects $(basename "$f"): $(grep -m1 '^error' "$d/check.out")"
			line=$(awk '$1 == "type" && $2 == "main.Node" && $4 == "allocs" { print $5; exit }' "$d/check.out")
			count=$((count + ${line:-0}))
		done
		[ $((count * 1000)) -ge $((N * 999)) ] && [ "$count" -le "$N" ] ||
			fail "$name: $(basename "$tc") counts $count main.Node of $N"
	done
	results+=("$name=$count")
}
results=()

# cgo: knownalloc plus tests/go/cgoalloc/cgo.go, built here
# (build-workloads.sh builds with CGO_ENABLED=0).
CGO_BIN=$TMP/cgoalloc
mkdir -p "$TMP/cgosrc"
cp "$ROOT/tests/go/knownalloc/main.go" "$ROOT/tests/go/cgoalloc/cgo.go" "$TMP/cgosrc/"
(cd "$TMP/cgosrc" && CGO_ENABLED=1 GOTOOLCHAIN=local GOFLAGS=-buildvcs=false \
	GOPROXY=off GOCACHE="$BUILD/go-cache" GOPATH="$BUILD/go-path" \
	/usr/lib/go-1.27/bin/go build -o "$CGO_BIN" ./main.go ./cgo.go) >"$TMP/cgo-build.log" 2>&1 ||
	fail "cannot build the cgo workload: $(tail -n 5 "$TMP/cgo-build.log")"
file -L "$CGO_BIN" | grep -q 'dynamically linked' || fail "cgo workload is not dynamically linked"
run_case cgo "$CGO_BIN"

cp "$KA" "$TMP/ka-deleted"
AFTER_START='rm -f "$TMP/ka-deleted"' run_case deleted "$TMP/ka-deleted"

cp "$KA" "$TMP/ka-replaced"
AFTER_START='rm -f "$TMP/ka-replaced"; cp /bin/true "$TMP/ka-replaced"' run_case replaced "$TMP/ka-replaced"

# A root of its own holding only the (static) workload, in a new mount
# namespace: its /proc/PID/exe path means nothing in ours.
ROOTFS=$TMP/rootfs
mkdir -p "$ROOTFS/bin"
cp "$KA" "$ROOTFS/bin/ka"
run_case chroot unshare -m chroot "$ROOTFS" /bin/ka

pass "${results[*]}"
