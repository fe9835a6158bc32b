#!/bin/bash
# test_damaged_targets - live processes run from damaged copies of a Go
# binary (issue 6, acceptance: "a corrupt or truncated Go binary given as
# target").  What can reach the tracer: /proc/PID/exe is the file the
# process was started from, and a running executable cannot be written
# (ETXTBSY; replacing it by rename leaves /proc/PID/exe on the intact
# original), so the damage is done before the start, in the parts the
# kernel and the Go runtime do not need to run it.  (Damage to the loaded
# parts either stops the runtime at start, see test_refusals' bad_pclntab,
# or the exec itself.)  knownalloc, Go 1.27, with symbols and DWARF:
#
#   truncated     cut inside .debug_info: the rest of DWARF, .symtab,
#                 .strtab and .shstrtab are beyond the end of the file
#   garbage_symtab  .symtab overwritten with pseudo-random bytes
#   garbage_dwarf   .debug_info (compressed) overwritten likewise
#   garbage_shdrs   every section header after the first overwritten
#   shifted_syms  plausible lies: the .symtab entries of the runtime
#                 functions the tracer probes moved 4 bytes on
#
# For each the process must run normally (exit 0, "done nodes=20000"),
# and the tracer must either trace it (exit 0, every file valid with Go
# 1.23's and 1.27's parsers, all 20000 main.Node allocations) or refuse it
# (exit 1, one line on stderr, no probe in the target's code); never
# crash.  All five must be traced: the first four lose only what a
# stripped binary lacks, and shifted_syms shows that function addresses
# come from the runtime's own table (.gopclntab), not from .symtab.  While
# attached, the target's code differs from its file in exactly one byte
# per probe (an int3 each); after a refusal in none.
source "$(dirname "$0")/lib/lib.sh"
[ -x "$TRACER" ] || fail "tracer not built: $TRACER"
command -v perl >/dev/null && command -v readelf >/dev/null || fail "needs perl and readelf"
ORIG=$(workload knownalloc 1.27) || exit 1
TC123=$(tracecheck 1.23) || exit 1
TC127=$(tracecheck 1.27) || exit 1
N=20000
SUMMARY=()

