#!/usr/bin/env python3
# page_dom.py DOM.html - prints, as JSON, what the report page's DOM (as
# Chromium serialised it with --dump-dom) holds, for the page tests:
#   gc:     the number of GC cycle marks (line.gc)
#   bands:  the hover bands' titles
#   flame:  the flame graph's frames: name, title, data-bytes, width
#   tables: per table id, its rows of cell texts (header row first)
#   bars:   per table id, the bars' widths (px)
import json
import re
import sys
from html.parser import HTMLParser


class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.out = {"gc": 0, "bands": [], "flame": [], "tables": {}, "bars": {}}
        self.sink = None      # (list, index) that text goes to
        self.table = None
        self.in_fn = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = a.get("class", "")
        if tag == "line" and cls == "gc":
            self.out["gc"] += 1
        elif tag == "rect" and cls == "band":
            self.out["bands"].append("")
            self.sink = ("band",)
        elif tag == "g" and cls == "fn":
            self.out["flame"].append({"bytes": int(a["data-bytes"]),
                                      "title": "", "w": None})
            self.in_fn = True
        elif tag == "title" and self.in_fn:
            self.sink = ("fn",)
        elif tag == "rect" and self.in_fn:
            self.out["flame"][-1]["w"] = float(a["width"])
        elif tag == "table" and "data" in cls:
            self.table = a.get("id", "?")
            self.out["tables"][self.table] = []
            self.out["bars"][self.table] = []
        elif tag == "tr" and self.table:
            self.out["tables"][self.table].append([])
        elif tag in ("td", "th") and self.table:
            self.out["tables"][self.table][-1].append("")
            self.sink = ("cell",)
        elif tag == "span" and cls == "b" and self.table:
            m = re.search(r"width:([0-9.]+)px", a.get("style", ""))
            self.out["bars"][self.table].append(float(m.group(1)) if m else None)

    def handle_endtag(self, tag):
        if tag == "g" and self.in_fn:
            self.in_fn = False
        if tag == "table":
            self.table = None
        if tag in ("title", "td", "th", "rect"):
            self.sink = None

    def handle_data(self, d):
        if not self.sink:
            return
        if self.sink[0] == "band" and self.out["bands"]:
            self.out["bands"][-1] += d
        elif self.sink[0] == "fn":
            self.out["flame"][-1]["title"] += d
        elif self.sink[0] == "cell":
            self.out["tables"][self.table][-1][-1] += d


p = Page()
p.feed(open(sys.argv[1], encoding="utf-8").read())
for f in p.out["flame"]:
    f["name"] = f["title"].split("\n")[0].split(" (")[0]
json.dump(p.out, sys.stdout)
