#!/bin/bash
# test_gc_cycles - every trace file tells where each GC cycle ended: the
# probe on runtime.gcSweep (once per cycle) writes F.gc beside each file,
# and the analysis counts lifetimes in the runtime's own cycles.
#
# fullwork (Go 1.21, 1.23, 1.27 stripped PIE; -scale 0.1) prints the
# runtime's own count (num_gc, runtime.MemStats.NumGC).  Checked:
#  - one file: its F.gc holds num_gc marks (every cycle of the process:
#    the tracer starts it), in time order, and `report --json` says
#    gc_cycles = num_gc with gc_cycles_exact true;
#  - the same under --rotate-size 256K (many files, each its own F.gc):
#    the marks of all files add up to num_gc (the last one may be lost
#    when the process exits with no event after it), none in two files;
#    every file's report counts exact cycles; `-n 3` leaves no F.gc of a
#    deleted file behind.
# Observed (2026-12-03, this VM): 55-70 cycles; ~20 s.
source "$(dirname "$0")/lib/lib.sh"
[ -x "$TRACER" ] || fail "tracer not built: $TRACER"

res=""
for spec in 1.21: 1.23: 1.27:-stripped-pie; do
	ver=${spec%%:*} fl=${spec#*:}
	FW=$(workload fullwork "$ver" "$fl") || exit 1
	OUT=$TMP/one$ver
	"$TRACER" -o "$OUT" -- "$FW" -scale 0.1 -wait=false >"$TMP/w$ver.log" 2>"$TMP/t$ver.log" ||
		fail "Go $ver$fl: traced run failed: $(tail -n 3 "$TMP/t$ver.log")"
	numgc=$(sed -n 's/^done .* num_gc=\([0-9]*\).*/\1/p' "$TMP/w$ver.log")
	[ -n "$numgc" ] && [ "$numgc" -gt 5 ] || fail "Go $ver$fl: num_gc '$numgc'"
	files=("$OUT"/*.trace)
	[ ${#files[@]} -eq 1 ] || fail "Go $ver$fl: ${#files[@]} files, want 1"
	gc=${files[0]}.gc
	[ -f "$gc" ] || fail "Go $ver$fl: no F.gc beside the trace"
	[ "$(head -n 1 "$gc")" = "traceaf-bpf gc 1" ] || fail "Go $ver$fl: F.gc header '$(head -n 1 "$gc")'"
	marks=$(($(wc -l <"$gc") - 1))
	[ "$marks" -eq "$numgc" ] || fail "Go $ver$fl: $marks GC marks, the runtime counted $numgc cycles"
	tail -n +2 "$gc" | awk '{ if (NR > 1 && $1 < last) exit 1; last = $1 }' || fail "Go $ver$fl: marks out of order"
	"$TRACER" report --json "$OUT" >"$TMP/r$ver.json" || fail "report failed"
	grep -q "\"gc_cycles\":$numgc,\"gc_cycles_exact\":true" "$TMP/r$ver.json" ||
		fail "Go $ver$fl: report says $(grep -o '"gc_cycles":[0-9]*,"gc_cycles_exact":[a-z]*' "$TMP/r$ver.json")"
	res="$res Go $ver$fl $marks/$numgc;"
done

# Rotation: each file its own marks, together all of them.
FW=$(workload fullwork 1.27) || exit 1
OUT=$TMP/rot
"$TRACER" -o "$OUT" -r 256K -- "$FW" -scale 0.1 -wait=false >"$TMP/wr.log" 2>"$TMP/tr.log" ||
	fail "rotated run failed: $(tail -n 3 "$TMP/tr.log")"
numgc=$(sed -n 's/^done .* num_gc=\([0-9]*\).*/\1/p' "$TMP/wr.log")
files=("$OUT"/*.trace)
[ ${#files[@]} -ge 5 ] || fail "rotation: ${#files[@]} files"
sum=0 withgc=0
for f in "${files[@]}"; do
	[ -f "$f.gc" ] || continue
	withgc=$((withgc + 1))
	sum=$((sum + $(wc -l <"$f.gc") - 1))
	"$TRACER" report --json "$f" | grep -q '"gc_cycles_exact":true' ||
		fail "rotation: $(basename "$f"): its report does not count the runtime's cycles"
done
dups=$(cat "$OUT"/*.gc | grep -v '^traceaf' | sort | uniq -d | wc -l)
[ "$dups" -eq 0 ] || fail "rotation: $dups marks in two files"
[ "$sum" -le "$numgc" ] && [ "$sum" -ge $((numgc - 1)) ] ||
	fail "rotation: $sum marks in ${#files[@]} files, the runtime counted $numgc cycles"

OUT=$TMP/keep
"$TRACER" -o "$OUT" -r 256K -n 3 -- "$FW" -scale 0.1 -wait=false >/dev/null 2>"$TMP/tk.log" ||
	fail "-n 3 run failed: $(tail -n 3 "$TMP/tk.log")"
for g in "$OUT"/*.gc; do
	[ -f "${g%.gc}" ] || fail "-n 3: $(basename "$g") outlived its trace"
done
pass "$res rotated: $sum/$numgc marks in $withgc of ${#files[@]} files"
