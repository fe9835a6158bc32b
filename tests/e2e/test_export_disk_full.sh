#!/bin/bash
# The exporters on a full file system: `pprof -o` and `report --html`
# write through pprof_write and report_html_write, which must fail with
# ENOSPC and leave what was at the path before, and no temporary file.
#
# On a 64 KiB tmpfs, tests/e2e/lib/export_disk_full.c first writes a small
# profile and page (they fit), then big ones (several hundred KiB each).
# Checked: the big writes say ENOSPC, the small files are unchanged, the
# directory holds nothing else, and the space is free again.
# The tmpfs is unmounted on exit, whatever happens.
source "$(dirname "$0")/lib/lib.sh"
cd "$ROOT" || fail "cannot cd to $ROOT"

[ -f "$BUILD/gen/profile.pb-c.c" ] ||
	fail "no $BUILD/gen/profile.pb-c.c (run make BUILD=$BUILD)"
gcc -std=gnu11 -O2 -Wall -Wextra -Werror -Wno-unused-parameter \
	-D_GNU_SOURCE -Iinclude -Iuser -I"$BUILD" tests/e2e/lib/export_disk_full.c \
	user/analysis/pprof_write.c user/analysis/report_html.c user/analysis/report_html_parts.c \
	user/analysis/report_html_text.c \
	user/util/atomic_file.c \
	"$BUILD/gen/profile.pb-c.c" -lprotobuf-c -lz -lm \
	-o "$TMP/export_disk_full" || fail "cannot build export_disk_full"

MNT=$TMP/mnt
mkdir -p "$MNT"
trap 'umount "$MNT" 2>/dev/null; cleanup' EXIT
mount -t tmpfs -o size=64k tmpfs "$MNT" || fail "cannot mount a tmpfs"

out=$("$TMP/export_disk_full" small "$MNT") || fail "small: exit $?"
[ "$out" = $'pprof: ok\nhtml: ok' ] || fail "small writes: $out"
before=$(cd "$MNT" && sha256sum heap.pb.gz heap.html)
used=$(df --output=used -B1 "$MNT" | tail -n1)

out=$("$TMP/export_disk_full" big "$MNT") || fail "big: exit $?"
[ "$out" = $'pprof: ENOSPC\nhtml: ENOSPC' ] || fail "big writes: $out"

after=$(cd "$MNT" && sha256sum heap.pb.gz heap.html)
[ "$before" = "$after" ] || fail "old files changed: $after"
files=$(ls -A "$MNT" | tr '\n' ' ')
[ "$files" = "heap.html heap.pb.gz " ] || fail "left behind: $files"
[ "$(df --output=used -B1 "$MNT" | tail -n1)" = "$used" ] ||
	fail "space not freed: $(df -h "$MNT" | tail -n1)"
pass "ENOSPC for both, old files intact"
