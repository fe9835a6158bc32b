#!/bin/bash
# Attach to a Go 1.27 process that is allocating non-stop (always inside
# mallocgc when the probes go live), then count known allocations.
BUSY=1 exec "$(dirname "$0")/lib/known_alloc.sh" 1.27