# section FILE NAME -> "OFFSET SIZE" (decimal)
section() {
	local h
	h=$(readelf -SW "$1" | sed 's/^ *\[ *[0-9]*\] *//' |
		awk -v n="$2" '$1 == n { print $4, $5; exit }')
	[ -n "$h" ] || return 1
	set -- $h
	echo $((16#$1)) $((16#$2))
}

# scribble FILE OFFSET SIZE: the same pseudo-random bytes every run
scribble() {
	perl -e 'srand(6); print map { chr(int(rand(256))) } 1..$ARGV[0]' "$3" |
		dd of="$1" bs=64K seek="$2" oflag=seek_bytes conv=notrunc status=none
}

# shift_syms FILE DELTA NAME...: adds DELTA to the value of each named
# function symbol in .symtab (64-bit little-endian ELF)
shift_syms() {
	perl -e '
		my ($f, $d, @names) = @ARGV; my %want = map { $_ => 1 } @names;
		open(my $h, "+<:raw", $f) or die; local $/; my $b = <$h>;
		my ($shoff) = unpack("Q<", substr($b, 0x28, 8));
		my ($ent, $num) = unpack("S<S<", substr($b, 0x3a, 4));
		my @s = map { [unpack("L<L<Q<Q<Q<Q<L<L<Q<Q<", substr($b, $shoff + $_ * $ent, 64))] } 0 .. $num - 1;
		my $n = 0;
		for my $sec (@s) {
			next unless $sec->[1] == 2;
			my $str = $s[$sec->[6]][4];
			for (my $o = $sec->[4]; $o < $sec->[4] + $sec->[5]; $o += 24) {
				my ($nm) = unpack("L<", substr($b, $o, 4));
				my $name = unpack("Z*", substr($b, $str + $nm, 256));
				next unless $want{$name};
				my ($v) = unpack("Q<", substr($b, $o + 8, 8));
				substr($b, $o + 8, 8) = pack("Q<", $v + $d);
				$n++;
			}
		}
		seek($h, 0, 0); print $h $b; close($h); print "$n\n";' "$@"
}

# try NAME MUST: runs the damaged copy $TMP/NAME; MUST is "traced" or "any"
try() {
	local name=$1 must=$2 f=$TMP/$1 w t rc p res c123 c127 files
	start_bg "$TMP/$name.work" "$f" -n $N
	w=$BG_PID
	wait_for_line "$TMP/$name.work" '^ready' 20 ||
		fail "$name: the damaged copy does not run: $(cat "$TMP/$name.work")"
	start_bg "$TMP/$name.log" "$TRACER" -p "$w" -o "$TMP/out-$name"
	t=$BG_PID
	while kill -0 "$t" 2>/dev/null && ! grep -q "attached to PID $w" "$TMP/$name.log"; do
		sleep 0.1
	done
	p=$(text_patched "$w") || fail "$name: cannot read the target's code"
	kill -USR1 "$w"
	wait_exit "$w" 60
	rc=$?
	[ $rc -eq 0 ] && grep -q "^done nodes=$N " "$TMP/$name.work" ||
		fail "$name: the target failed (exit $rc): $(tail -n 3 "$TMP/$name.work")"
	kill -INT "$t" 2>/dev/null
	wait_exit "$t" 60
	rc=$?
	case $rc in
	0)
		files=("$TMP/out-$name"/*.trace)
		[ -f "${files[0]}" ] || fail "$name: traced, but no file: $(cat "$TMP/$name.log")"
		res=$(node_check "${files[@]}") || fail "$name: $res"
		read -r c123 c127 _ <<<"$res"
		[ "$c123" -eq $N ] && [ "$c127" -eq $N ] ||
			fail "$name: $c123 / $c127 main.Node allocations, want $N"
		grep -q "attached to PID $w .*: $p probes," "$TMP/$name.log" ||
			fail "$name: $p bytes of the target's code changed while attached: $(head -n 1 "$TMP/$name.log")"
		SUMMARY+=("$name: traced, $p probes, $N/$N main.Node")
		;;
	1)
		[ "$must" = any ] || fail "$name: refused: $(cat "$TMP/$name.log")"
		[ "$(wc -l <"$TMP/$name.log")" -eq 1 ] ||
			fail "$name: refused with $(wc -l <"$TMP/$name.log") lines: $(cat "$TMP/$name.log")"
		[ "$p" -eq 0 ] || fail "$name: refused, but $p bytes of the target's code were changed"
		SUMMARY+=("$name: refused: $(sed 's/^traceaf-bpf: //' "$TMP/$name.log")")
		;;
	*)
		fail "$name: the tracer exited with $rc: $(tail -n 5 "$TMP/$name.log")"
		;;
	esac
}

read -r off size <<<"$(section "$ORIG" .debug_info)" || fail "no .debug_info in $ORIG"
head -c $((off + size / 2)) "$ORIG" >"$TMP/truncated"
chmod +x "$TMP/truncated"
try truncated traced

for s in symtab:.symtab dwarf:.debug_info; do
	cp "$ORIG" "$TMP/garbage_${s%%:*}"
	read -r off size <<<"$(section "$ORIG" "${s#*:}")" || fail "no ${s#*:} in $ORIG"
	scribble "$TMP/garbage_${s%%:*}" "$off" "$size"
	try "garbage_${s%%:*}" traced
done

cp "$ORIG" "$TMP/garbage_shdrs"
shoff=$(readelf -hW "$ORIG" | awk '/Start of section headers/ { print $5 }')
shnum=$(readelf -hW "$ORIG" | awk '/Number of section headers/ { print $5 }')
scribble "$TMP/garbage_shdrs" $((shoff + 64)) $(((shnum - 1) * 64))
try garbage_shdrs traced

cp "$ORIG" "$TMP/shifted_syms"
n=$(shift_syms "$TMP/shifted_syms" 4 runtime.mallocgc runtime.mallocgcTiny \
	runtime.mallocgcSmallNoscan runtime.mallocgcSmallScanNoHeader \
	runtime.mallocgcSmallScanHeader runtime.mallocgcLarge \
	'runtime.(*sweepLocked).sweep' 'runtime.(*mheap).initSpan' \
	'runtime.(*mheap).freeSpanLocked' runtime.stackalloc runtime.stackfree)
[ "$n" -ge 8 ] || fail "shifted_syms: only $n symbols found to shift"
try shifted_syms traced

printf '  %s\n' "${SUMMARY[@]}"
pass "${#SUMMARY[@]} damaged binaries; every target ran normally"
