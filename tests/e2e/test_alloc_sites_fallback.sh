#!/bin/bash
# The allocation probes' fallback (probe_plan.h): a producer the site
# analysis refuses is probed at entry + RETs, and so are the producers it
# calls, while the others keep their sites. Counts must stay exact with the
# two schemes mixed in one nest (Go 1.27: mallocgcSmallScanNoHeaderSC6 ->
# mallocgcSmallScanSlowPath), and with the old scheme alone.
HERE=$(dirname "$0")
out=$(TRACEAF_ALLOC_REFUSE=mallocgcSmallScanNoHeaderSC6 "$HERE/lib/known_alloc.sh" 1.27 -stripped 2>&1)
rc=$?
echo "$out" | tail -n 3
[ $rc -eq 0 ] || { echo "FAIL alloc_sites_fallback: refused SC6 on 1.27-stripped"; exit 1; }
out=$(TRACEAF_ALLOC_PROBES=entry-ret N=20000 "$HERE/lib/known_alloc.sh" 1.23 2>&1)
rc=$?
echo "$out" | tail -n 3
[ $rc -eq 0 ] || { echo "FAIL alloc_sites_fallback: entry-ret on 1.23"; exit 1; }
echo "PASS alloc_sites_fallback"
