#!/bin/bash
# test_report_page - `report --html` on a real trace, read in headless
# Chromium as a person would see it.  tests/go/leaky (Go 1.27, --stacks)
# leaks *main.leakRecord through main.leak and makes garbage in
# main.churn; its page must show, agreeing with `report --json` of the
# same files:
#  - the chart with one GC mark per estimated cycle and hover bands that
#    name main.leakRecord with its live bytes;
#  - the flame graph, whose main.leak frames carry exactly the bytes the
#    JSON gives the main.leak sites, under a root that holds every
#    allocation with a stack;
#  - the tables: main.leakRecord the top leak suspect, main.churn the top
#    garbage producer, main.leak among the top sites with its lifetimes;
#  - on screen: the GC marks' red, the flame root's grey and the leaking
#    type's legend colour;
# and the text report's LIFETIMES and SIZE CLASSES sections: main.leak's
# objects live on, main.leakRecord (184 B) sits in 192-byte slots, one
# object each, 8 bytes lost per object, exactly.
source "$(dirname "$0")/lib/lib.sh"
cd "$ROOT" || fail "cannot cd to $ROOT"
N=${N:-20000}
GO=/usr/lib/go-1.27/bin/go
CHROMIUM=${CHROMIUM:-chromium}
command -v "$CHROMIUM" >/dev/null || fail "no $CHROMIUM (run make deps)"
[ -x "$TRACER" ] || fail "tracer not built: $TRACER"
LK=$(workload leaky 1.27) || { echo "$LK"; exit 1; }
GOTOOLCHAIN=local GOFLAGS=-buildvcs=false GOCACHE="$BUILD/go-cache" \
	"$GO" build -o "$TMP/pngcheck" tests/go/pngcheck/main.go ||
	fail "cannot build pngcheck"

mkdir -p "$TMP/out"
"$TRACER" -o "$TMP/out" -g 200ms --stacks -- "$LK" -n "$N" -steps 32 \
	-step 50ms -churn 3000 >"$TMP/work.log" 2>"$TMP/tracer.err" ||
	fail "tracer: $(tail -n 3 "$TMP/tracer.err" | tr '\n' ' ')"
"$TRACER" report --json "$TMP/out" >"$TMP/r.json" 2>"$TMP/r.err" ||
	fail "report --json: $(cat "$TMP/r.err")"
"$TRACER" report --html "$TMP/page.html" "$TMP/out" >"$TMP/r.txt" 2>"$TMP/r.err" ||
	fail "report --html: $(cat "$TMP/r.err")"
grep -qiE '<script|<link|<img|<iframe|@import|url\(|src=|href=' "$TMP/page.html" &&
	fail "the page loads something"

timeout --kill-after=5 30 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
	--user-data-dir="$TMP/chromium" --dump-dom "file://$TMP/page.html" \
	>"$TMP/dom.html" 2>"$TMP/dom.log" || fail "chromium --dump-dom failed"
python3 tests/e2e/lib/page_dom.py "$TMP/dom.html" >"$TMP/dom.json" ||
	fail "cannot read the DOM"
colour=$(sed -n 's|.*<svg class="swatch".*stroke="\(#[0-9a-f]*\)".*<td class="name">main.leakRecord</td>.*|\1|p' \
	"$TMP/page.html" | head -n1)
[ -n "$colour" ] || fail "no legend row for main.leakRecord"

python3 - "$TMP/r.json" "$TMP/dom.json" "$TMP/r.txt" "$N" >"$TMP/check.out" 2>&1 <<'EOF' ||
import json, re, sys
r = json.load(open(sys.argv[1]))["processes"][0]
d = json.load(open(sys.argv[2]))
txt = open(sys.argv[3]).read()
n = int(sys.argv[4])
errs = []
# Chart: GC marks, hover bands.
if r["gc_cycles"] < 2 or d["gc"] != r["gc_cycles"]:
    errs.append("GC marks %d, JSON gc_cycles %d" % (d["gc"], r["gc_cycles"]))
if not d["bands"] or len(d["bands"]) > r["checkpoints"]:
    errs.append("hover bands %d for %d checkpoints" % (len(d["bands"]), r["checkpoints"]))
elif not all("main.leakRecord: " in b for b in d["bands"]):
    errs.append("a hover band does not name main.leakRecord: %r" % d["bands"][0])
