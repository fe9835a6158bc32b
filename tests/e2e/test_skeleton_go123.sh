#!/bin/bash
# Walking skeleton on a Go 1.23 program: attach, trace known allocations,
# validate with Go's parsers, count main.Node.
exec "$(dirname "$0")/lib/known_alloc.sh" 1.23
