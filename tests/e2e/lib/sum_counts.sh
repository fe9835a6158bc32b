#!/bin/bash
# sum_counts.sh [-c TRACECHECK] [-w WORKLOAD_LOG] [-l LABEL] INPUT...
#
# Sums the tracecheck outputs of several trace files (our tracer writes
# rotating files) into one "counts" file on stdout, the format that
# native_reference.sh writes and compare_counts.sh reads.
#
# INPUTs are tracecheck outputs (`tracecheck -replay F > F.out`), or counts
# files written by this script, or, with -c TRACECHECK, trace files that are
# checked here with `TRACECHECK -replay`.  Give them in chronological order
# (only "replay * live_at_end" depends on it).  -w adds the workload's last
# "done k=v ..." line; -l writes LABEL into the "#" comment header.
#
# Counts file format (one "key value" per line; the value is the last field,
# the key is everything before it with single spaces, as lib.sh's kv reads
# it; a type name may contain spaces; lines starting with "#" are comments):
#   files N                       inputs summed
#   valid 1|0                     1 iff every input was valid
#   version N                     file format "go 1.N trace" (of the first input)
#   bytes N, events N, generations N, experimental_events N,
#   types_defined N, info_batches N                  summed
#   bytes_per_event X             bytes / experimental_events (recomputed)
#   ev <Kind> N                   the nine AllocFree event kinds, fixed order
#   type <name> <size> allocs N   HeapObjectAlloc per type, sorted by key (C locale)
#   type <name> <size> exists N   HeapObject (exists) per type, sorted by key
#   replay <heap|span|stack> <allocs|frees|alloc_of_live|free_of_unknown> N
#                                 summed over inputs (each file replays alone)
#   replay <family> live_at_end N of the last input
#   done <key> N                  from the workload's "done" line (-w), in its order
# Dropped (run-specific): syncs, threads, info *, error (the error goes to
# stderr).  Any other numeric key is summed.
set -u

usage() {
	echo "usage: $0 [-c TRACECHECK] [-w WORKLOAD_LOG] [-l LABEL] INPUT..." >&2
	exit 2
}

tc='' wlog='' label=''
while getopts c:w:l: o; do
	case $o in
	c) tc=$OPTARG ;;
	w) wlog=$OPTARG ;;
	l) label=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || usage

tmp=$(mktemp -d /tmp/sum_counts.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

inputs=()
i=0
for f in "$@"; do
	[ -f "$f" ] || { echo "$0: no such file: $f" >&2; exit 2; }
	if [ -n "$tc" ]; then
		i=$((i + 1))
		"$tc" -replay "$f" >"$tmp/$i.out" 2>"$tmp/$i.err"
		[ -s "$tmp/$i.out" ] || { echo "$0: $tc failed on $f: $(cat "$tmp/$i.err")" >&2; exit 1; }
		inputs+=("$tmp/$i.out")
	else
		inputs+=("$f")
	fi
done

done_line=
if [ -n "$wlog" ]; then
	[ -f "$wlog" ] || { echo "$0: no such file: $wlog" >&2; exit 2; }
	done_line=$(grep '^done ' "$wlog" | tail -n 1)
	[ -n "$done_line" ] || echo "$0: warning: no 'done' line in $wlog" >&2
fi

{
	[ -n "$label" ] && printf '# %s\n' "$label"
	printf '# summed from %d input(s) by sum_counts.sh\n' $#
	awk -v done_line="$done_line" -v nfiles=$# '
	function keyof(   k) { k = $0; sub(/[ \t]*[^ \t]+[ \t]*$/, "", k); gsub(/[ \t]+/, " ", k); sub(/^ /, "", k); return k }
	# Section (1 header, 2 ev, 3 type, 4 replay, 5 done) and order key.
	function note(k, sect, ord) {
		if (!(k in sec)) { sec[k] = sect; order[k] = ord; keys[++nk] = k }
	}
	BEGIN {
		split("Span SpanAlloc SpanFree HeapObject HeapObjectAlloc HeapObjectFree GoroutineStack GoroutineStackAlloc GoroutineStackFree", evs, " ")
		for (i = 1; i <= 9; i++) { evorder["ev " evs[i]] = i; note("ev " evs[i], 2, sprintf("%02d", i)); val["ev " evs[i]] = 0 }
		split("files valid version bytes events generations experimental_events bytes_per_event types_defined info_batches", hs, " ")
		for (i = 1; i <= 10; i++) hdr[hs[i]] = sprintf("%02d", i)
		split("heap span stack", fams, " ")
		split("allocs frees alloc_of_live free_of_unknown live_at_end", rks, " ")
		for (i = 1; i <= 3; i++) for (j = 1; j <= 5; j++) rorder["replay " fams[i] " " rks[j]] = sprintf("%d%d", i, j)
		valid = 1; nin = 0
	}
	FNR == 1 { nin++ }
	/^#/ || NF < 2 { next }
	{
		k = keyof(); v = $NF
		if (k == "error") { err = err FILENAME ": " substr($0, 7) "\n"; next }
		if (k == "syncs" || k == "threads" || k ~ /^info / || k == "bytes_per_event") next
		if (k == "files") { files += v; sawfiles = 1; next }
		if (k == "valid") { if (v != 1) valid = 0; next }
		if (k == "version") { if (version == "") version = v; next }
		if (k ~ /^done /) { note(k, 5, sprintf("%06d", ++ndone)); if (!(k in val)) val[k] = v; next }
		if (k ~ /^replay / && k ~ / live_at_end$/) {
			note(k, 4, (k in rorder) ? rorder[k] : k)
			val[k] = v; next
		}
		if (k ~ /^type /) note(k, 3, k)
		else if (k ~ /^replay /) note(k, 4, (k in rorder) ? rorder[k] : k)
		else if (k ~ /^ev /) note(k, 2, (k in evorder) ? sprintf("%02d", evorder[k]) : "99" k)
		else note(k, 1, (k in hdr) ? hdr[k] : "99" k)
		val[k] += v
	}
	END {
		if (err != "") printf "%s", err > "/dev/stderr"
		if (done_line != "") {
			n = split(done_line, f, " ")
			for (i = 2; i <= n; i++) {
				if (split(f[i], p, "=") != 2) continue
				k = "done " p[1]
				note(k, 5, sprintf("%06d", ++ndone)); val[k] = p[2]
			}
		}
		out(1, "01", "files " num(sawfiles ? files : nin))
		out(1, "02", "valid " valid)
		if (version != "") out(1, "03", "version " version)
		if (val["experimental_events"] > 0)
			out(1, "08", sprintf("bytes_per_event %.2f", val["bytes"] / val["experimental_events"]))
		for (i = 1; i <= nk; i++) { k = keys[i]; out(sec[k], order[k], k " " num(val[k])) }
	}
	# mawk prints big numbers as 5e+09: print integers in full.
	function num(v) {
		if ((v "") ~ /^-?[0-9]+$/) return v ""
		if (v == int(v)) return sprintf("%.0f", v)
		return v
	}
	function out(s, o, line) { printf "%d\t%s\t%s\n", s, o, line }
	' "${inputs[@]}" | LC_ALL=C sort -t "$(printf '\t')" -k1,1n -k2,2 -s | cut -f3-
}
