#!/bin/bash
# Attach to a Go 1.23 process that is allocating non-stop, then count known
# allocations.
BUSY=1 exec "$(dirname "$0")/lib/known_alloc.sh" 1.23