# Flame graph: main.leak's frames hold the main.leak sites' bytes.
leak_sites = sum(s["alloc_bytes"] for s in r["sites"] if s["site"]["func"] == "main.leak")
leak_frames = sum(f["bytes"] for f in d["flame"] if f["name"] == "main.leak")
if not leak_sites or leak_frames != leak_sites:
    errs.append("flame main.leak %d bytes, sites %d" % (leak_frames, leak_sites))
root = d["flame"][0] if d["flame"] else {"name": "", "bytes": 0}
if root["name"] != "all allocations" or root["bytes"] < 0.99 * r["totals"]["alloc_bytes"]:
    errs.append("flame root %s %d bytes, %d allocated" % (root["name"], root["bytes"], r["totals"]["alloc_bytes"]))
# Tables.
t = d["tables"]
if not r["leak_suspects"] or r["leak_suspects"][0]["type"] != "main.leakRecord" or t.get("leaks", [[]] * 2)[1][:1] != ["main.leakRecord"]:
    errs.append("top leak suspect row: %s (JSON: %s, %d checkpoints)" % (t.get("leaks"), [x["type"] for x in r["leak_suspects"]], r["checkpoints"]))
g = t.get("garbage", [])
if len(g) < 2 or not g[1][0].startswith("main.churn ("):
    errs.append("top garbage producer row: %s" % (g[1] if len(g) > 1 else g))
s = [row for row in t.get("sites", [])[1:] if row[0].startswith("main.leak (")]
if not s or not s[0][4].startswith(str(r["sites"][[x["site"]["func"] for x in r["sites"]].index("main.leak")]["live"])):
    errs.append("sites row of main.leak: %s" % s)
if not t.get("sizes"):
    errs.append("no size classes table")
# JSON and text: lifetimes and size classes.
ls = [x for x in r["sites"] if x["site"]["func"] == "main.leak"][0]["lifetime"]
if ls["live"] < 0.99 * n:
    errs.append("main.leak lifetime: %d live, want >= 99%% of %d" % (ls["live"], n))
ch = [x for x in r["sites"] if x["site"]["func"] == "main.churn"]
if not ch or ch[0]["lifetime"]["freed"] == 0 or ch[0]["lifetime"]["p50_cycles"] > 1:
    errs.append("main.churn lifetime: %s" % (ch and ch[0]["lifetime"]))
lr = [x for x in r["size_classes"]["types"] if x["type"] == "main.leakRecord"]
if not lr or [(sl["slot"], sl["elements_min"], sl["elements_max"], sl["lost_max"]) for sl in lr[0]["slots"]] != [(192, 1, 1, 8)] or lr[0]["lost_min"] != lr[0]["lost_max"] or lr[0]["lost_max"] != 8 * lr[0]["objects"]:
    errs.append("size classes of main.leakRecord: %s" % lr)
if not re.search(r"^LIFETIMES .*\n  by site", txt, re.M) or not re.search(r"^  main.leakRecord \(184 B\): \d+ objects in slots of .*, lost [0-9.]+ [KM]iB \(4.2%\)$", txt, re.M):
    errs.append("text sections LIFETIMES / SIZE CLASSES missing or wrong")
if errs:
    print("; ".join(errs))
    sys.exit(1)
print("gc %d marks, %d bands, main.leak %d B in the flame graph" % (d["gc"], len(d["bands"]), leak_frames))
EOF
	fail "$(cat "$TMP/check.out")"

timeout --kill-after=5 30 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
	--hide-scrollbars --force-device-scale-factor=1 \
	--force-color-profile=srgb --user-data-dir="$TMP/chromium" \
	--screenshot="$TMP/shot.png" --window-size=1200,1300 \
	"file://$TMP/page.html" >"$TMP/chromium.log" 2>&1 ||
	fail "chromium failed: $(tail -n 3 "$TMP/chromium.log")"
[ -n "${SHOT_OUT:-}" ] && cp "$TMP/shot.png" "$SHOT_OUT"
"$TMP/pngcheck" -png "$TMP/shot.png" -colors "$colour" -min 1000 -grow "$colour" \
	>"$TMP/png.log" 2>&1 || fail "leak line: $(cat "$TMP/png.log")"
"$TMP/pngcheck" -png "$TMP/shot.png" -colors "#d62728" -min 10 \
	>"$TMP/png.log" 2>&1 || fail "GC marks: $(cat "$TMP/png.log")"
"$TMP/pngcheck" -png "$TMP/shot.png" -colors "#b9b9b9" -min 10000 \
	>"$TMP/png.log" 2>&1 || fail "flame root: $(cat "$TMP/png.log")"

pass "$(cat "$TMP/check.out")"
