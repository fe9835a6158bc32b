#!/bin/bash
# test_tree_layout - the tree shows the stages (ARCHITECTURE.md): user/
# holds main.c and one folder per stage, include/ only what BPF and
# userspace share (every header there is included by a BPF program), and
# no module or stage includes one that includes it back.
. "$(dirname "$0")/lib/lib.sh"

cd "$ROOT" || fail "no $ROOT"
root_c=$(find user -maxdepth 1 -name '*.c' ! -name main.c -printf '%f ')
[ -z "$root_c" ] || fail "user/ holds .c files besides main.c: $root_c"
root_h=$(find user -maxdepth 1 -name '*.h' -printf '%f ')
[ -z "$root_h" ] || fail "user/ holds headers: $root_h"
for h in include/*.h; do
	grep -q "#include \"$(basename "$h")\"" bpf/*.bpf.c ||
		fail "$h is not shared with BPF (no bpf/*.bpf.c includes it): it belongs beside its .c in user/"
done
for d in user/*/; do
	case $(basename "$d") in
	util | inspect | attach | trace | format | analysis) ;;
	*) fail "user/$(basename "$d") is not a stage of ARCHITECTURE.md" ;;
	esac
done
out=$(python3 tests/e2e/lib/include_graph.py user) ||
	fail "include cycles: $(grep cycle <<<"$out" | tr '\n' ';')"
pass "$(tail -n 1 <<<"$out"), no cycle"
