#!/bin/bash
# test_attach_cycles - the short version of `make stress`: 20 attach/detach
# cycles and 2 SIGKILLs of the tracer on one busy Go process, with every
# assertion of tests/stress/attach_cycles.sh (see there): the target's
# output and exit status as untraced, no probe, link or program left after
# each cycle and each kill, the files valid, and its speed back after.
exec env CYCLES=${CYCLES:-20} KILLS=${KILLS:-2} WINDOW=${WINDOW:-1.5} \
	WARMUP=${WARMUP:-1} VALIDATE_EVERY=${VALIDATE_EVERY:-1000} \
	"$(dirname "$0")/../stress/attach_cycles.sh"
