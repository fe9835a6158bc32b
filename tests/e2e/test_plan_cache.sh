#!/bin/bash
# test_plan_cache - the probe plan kept on disk (attach/plan_cache.h).
#
# With nodeburst (Go 1.27, 1000 main.Node) under `-- CMD`:
#  1. an empty --cache-dir: the plan is built ("built and cached" under
#     -v -v) and one file appears, mode 0600, in a directory made 0700;
#  2. the same again: "from the cache", and the trace counts the same
#     1000 main.Node of size 56 (both parsers, replay clean);
#  3. --memprofilerate gets a plan of its own (a second file);
#  4. --no-cache: built, nothing read or written;
#  5. refused, the plan built and nothing written, with -v saying why: a
#     cache directory that is a symlink, one writable by the group, and a
#     plan file that is a symlink (to a copy of a valid plan);
#  6. a damaged plan file (a byte flipped) is a miss, the plan rebuilt and
#     the trace still right;
#  7. at most 64 plans are kept: with 70 old ones there, a new plan
#     removes the oldest and stays.
source "$(dirname "$0")/lib/lib.sh"

[ -x "$TRACER" ] || fail "tracer not built: $TRACER"
TC123=$(tracecheck 1.23) || exit 1
TC127=$(tracecheck 1.27) || exit 1
bin=$(workload nodeburst 1.27) || { echo "$bin"; exit 1; }

# run NAME ARGS...: traces nodeburst -n 1000; sets OUT, ERR
run() {
	local name=$1
	shift
	OUT=$TMP/$name
	ERR=$TMP/$name.err
	"$TRACER" -v -v -o "$OUT" "$@" -- "$bin" -n 1000 >"$TMP/$name.stdout" 2>"$ERR" ||
		fail "$name: exit status $?: $(tr '\n' ' ' <"$ERR")"
	grep -q "^done nodes=1000$" "$TMP/$name.stdout" || fail "$name: stdout: $(cat "$TMP/$name.stdout")"
}
nodes_ok() {
	local res
	res=$(node_check "$OUT"/*.trace) || fail "$1: $res"
	[ "$res" = "1000 1000 0" ] || fail "$1: main.Node 1.23/1.27 and replay errors: $res, want 1000 1000 0"
}
plan_line() { grep -m1 'probe plan' "$ERR" | sed 's/.*probe plan //'; }

C=$TMP/cache
run first --cache-dir "$C"
case $(plan_line) in "built and cached"*) ;; *) fail "first: plan $(plan_line)" ;; esac
[ "$(stat -c %a "$C")" = 700 ] || fail "cache dir mode $(stat -c %a "$C")"
files=("$C"/*.plan)
[ ${#files[@]} = 1 ] && [ -f "${files[0]}" ] || fail "first: ${#files[@]} plan files"
[ "$(stat -c %a "${files[0]}")" = 600 ] || fail "plan file mode $(stat -c %a "${files[0]}")"
nodes_ok first

run cached --cache-dir "$C"
case $(plan_line) in "from the cache"*) ;; *) fail "cached: plan $(plan_line)" ;; esac
nodes_ok cached

run sampled --cache-dir "$C" --memprofilerate 1
[ "$(ls "$C"/*.plan | wc -l)" = 2 ] || fail "sampled: $(ls "$C" | wc -l) plan files, want 2"

run nocache --cache-dir "$C" --no-cache
case $(plan_line) in "built ("*) ;; *) fail "--no-cache: plan $(plan_line)" ;; esac
[ "$(ls "$C"/*.plan | wc -l)" = 2 ] || fail "--no-cache wrote a plan"

# 5. Unsafe places.
mkdir -m 700 "$TMP/real"
ln -s "$TMP/real" "$TMP/link"
run symdir --cache-dir "$TMP/link"
grep -q "plan cache $TMP/link not used" "$ERR" || fail "symlinked dir used: $(plan_line)"
[ -z "$(ls "$TMP/real")" ] || fail "wrote through a symlinked dir"
mkdir -m 770 "$TMP/grp"
chmod 770 "$TMP/grp"
run grpdir --cache-dir "$TMP/grp"
grep -q "not a directory of ours alone" "$ERR" || fail "group-writable dir used: $(plan_line)"
[ -z "$(ls "$TMP/grp")" ] || fail "wrote into a group-writable dir"
mkdir -m 700 "$TMP/symfile"
cp "${files[0]}" "$TMP/plan.copy"
ln -s "$TMP/plan.copy" "$TMP/symfile/$(basename "${files[0]}")"
run symfile --cache-dir "$TMP/symfile"
case $(plan_line) in "from the cache"*) fail "read a plan through a symlink" ;; esac
nodes_ok symfile

# 6. A damaged file.
f=${files[0]}
sz=$(stat -c %s "$f")
printf '\xff' | dd of="$f" bs=1 seek=$((sz / 2)) conv=notrunc status=none
run damaged --cache-dir "$C"
case $(plan_line) in "built and cached"*) ;; *) fail "damaged: plan $(plan_line)" ;; esac
nodes_ok damaged
run repaired --cache-dir "$C"
case $(plan_line) in "from the cache"*) ;; *) fail "repaired: plan $(plan_line)" ;; esac
# 7. Pruning.
P=$TMP/prune
mkdir -m 700 "$P"
for i in $(seq 1 70); do
	printf 'old' >"$P/$(printf '%016x' "$i").plan"
	touch -d "2026-01-01 00:00:$((i % 60))" "$P/$(printf '%016x' "$i").plan"
done
run prune --cache-dir "$P"
[ "$(ls "$P"/*.plan | wc -l)" = 64 ] || fail "prune: $(ls "$P"/*.plan | wc -l) plans kept, want 64"
[ -f "$P/$(basename "${files[0]}")" ] || fail "prune removed the new plan"
pass "built, cached, per mode, --no-cache, unsafe dirs and files refused, damage a miss, at most 64 kept"
