#!/bin/bash
# Missing kernel features and privileges are found before anything is
# loaded or attached (issue 6, item 5).  The tracer is run, as root,
# against a live Go program (knownalloc, Go 1.27) in conditions made real
# for it alone, with nothing faked inside the product:
#
#   no_btf        a private mount namespace with an empty tmpfs over
#                 /sys/kernel/btf (and over /boot, /lib/modules and
#                 /usr/lib/debug, the other places libbpf looks for a
#                 vmlinux with BTF, where they exist)
#   no_uprobes    a private mount namespace with an empty tmpfs over the
#                 uprobe PMU's sysfs directory (its "type" file is what
#                 libbpf reads to make a uprobe perf event)
#   no_cap_bpf    root with CAP_BPF and CAP_SYS_ADMIN dropped from the
#                 bounding set (capsh --drop: gone after exec)
#   no_cap_perfmon  root without CAP_PERFMON and CAP_SYS_ADMIN
#   no_cap_ptrace   root without CAP_SYS_PTRACE
#   no_caps       root without all four
#
# Each must print exactly the expected line on stderr, exit 1, make no
# bpf() or perf_event_open() call at all (strace of the tracer), write no
# file, and leave the target as it was: its code identical to its file
# (no int3 left), and it then does its work and exits 0.  Control: root
# without CAP_SYS_ADMIN only (CAP_BPF + CAP_PERFMON suffice) traces it.
source "$(dirname "$0")/lib/lib.sh"
[ -x "$TRACER" ] || fail "tracer not built: $TRACER"
for tool in strace capsh unshare; do
	command -v $tool >/dev/null || fail "needs $tool"
done
BIN=$(workload knownalloc 1.27) || exit 1
SUMMARY=()

start_bg "$TMP/target.log" "$BIN" -n 1000
GPID=$BG_PID
wait_for_line "$TMP/target.log" '^ready' 20 || fail "workload did not start: $(cat "$TMP/target.log")"

# refuse NAME EXPECTED-LINE WRAPPER...: runs WRAPPER... -c 'strace tracer' sh
# ARGS (WRAPPER ends with a shell: capsh's bash, or sh)
refuse() {
	local name=$1 want=$2 rc patched
	shift 2
	"$@" -c 'exec strace -f -qq -o "$1" -e trace=bpf,perf_event_open "$2" -p "$3" -o "$4"' \
		sh "$TMP/$name.strace" "$TRACER" "$GPID" "$TMP/out-$name" \
		>"$TMP/$name.out" 2>"$TMP/$name.err"
	rc=$?
	[ $rc -eq 1 ] || fail "$name: exit $rc, want 1; stderr: $(cat "$TMP/$name.err")"
	[ "$(cat "$TMP/$name.err")" = "$want" ] ||
		fail "$name: stderr '$(cat "$TMP/$name.err")', want '$want'"
	[ -f "$TMP/$name.strace" ] || fail "$name: strace did not run"
	[ ! -s "$TMP/$name.strace" ] ||
		fail "$name: the tracer called bpf/perf_event_open before refusing: $(head -n 3 "$TMP/$name.strace")"
	[ -z "$(ls -A "$TMP/out-$name" 2>/dev/null)" ] ||
		fail "$name: files written: $(ls "$TMP/out-$name")"
	kill -0 "$GPID" 2>/dev/null || fail "$name: the target died"
	patched=$(text_patched "$GPID") || fail "$name: cannot read the target's code"
	[ "$patched" -eq 0 ] || fail "$name: $patched bytes of the target's code changed"
	SUMMARY+=("$name: ${want#traceaf-bpf: }")
}

hide_btf='mount -t tmpfs none /sys/kernel/btf'
for d in /boot /lib/modules /usr/lib/debug; do
	[ -d $d ] && hide_btf="$hide_btf && mount -t tmpfs none $d"
done
refuse no_btf \
	"traceaf-bpf: no kernel BTF: /sys/kernel/btf/vmlinux: No such file or directory (the kernel needs CONFIG_DEBUG_INFO_BTF)" \
	unshare -m --propagation private sh -c "$hide_btf && exec sh \"\$@\"" sh

# A symlink to /sys/devices/uprobe: the mount goes over its target.
[ -r /sys/bus/event_source/devices/uprobe/type ] ||
	fail "this kernel has no uprobe PMU: nothing to hide"
refuse no_uprobes \
	"traceaf-bpf: uprobes unavailable: /sys/bus/event_source/devices/uprobe/type: No such file or directory (the kernel needs CONFIG_UPROBE_EVENTS)" \
	unshare -m --propagation private sh -c \
	'mount -t tmpfs none /sys/bus/event_source/devices/uprobe && exec sh "$@"' sh

refuse no_cap_bpf \
	"traceaf-bpf: missing capability: CAP_BPF or CAP_SYS_ADMIN (load BPF programs)" \
	capsh --drop=cap_bpf,cap_sys_admin --
refuse no_cap_perfmon \
	"traceaf-bpf: missing capability: CAP_PERFMON or CAP_SYS_ADMIN (attach uprobes)" \
	capsh --drop=cap_perfmon,cap_sys_admin --
refuse no_cap_ptrace \
	"traceaf-bpf: missing capability: CAP_SYS_PTRACE (read the target's executable and memory)" \
	capsh --drop=cap_sys_ptrace --
refuse no_caps \
	"traceaf-bpf: missing capabilities: CAP_BPF or CAP_SYS_ADMIN (load BPF programs), CAP_PERFMON or CAP_SYS_ADMIN (attach uprobes), CAP_SYS_PTRACE (read the target's executable and memory)" \
	capsh --drop=cap_bpf,cap_perfmon,cap_sys_admin,cap_sys_ptrace --

# Control: the same wrapper, CAP_BPF + CAP_PERFMON + CAP_SYS_PTRACE kept.
capsh --drop=cap_sys_admin -- -c '"$1" -p "$2" -o "$3" -d 1s' sh \
	"$TRACER" "$GPID" "$TMP/out-control" >"$TMP/control.log" 2>&1 ||
	fail "control: root without CAP_SYS_ADMIN only cannot trace: $(cat "$TMP/control.log")"
grep -q "attached to PID $GPID" "$TMP/control.log" ||
	fail "control: no attach line: $(cat "$TMP/control.log")"
ls "$TMP/out-control"/*.trace >/dev/null 2>&1 || fail "control: no trace file"
SUMMARY+=("control: without CAP_SYS_ADMIN only: attached, exit 0")

kill -USR1 "$GPID"
wait_exit "$GPID" 30 || fail "the target failed after the refusals: $(tail -n 3 "$TMP/target.log")"
grep -q '^done nodes=1000' "$TMP/target.log" || fail "target output: $(cat "$TMP/target.log")"

printf '  %s\n' "${SUMMARY[@]}"
pass "${#SUMMARY[@]} cases; target untouched"
