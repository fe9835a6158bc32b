#!/bin/bash
# Refusals with reasons (issue 4, item 4).  The tracer is pointed at live
# processes it cannot trace; for each it must print exactly one line on
# stderr that names the reason, exit 1, attach no uprobe (checked on the
# tracer's own system calls with strace, so tests running in parallel do
# not matter), write no file, and leave the process as it was (the Go ones
# then finish their work normally).
#
#   not_go        a tiny C program
#   gccgo         a C program linked against a stand-in libgo.so (what
#                 gccgo's programs need), the signature go_binary looks for
#   i386          knownalloc built with GOARCH=386: a Go program, not amd64
#                 (through -- CMD where the kernel cannot run 32-bit code)
#   go120         a copy of knownalloc (Go 1.21) whose build info says go1.20
#   no_runtime    a stripped copy whose function table no longer names
#                 runtime.mallocgc (as if obfuscated; it still runs): the
#                 runtime functions cannot be found
#   bad_pclntab   a copy with a damaged function table: the Go runtime
#                 itself refuses to start with it, so the process is held
#                 at its first instruction (exec_stopped.c)
#   arm64         a copy with e_machine = aarch64: the kernel refuses to
#                 exec it (ENOEXEC), so no such process can exist on an
#                 amd64 host; checked here only as that, the file itself is
#                 refused in test_go_binary (test_open_rejects_an_arm64_elf)
source "$(dirname "$0")/lib/lib.sh"
[ -x "$TRACER" ] || fail "tracer not built: $TRACER"
for tool in strace cc objcopy readelf; do
	command -v $tool >/dev/null || fail "needs $tool"
done
# libbpf attaches a uprobe with perf_event_open(type = the uprobe PMU);
# strace prints the type in hex.
UPROBE_TYPE=$(printf '0x%x' "$(cat /sys/bus/event_source/devices/uprobe/type)")
SUMMARY=()

# refuse NAME PID REGEX: see the header.
refuse() {
	local name=$1 pid=$2 re=$3 rc lines target=(-p "$2")
	# refuse NAME -- CMD RE: the same for a program the tracer would start
	if [ "$pid" = -- ]; then
		target=(-- "$3")
		pid=""
		re=$4
	fi
	strace -f -qq -o "$TMP/$name.strace" -e trace=perf_event_open,bpf,execve \
		"$TRACER" -o "$TMP/out-$name" "${target[@]}" >"$TMP/$name.out" 2>"$TMP/$name.err"
	rc=$?
	[ $rc -eq 1 ] || fail "$name: exit $rc, want 1; stderr: $(cat "$TMP/$name.err")"
	lines=$(wc -l <"$TMP/$name.err")
	[ "$lines" -eq 1 ] || fail "$name: $lines lines on stderr, want 1: $(cat "$TMP/$name.err")"
	grep -qE "$re" "$TMP/$name.err" ||
		fail "$name: stderr '$(cat "$TMP/$name.err")' does not match /$re/"
	if grep -qE "perf_event_open\(\{type=$UPROBE_TYPE[,/ ]|UPROBE_MULTI" "$TMP/$name.strace"; then
		fail "$name: the tracer attached a uprobe before refusing"
	fi
	if [ -n "$(ls -A "$TMP/out-$name" 2>/dev/null)" ]; then
		fail "$name: trace files written: $(ls "$TMP/out-$name")"
	fi
	if [ -n "$pid" ]; then
		kill -0 "$pid" 2>/dev/null || fail "$name: the target died"
	elif [ "$(grep -c 'execve(' "$TMP/$name.strace")" -ne 1 ]; then
		fail "$name: the program was started before the refusal: $(grep 'execve(' "$TMP/$name.strace" | tail -n 1)"
	fi
	SUMMARY+=("$name: $(sed 's/^traceaf-bpf: //' "$TMP/$name.err")")
}

