#!/bin/bash
# test_cmd_mode - `traceaf-bpf -o DIR -- CMD ARGS...` starts CMD with the
# probes in place, traces it from its first instruction, passes its
# output through and exits with its status.
#
# CMD is nodeburst, which allocates N (default 20000) main.Node as soon as
# main starts (no waiting), then prints "out: ARG" / "err: ARG" for each
# ARG and "done nodes=N".
#  - count127: Go 1.27, exit 0, ARGS with spaces, a leading dash, a
#    second "--" and UTF-8: the tracer exits 0; its stdout is exactly the
#    program's; its stderr minus the "traceaf-bpf: " lines is exactly the
#    program's; the trace is valid with Go 1.23's and Go 1.27's parsers and
#    counts all N main.Node (exactly N), and the runtime's own start-up
#    allocations (runtime.p, allocated before main) are in it;
#  - exit3: Go 1.21 stripped PIE, -exit 3: status 3, all N main.Node;
#  - kill9 / kill15: the program kills itself with SIGKILL / SIGTERM
#    (Go 1.23): status 137 / 143;
#  - sigint / sigterm: the program holds after its work; SIGINT / SIGTERM
#    to the tracer (only) reaches it ("got interrupt" / "got terminated"),
#    it exits 42 / 43 and so does the tracer, with all N main.Node traced;
#  - notgo: /bin/true, and a shell script that would leave a mark: one
#    line on stderr, nothing on stdout, status 1, the script never ran, no
#    trace file;
#  - missing: a path that does not exist, and a name not on PATH: one line,
#    status 1; no CMD at all after "--": one line, status 2 (bad usage).
source "$(dirname "$0")/lib/lib.sh"
N=${N:-20000}

[ -x "$TRACER" ] || fail "tracer not built: $TRACER"
TC123=$(tracecheck 1.23) || exit 1
TC127=$(tracecheck 1.27) || exit 1
NB127=$(workload nodeburst 1.27) || { echo "$NB127"; exit 1; }
NB121=$(workload nodeburst 1.21 -stripped-pie) || { echo "$NB121"; exit 1; }
NB123=$(workload nodeburst 1.23) || { echo "$NB123"; exit 1; }
report=""  # "; "-separated case results

