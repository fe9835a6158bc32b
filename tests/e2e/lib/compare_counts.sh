#!/bin/bash
# compare_counts.sh NATIVE_COUNTS OURS_COUNTS TOLERANCE_PCT [KEY...]
#
# Compares two counts files (see sum_counts.sh for the format: "key value",
# value last, "#" comments) and prints a table
#     key   native   ours   diff%   ok|FAIL
# with diff% = (ours - native) / native * 100.  Exits 1 if any compared key
# differs by more than TOLERANCE_PCT percent (a decimal is fine), 2 on usage
# errors or when a KEY pattern matches no key in either file.
#
# KEYs are shell-style patterns (* ? [...]; [*] is a literal star) matched
# against whole keys, e.g.
#   'ev HeapObjectAlloc'  'ev *Free'  'type main.* allocs'  'done mallocs'
# (quote them).  A key present in only one file counts as 0 in the other.
# Default KEYs: the six alloc/free event kinds and every 'type main.* allocs'.
# The "exists" forms are not compared by default: they depend on when the
# snapshot is taken (attach vs trace.Start), not on what the workload did.
#
# Env: SLACK=N  a difference of at most N (absolute) always passes, for keys
# whose counts are small (default 0).
set -u

if [ $# -lt 3 ]; then
	echo "usage: $0 NATIVE_COUNTS OURS_COUNTS TOLERANCE_PCT [KEY-PATTERN...]" >&2
	exit 2
fi
native=$1 ours=$2 tol=$3
shift 3
for f in "$native" "$ours"; do
	[ -f "$f" ] || { echo "$0: no such file: $f" >&2; exit 2; }
done
case $tol in
'' | *[!0-9.]* | *.*.*) echo "$0: bad TOLERANCE_PCT: $tol" >&2; exit 2 ;;
esac
if [ $# -eq 0 ]; then
	set -- 'ev HeapObjectAlloc' 'ev HeapObjectFree' 'ev SpanAlloc' 'ev SpanFree' \
		'ev GoroutineStackAlloc' 'ev GoroutineStackFree' 'type main.* allocs'
fi

# Glob patterns -> anchored extended regexes, one a line, for awk.
pats=$(for p in "$@"; do
	printf '%s\n' "$p" | sed -e 's/[.+(){}|^$\\]/\\&/g' -e 's/\[!/[^/g' \
		-e 's/\*/.*/g' -e 's/?/./g' -e 's/^/^/' -e 's/$/$/'
done)

awk -v tol="$tol" -v slack="${SLACK:-0}" -v pats="$pats" -v globs="$(printf '%s\n' "$@")" '
	function keyof(   k) { k = $0; sub(/[ \t]*[^ \t]+[ \t]*$/, "", k); gsub(/[ \t]+/, " ", k); sub(/^ /, "", k); return k }
	function abs(x) { return x < 0 ? -x : x }
	function num(v) { if ((v "") ~ /^-?[0-9]+$/) return v ""; if (v == int(v)) return sprintf("%.0f", v); return v }
	BEGIN { np = split(pats, re, "\n"); split(globs, gl, "\n") }
	FNR == 1 { fi++ }
	/^#/ || NF < 2 { next }
	{
		k = keyof()
		if (!(k in seen)) { seen[k] = 1; keys[++nk] = k }
		if (fi == 1) nat[k] = $NF; else our[k] = $NF
	}
	END {
		printf "%-58s %12s %12s %9s\n", "key", "native", "ours", "diff%"
		bad = 0
		for (p = 1; p <= np; p++) {
			matched = 0
			for (i = 1; i <= nk; i++) {
				k = keys[i]
				if (k !~ re[p] || (k in done)) continue
				done[k] = 1; matched = 1
				n = (k in nat) ? nat[k] + 0 : 0
				o = (k in our) ? our[k] + 0 : 0
				d = o - n
				if (n != 0) { x = d / n * 100; pct = sprintf("%+.2f", abs(x) < 0.005 ? 0 : x); over = abs(x) > tol + 0 }
				else if (d == 0) { pct = "+0.00"; over = 0 }
				else { pct = "inf"; over = 1 }
				if (abs(d) <= slack + 0) over = 0
				printf "%-58s %12s %12s %9s  %s\n", k, ((k in nat) ? num(nat[k]) : "-"), ((k in our) ? num(our[k]) : "-"), pct, over ? "FAIL" : "ok"
				if (over) bad++
			}
			if (!matched) { printf "%-58s %12s %12s %9s  %s\n", gl[p], "-", "-", "", "NO-KEY"; nokey++ }
		}
		printf "tolerance %s%%%s: %d key(s) over\n", tol, (slack + 0 ? " (slack " slack ")" : ""), bad
		if (nokey) exit 2
		exit bad ? 1 : 0
	}
' "$native" "$ours"