# section FILE NAME -> "OFFSET SIZE" (decimal) of a section in the file
section() {
	local hex
	hex=$(readelf -SW "$1" | sed 's/^ *\[ *[0-9]*\] *//' |
		awk -v n="$2" '$1 == n { print $4, $5; exit }')
	[ -n "$hex" ] || return 1
	set -- $hex
	echo $((16#$1)) $((16#$2))
}

# offset_in FILE SECTION PERL-REGEX -> file offset of the first match inside SECTION
offset_in() {
	local off size rel
	read -r off size < <(section "$1" "$2")
	[ -n "$off" ] || return 1
	rel=$(dd if="$1" bs=1M iflag=skip_bytes,count_bytes skip="$off" count="$size" status=none |
		LC_ALL=C grep -obUaP "$3" | head -n1 | cut -d: -f1)
	[ -n "$rel" ] || return 1
	echo $((off + rel))
}

# patch FILE OFFSET BYTES (printf format)
patch() {
	printf "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# start_go NAME BIN: runs a knownalloc binary until it says ready; sets GPID
start_go() {
	start_bg "$TMP/$1.log" "$2" -n 1000
	GPID=$BG_PID
	wait_for_line "$TMP/$1.log" '^ready' 20 ||
		fail "$1: workload did not start: $(cat "$TMP/$1.log")"
}

# finish_go NAME: the workload still does its work and exits 0
finish_go() {
	kill -USR1 "$GPID"
	wait_exit "$GPID" 30 || fail "$1: workload failed after the refusal: $(tail -n 3 "$TMP/$1.log")"
	grep -q '^done nodes=1000' "$TMP/$1.log" || fail "$1: workload output: $(cat "$TMP/$1.log")"
}

# --- not Go: a C program ------------------------------------------------
cat >"$TMP/cprog.c" <<'EOF'
#include <unistd.h>
int main(void) { for (;;) pause(); }
EOF
cc -o "$TMP/cprog" "$TMP/cprog.c" || fail "cannot build a C program"
start_bg "$TMP/cprog.log" "$TMP/cprog"
refuse not_go "$BG_PID" "^traceaf-bpf: PID $BG_PID \\(cprog\\) is not a Go program.*not a Go binary"

# --- gccgo: needs libgo.so ----------------------------------------------
mkdir -p "$TMP/lib"
echo 'int __go_stand_in;' | cc -x c -shared -fPIC -Wl,-soname,libgo.so.23 \
	-o "$TMP/lib/libgo.so.23" - || fail "cannot build the libgo stand-in"
cc -o "$TMP/gccgoprog" "$TMP/cprog.c" -Wl,--no-as-needed "$TMP/lib/libgo.so.23" ||
	fail "cannot link against the libgo stand-in"
start_bg "$TMP/gccgo.log" env LD_LIBRARY_PATH="$TMP/lib" "$TMP/gccgoprog"
sleep 0.2
refuse gccgo "$BG_PID" "is not a Go program we can trace: .*built by gccgo"

# --- a Go program for another architecture that runs here: i386 --------
BIN386=$GOBIN_DIR/knownalloc-go1.23-386
SRC=$ROOT/tests/go/knownalloc
if [ ! -x "$BIN386" ] || [ -n "$(find "$SRC" -newer "$BIN386" -type f)" ]; then
	mkdir -p "$GOBIN_DIR"
	(cd "$SRC" && GOTOOLCHAIN=local GOFLAGS=-buildvcs=false GOPROXY=off \
		GOCACHE="$ROOT/build/go-cache" GOPATH="$ROOT/build/go-path" \
		CGO_ENABLED=0 GOARCH=386 /usr/lib/go-1.23/bin/go build -trimpath \
		-o "$BIN386.tmp" ./main.go) >"$TMP/build386.log" 2>&1 &&
		mv "$BIN386.tmp" "$BIN386" ||
		fail "cannot build knownalloc for GOARCH=386: $(tail -n 3 "$TMP/build386.log")"
fi
# A kernel without 32-bit user mode (a PVM guest, or IA32 emulation
# disabled) cannot run it: then the same refusal is checked through
# -- CMD, which inspects the executable before starting it.
"$BIN386" -h >/dev/null 2>&1
if [ $? -ne 126 ]; then
	start_go i386 "$BIN386"
	refuse i386 "$GPID" "is not a Go program we can trace: .*built for i386 .*not x86-64"
	finish_go i386
else
	refuse i386 -- "$BIN386" "is not a Go program we can trace: .*built for i386 .*not x86-64"
	SUMMARY[-1]="${SUMMARY[-1]} (as -- CMD: this kernel cannot run 32-bit programs)"
fi

# --- Go older than 1.21: the build info of a copy says go1.20 -----------
ORIG=$(workload knownalloc 1.21 -stripped) || exit 1
cp "$ORIG" "$TMP/ka-go120"
at=$(offset_in "$TMP/ka-go120" .go.buildinfo 'go1\.21') ||
	fail "no version string in the build info of $ORIG"
patch "$TMP/ka-go120" "$at" 'go1.20'
start_go go120 "$TMP/ka-go120"
refuse go120 "$GPID" "PID $GPID \\(ka-go120\\).* built with go1\\.20(\\.[0-9]+)?; Go 1\\.21 or newer is required"
finish_go go120

# --- a Go program whose runtime functions cannot be found ---------------
ORIG=$(workload knownalloc 1.24 -stripped) || exit 1
cp "$ORIG" "$TMP/ka-nomalloc"
at=$(offset_in "$TMP/ka-nomalloc" .gopclntab 'runtime\.mallocgc\x00') ||
	fail "no runtime.mallocgc in the function table of $ORIG"
patch "$TMP/ka-nomalloc" $((at + 15)) 'X'
start_go no_runtime "$TMP/ka-nomalloc"
refuse no_runtime "$GPID" "is not a Go program we can trace: .*names no runtime\\.mallocgc: its runtime functions cannot be found"
finish_go no_runtime

# --- a damaged function table: held at exec -----------------------------
cc -O1 -o "$TMP/exec_stopped" "$ROOT/tests/e2e/lib/exec_stopped.c" ||
	fail "cannot build exec_stopped"
ORIG=$(workload knownalloc 1.23 -stripped) || exit 1
cp "$ORIG" "$TMP/ka-badpcln"
read -r at _ < <(section "$TMP/ka-badpcln" .gopclntab)
[ -n "$at" ] || fail "no .gopclntab in $ORIG"
patch "$TMP/ka-badpcln" "$at" '\0\0\0\0'
start_bg "$TMP/badpcln.log" "$TMP/exec_stopped" "$TMP/ka-badpcln"
wait_for_line "$TMP/badpcln.log" '^stopped' 10 || fail "bad_pclntab: $(cat "$TMP/badpcln.log")"
SPID=$(awk '/^stopped/ { print $2 }' "$TMP/badpcln.log")
BG_PIDS+=("$SPID")
refuse bad_pclntab "$SPID" "is not a Go program we can trace: .*function table \\(pclntab\\) of this go1\\.23[.0-9]* binary is damaged .*runtime functions cannot be found"
# What the tracer said is what the runtime would have found: let it run.
kill -CONT "$SPID"
wait_exit "$BG_PID" 10
grep -q 'invalid function symbol table' "$TMP/badpcln.log" ||
	fail "bad_pclntab: the Go runtime ran with the damaged table: $(tail -n 3 "$TMP/badpcln.log")"

# --- aarch64: cannot run here -------------------------------------------
ORIG=$(workload knownalloc 1.23) || exit 1
cp "$ORIG" "$TMP/ka-arm64"
patch "$TMP/ka-arm64" 18 '\267\0'
"$TMP/ka-arm64" -n 1 >"$TMP/arm64.log" 2>&1
rc=$?
[ $rc -eq 126 ] || fail "arm64: the kernel ran an aarch64 ELF (exit $rc): $(cat "$TMP/arm64.log")"
SUMMARY+=("arm64: not runnable on this host (exec: $(sed 's/.*: //' "$TMP/arm64.log")); the file is refused by go_binary_open (unit test)")

printf '  %s\n' "${SUMMARY[@]}"
pass "${#SUMMARY[@]} cases"