# traced NAME N: the case's files must validate and count exactly N main.Node
traced() {
	local files res c123 c127 bad
	files=("$TMP/$1/out"/*.trace)
	[ -f "${files[0]}" ] || fail "$1: no trace files: $(grep '^traceaf-bpf' "$TMP/$1/err" | tr '\n' ' ')"
	res=$(node_check "${files[@]}") || fail "$1: $res"
	read -r c123 c127 bad <<<"$res"
	[ "$c123" = "$2" ] && [ "$c127" = "$2" ] ||
		fail "$1: $c123 (Go 1.23) / $c127 (Go 1.27) main.Node allocations, want all $2"
}

# run NAME WANT_STATUS CMD...: runs the tracer in the foreground
run() {
	local name=$1 want=$2 rc
	shift 2
	mkdir -p "$TMP/$name"
	"$TRACER" -o "$TMP/$name/out" -- "$@" >"$TMP/$name/out.txt" 2>"$TMP/$name/err"
	rc=$?
	[ $rc -eq "$want" ] || fail "$name: exit status $rc, want $want: $(tail -n 4 "$TMP/$name/err" | tr '\n' ' ')"
}

# count127: status 0, output passed through, every Node traced.
run count127 0 "$NB127" -n "$N" -- 'hello world' -x -- 'ünï cödé	tab'
printf 'out: %s\n' 'hello world' -x -- 'ünï cödé	tab' >"$TMP/want.out"
echo "done nodes=$N" >>"$TMP/want.out"
printf 'err: %s\n' 'hello world' -x -- 'ünï cödé	tab' >"$TMP/want.err"
cmp -s "$TMP/want.out" "$TMP/count127/out.txt" ||
	fail "count127: stdout differs: $(diff "$TMP/want.out" "$TMP/count127/out.txt" | head -n 6 | tr '\n' ' ')"
grep -v '^traceaf-bpf: ' "$TMP/count127/err" | cmp -s "$TMP/want.err" - ||
	fail "count127: program stderr differs: $(grep -v '^traceaf-bpf: ' "$TMP/count127/err" | diff "$TMP/want.err" - | head -n 6 | tr '\n' ' ')"
grep -q '^traceaf-bpf: attached to ' "$TMP/count127/err" || fail "count127: no 'attached' line"
traced count127 "$N"
f=("$TMP/count127/out"/*.trace)
[[ $(basename "${f[0]}") =~ ^nodeburst-go1\.2-[0-9]+-[0-9]{8}T[0-9]{6}Z-000001\.trace$ ]] ||
	fail "count127: file name $(basename "${f[0]}")"
p=$("$TC127" "${f[0]}" | awk '$1 == "type" && $2 == "runtime.p" && $4 == "allocs" { print $5 }')
[ "${p:-0}" -ge 1 ] || fail "count127: no runtime.p allocation (made before main) in the trace"
report="$report count127: rc 0, $N/$N Nodes, runtime.p allocs $p;"

# exit3: a non-zero status, from an old, stripped PIE.
run exit3 3 "$NB121" -n "$N" -exit 3
grep -q "^done nodes=$N$" "$TMP/exit3/out.txt" || fail "exit3: stdout: $(cat "$TMP/exit3/out.txt")"
traced exit3 "$N"
report="$report exit3 (Go 1.21 stripped PIE): rc 3, $N/$N;"

# kill9, kill15: death by signal.
run kill9 137 "$NB123" -n 1000 -die 9
run kill15 143 "$NB123" -n 1000 -die 15
report="$report kill9: rc 137; kill15: rc 143;"

# sigint, sigterm: forwarded to the program, which decides.
for sig in INT TERM; do
	name=sig${sig,,}
	code=$([ $sig = INT ] && echo 42 || echo 43)
	word=$([ $sig = INT ] && echo interrupt || echo terminated)
	mkdir -p "$TMP/$name"
	"$TRACER" -o "$TMP/$name/out" -- "$NB123" -n "$N" -hold -exit "$code" >"$TMP/$name/out.txt" 2>"$TMP/$name/err" &
	tpid=$!
	BG_PIDS+=("$tpid")
	wait_for_line "$TMP/$name/out.txt" '^holding' 60 || fail "$name: program did not start: $(cat "$TMP/$name/err")"
	ppid=$(awk '/^holding/ { print $2 }' "$TMP/$name/out.txt")
	kill -"$sig" "$tpid"
	wait_exit "$tpid" 60
	rc=$?
	[ $rc -eq "$code" ] || fail "$name: tracer exit status $rc, want $code (the program's): $(tail -n 3 "$TMP/$name/err" | tr '\n' ' ')"
	grep -q "^got $word$" "$TMP/$name/out.txt" || fail "$name: the program did not get SIG$sig: $(cat "$TMP/$name/out.txt" | tr '\n' ' ')"
	kill -0 "$ppid" 2>/dev/null && fail "$name: program PID $ppid still running"
	traced "$name" "$N"
	report="$report $name: program got it, rc $code, $N/$N;"
done

# notgo: refused before anything runs.
run notgo 1 /bin/true
printf '#!/bin/sh\ntouch %s/ran\n' "$TMP" >"$TMP/script.sh"
chmod +x "$TMP/script.sh"
run notgo2 1 "$TMP/script.sh"
for name in notgo notgo2; do
	[ "$(wc -l <"$TMP/$name/err")" = 1 ] || fail "$name: want one line on stderr: $(cat "$TMP/$name/err")"
	[ -s "$TMP/$name/out.txt" ] && fail "$name: output on stdout: $(cat "$TMP/$name/out.txt")"
	ls "$TMP/$name/out"/*.trace >/dev/null 2>&1 && fail "$name: trace files written"
done
[ -e "$TMP/ran" ] && fail "notgo2: the refused script ran"
report="$report /bin/true: '$(cat "$TMP/notgo/err")';"

# missing: no such program; no program at all.
run missing 1 "$TMP/does/not/exist"
run missing2 1 traceaf-no-such-command-h8
run missing3 2
for name in missing missing2 missing3; do
	[ "$(wc -l <"$TMP/$name/err")" = 1 ] || fail "$name: want one line on stderr: $(cat "$TMP/$name/err")"
	[ -s "$TMP/$name/out.txt" ] && fail "$name: output on stdout: $(cat "$TMP/$name/out.txt")"
done
report="$report missing: '$(cat "$TMP/missing/err")'; '--' alone: rc 2 '$(cat "$TMP/missing3/err")'"
pass "${report# }"
