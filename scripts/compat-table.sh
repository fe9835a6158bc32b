#!/bin/sh
# Puts the compatibility matrix into README.md, between the lines
#   <!-- compat-matrix:begin -->  and  <!-- compat-matrix:end -->
# from $BUILD/compat-matrix.md, which tests/e2e/test_compat_matrix.sh
# writes. The matrix is run first when that file is missing or older than
# the tracer. Exits non-zero when a cell failed (the table, failures
# marked, still goes in) or the markers are missing (README untouched).
#
# Usage: BUILD=build scripts/compat-table.sh      (make compat-table)
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
TABLE=$BUILD/compat-matrix.md
README=$ROOT/README.md
BEGIN='<!-- compat-matrix:begin -->'
END='<!-- compat-matrix:end -->'
status=0

if [ ! -f "$TABLE" ] || [ "$BUILD/traceaf-bpf" -nt "$TABLE" ]; then
	BUILD=$BUILD "$ROOT/tests/e2e/test_compat_matrix.sh" || status=1
fi
[ -f "$TABLE" ] || { echo "compat-table: no $TABLE" >&2; exit 1; }

nb=$(grep -cxF "$BEGIN" "$README" || true)
ne=$(grep -cxF "$END" "$README" || true)
if [ "$nb" != 1 ] || [ "$ne" != 1 ] ||
	[ "$(grep -nxF "$BEGIN" "$README" | cut -d: -f1)" -gt \
	  "$(grep -nxF "$END" "$README" | cut -d: -f1)" ]; then
	echo "compat-table: README.md lacks one '$BEGIN' line followed by one '$END' line; the table is in $TABLE" >&2
	exit 1
fi

tmp=$(mktemp "$README.XXXXXX")
awk -v b="$BEGIN" -v e="$END" -v t="$TABLE" '
	$0 == b { print; print ""; while ((getline l < t) > 0) print l; print ""; skip = 1; next }
	$0 == e { skip = 0 }
	!skip { print }
' "$README" >"$tmp"
if cmp -s "$tmp" "$README"; then
	rm -f "$tmp"
	echo "compat-table: README.md already up to date" >&2
else
	cat "$tmp" >"$README"
	rm -f "$tmp"
	echo "compat-table: README.md updated from $TABLE" >&2
fi
exit $status
