#!/bin/bash
# Runs all_mode.sh, once.  It used to be retried once: under
# load, processes traced with --all lost part of their events silently
# (their files were closed at exit while their last records still waited
# in the ring buffer behind another process's unfinished record).  Fixed
# 2026-12-03 (README "Limits"), so a failure fails.
exec "$(dirname "$0")/lib/all_mode.sh"
