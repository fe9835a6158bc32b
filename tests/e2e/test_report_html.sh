#!/bin/bash
# The heap-over-time page (report_html_write), rendered by headless
# Chromium and looked at by a program: a synthetic picture of three types
# (tests/e2e/lib/html_picture.c: one leaking, one churning, one level) must
# show each type's legend colour in the chart, the leaking type's line
# rising from left to right and the level one staying level.  The page
# must also be self-contained: no script and nothing fetched.  Its other
# parts, in the DOM Chromium parsed (--dump-dom; tests/e2e/lib/page_dom.py)
# and on screen: the 30 GC cycle marks (red pixels in their strip), hover
# bands naming every series' value, the flame graph (4 frames, main.leak
# 3/4 of the root's width, the grey root drawn), the table with its bars
# and its names escaped.
source "$(dirname "$0")/lib/lib.sh"
cd "$ROOT" || fail "cannot cd to $ROOT"

GO=/usr/lib/go-1.27/bin/go
CHROMIUM=${CHROMIUM:-chromium}
command -v "$CHROMIUM" >/dev/null || fail "no $CHROMIUM (run make deps)"
[ -x "$GO" ] || fail "no Go 1.27 at $GO (run make deps)"

gcc -std=gnu11 -O2 -Wall -Wextra -Werror -Wno-unused-parameter \
	-D_GNU_SOURCE -Iinclude -Iuser tests/e2e/lib/html_picture.c user/analysis/report_html.c \
	user/analysis/report_html_parts.c user/analysis/report_html_text.c \
	user/util/atomic_file.c -lm -o "$TMP/html_picture" ||
	fail "cannot build html_picture"
GOTOOLCHAIN=local GOFLAGS=-buildvcs=false GOCACHE="$BUILD/go-cache" \
	"$GO" build -o "$TMP/pngcheck" tests/go/pngcheck/main.go ||
	fail "cannot build pngcheck"

page=$TMP/heap.html
"$TMP/html_picture" "$page" || fail "html_picture failed"

# Self-contained: the only URL is the SVG namespace, which is a name.
grep -qiE '<script|<link|<img|<iframe|@import|url\(|src=|href=' "$page" &&
	fail "page loads something: $(grep -oiE '<script|<link|<img|<iframe|@import|url\(|src=|href=' "$page" | head -n3)"
[ "$(grep -o 'https\?://[^"]*' "$page" | sort -u)" = "http://www.w3.org/2000/svg" ] ||
	fail "unexpected URLs: $(grep -o 'https\?://[^"]*' "$page" | sort -u)"
grep -q '<title>Live heap: leaky-4242 (go1.27)</title>' "$page" ||
	fail "no page title"

# NAME=COLOUR for each row of the legend table, in the page's order.
legend=$(sed -n 's|.*<svg class="swatch".*stroke="\(#[0-9a-f]*\)".*<td class="name">\([^<]*\)</td>.*|\2=\1|p' "$page")
colour_of() {
	sed -n "s|^$1=||p" <<<"$legend" | head -n1
}
leak=$(colour_of '\*main.node')
churn=$(colour_of '\[\]uint8')
level=$(colour_of 'map.bucket\[string\]\*main.session')
if [ -z "$leak" ] || [ -z "$churn" ] || [ -z "$level" ]; then
	fail "legend incomplete: $legend"
fi
[ "$(printf '%s\n' "$leak" "$churn" "$level" | sort -u | wc -l)" -eq 3 ] ||
	fail "legend colours not distinct: $legend"

start=$(date +%s%N)
timeout --kill-after=5 30 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
	--hide-scrollbars --force-device-scale-factor=1 \
	--force-color-profile=srgb --user-data-dir="$TMP/chromium" \
	--screenshot="$TMP/shot.png" --window-size=1200,800 \
	"file://$page" >"$TMP/chromium.log" 2>&1 ||
	fail "chromium failed: $(tail -n 3 "$TMP/chromium.log")"
