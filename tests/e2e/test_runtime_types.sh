#!/bin/bash
# test_runtime_types - types made at run time (reflect.StructOf, ArrayOf,
# PointerTo, SliceOf, MapOf, ChanOf, FuncOf) carry the runtime's own names
# in the type table, as does a generic instantiation (issue 14, item 4).
#
# rttypes (tests/go/rttypes) allocates 2000 objects of each of eight
# run-time types and of main.Pair[string,int], and stays 1 s after its
# work (-linger: the names are read from the live process).  Reference:
# the same program under the runtime's own tracer (GODEBUG=
# traceallocfree=1, -native), whose type table the runtime names through
# its reflectOffs map.  For Go 1.21 (bucket maps), 1.23, 1.24 (Swiss
# maps), 1.27, stripped PIE 1.23 and 1.27 (reflectOffs found in the code
# of reflect.addReflectOff): `tracecheck -replay` of our file lists every
# type of >= 2000 allocations with the same name, size and count as the
# runtime's own trace of that Go version (1.23's for 1.21, which has no
# AllocFree experiment), and no type descriptor failed to read.
# Observed (2026-12-03, this VM): 10 of 10 lines equal for each; ~15 s.
source "$(dirname "$0")/lib/lib.sh"
N=2000
[ -x "$TRACER" ] || fail "tracer not built: $TRACER"
TC123=$(tracecheck 1.23) || exit 1
TC127=$(tracecheck 1.27) || exit 1

# big_types TRACECHECK-OUTPUT: the "type NAME SIZE allocs N" lines, N >= $N
big_types() {
	awk -v n="$N" '$1 == "type" && $(NF - 1) == "allocs" && $NF >= n' "$1" | sort
}

for ref in 1.23 1.27; do
	BIN=$(workload rttypes "$ref") || exit 1
	[ $ref = 1.23 ] && tc=$TC123 || tc=$TC127
	GODEBUG=traceallocfree=1 "$BIN" -n $N -native "$TMP/native$ref.trace" >"$TMP/native$ref.log" 2>&1 ||
		fail "rttypes $ref -native failed: $(tail -n 3 "$TMP/native$ref.log")"
	"$tc" -replay "$TMP/native$ref.trace" >"$TMP/native$ref.tc" 2>&1
	[ "$(kv "$TMP/native$ref.tc" valid)" = 1 ] || fail "the runtime's own trace ($ref) does not validate"
	big_types "$TMP/native$ref.tc" >"$TMP/want$ref"
	grep -q '^type struct { ID int64; Next \*int; Name string "json:\\"name\\"" } 32 allocs' "$TMP/want$ref" ||
		fail "the runtime's own trace ($ref) has no StructOf type: $(head -n 3 "$TMP/want$ref")"
	[ "$(wc -l <"$TMP/want$ref")" -ge 10 ] || fail "the runtime's own trace ($ref) has $(wc -l <"$TMP/want$ref") big types, want 10"
done

res=""
for spec in 1.21: 1.23: 1.24: 1.27: 1.23:-stripped-pie 1.27:-stripped-pie; do
	ver=${spec%%:*} fl=${spec#*:}
	BIN=$(workload rttypes "$ver" "$fl") || exit 1
	OUT=$TMP/out$ver$fl
	"$TRACER" -o "$OUT" -- "$BIN" -n $N -linger 1s >"$TMP/w$ver$fl.log" 2>"$TMP/t$ver$fl.log" ||
		fail "Go $ver$fl: the traced run failed: $(tail -n 3 "$TMP/t$ver$fl.log")"
	files=("$OUT"/*.trace)
	[ ${#files[@]} -eq 1 ] || fail "Go $ver$fl: ${#files[@]} trace files, want 1"
	check_files "$TMP/check$ver$fl" "${files[@]}"
	big_types "$TMP/check$ver$fl/$(basename "${files[0]}").tc127" >"$TMP/got$ver$fl"
	case $ver in 1.2[1-3]) want=$TMP/want1.23 ;; *) want=$TMP/want1.27 ;; esac
	diff "$want" "$TMP/got$ver$fl" >"$TMP/diff$ver$fl" ||
		fail "Go $ver$fl: type table differs from the runtime's (< runtime, > ours): $(head -n 6 "$TMP/diff$ver$fl")"
	errs=$(sed -n 's/.*"type_errors": \([0-9]*\).*/\1/p' "$OUT"/*.summary.json)
	[ "${errs:-x}" = 0 ] || fail "Go $ver$fl: ${errs:-?} type descriptors could not be read"
	res="$res Go $ver$fl $(wc -l <"$TMP/got$ver$fl")/$(wc -l <"$want");"
done
pass "lines equal to the runtime's:$res"