ms=$((($(date +%s%N) - start) / 1000000))
[ -s "$TMP/shot.png" ] || fail "no screenshot"
[ -n "${SHOT_OUT:-}" ] && cp "$TMP/shot.png" "$SHOT_OUT"

"$TMP/pngcheck" -png "$TMP/shot.png" -colors "$leak,$churn,$level" \
	-min 1000 -grow "$leak" -flat "$level" >"$TMP/check.log" 2>&1 ||
	fail "picture check: $(cat "$TMP/check.log")"
# The checker must be able to fail: the level line does not grow.
"$TMP/pngcheck" -png "$TMP/shot.png" -colors "$level" -grow "$level" \
	>/dev/null 2>&1 && fail "pngcheck accepted a level line as growing"

# The other parts, as Chromium parsed them.
timeout --kill-after=5 30 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
	--user-data-dir="$TMP/chromium" --dump-dom "file://$page" \
	>"$TMP/dom.html" 2>"$TMP/dom.log" || fail "chromium --dump-dom failed"
python3 tests/e2e/lib/page_dom.py "$TMP/dom.html" >"$TMP/dom.json" ||
	fail "cannot read the DOM"
python3 - "$TMP/dom.json" <<'EOF' || fail "DOM: $(cat "$TMP/dom.err")"
import json, sys
d = json.load(open(sys.argv[1]))
errs = []
if d["gc"] != 30:
    errs.append("GC marks: %d, want 30" % d["gc"])
b = d["bands"]
if not 100 <= len(b) <= 600:
    errs.append("hover bands: %d" % len(b))
elif not all("*main.node: " in x and "all heap objects: " in x and
             "map.bucket[string]*main.session: 9.00 MiB" in x for x in b):
    errs.append("a hover band lacks a series: %r" % b[0])
names = [f["name"] for f in d["flame"]]
if names != ["all allocations", "main.main", "main.leak", "main.churn"]:
    errs.append("flame frames: %s" % names)
else:
    w = {f["name"]: f["w"] for f in d["flame"]}
    if abs(w["main.leak"] / w["all allocations"] - 0.75) > 0.01:
        errs.append("main.leak width %s of %s" % (w["main.leak"], w["all allocations"]))
    t = d["flame"][2]["title"]
    if "75.0% of all" not in t or "main.go:43" not in t or "75.0 MiB" not in t:
        errs.append("main.leak title: %r" % t)
rows = d["tables"].get("garbage", [])
if [r[0] for r in rows[1:]] != ["main.churn (main.go:50)", "main.<leak>&co"]:
    errs.append("table rows: %s" % rows)
bars = d["bars"].get("garbage", [])
if len(bars) != 2 or not bars[0] > 10 * bars[1]:
    errs.append("bars: %s" % bars)
open(sys.argv[1][:-4] + "err", "w").write("; ".join(errs))
sys.exit(1 if errs else 0)
EOF
# On screen: the GC strip's red marks and the flame graph's grey root.
"$TMP/pngcheck" -png "$TMP/shot.png" -colors "#d62728" -min 200 \
	>"$TMP/gc.log" 2>&1 || fail "GC marks not on screen: $(cat "$TMP/gc.log")"
"$TMP/pngcheck" -png "$TMP/shot.png" -colors "#123456" -min 200 \
	>/dev/null 2>&1 && fail "pngcheck found a colour the page does not have"
timeout --kill-after=5 30 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
	--hide-scrollbars --force-device-scale-factor=1 \
	--force-color-profile=srgb --user-data-dir="$TMP/chromium" \
	--screenshot="$TMP/full.png" --window-size=1200,1500 \
	"file://$page" >"$TMP/chromium.log" 2>&1 || fail "chromium failed (full page)"
"$TMP/pngcheck" -png "$TMP/full.png" -colors "#b9b9b9" -min 10000 \
	>"$TMP/flame.log" 2>&1 || fail "flame graph root not on screen: $(cat "$TMP/flame.log")"

pass "rendered in ${ms} ms; $(tr '\n' ';' <"$TMP/check.log") GC marks, hover bands, flame graph, table: as drawn"
