#!/bin/bash
# Runs all_mode.sh; on a failure, once more, and says so.  Under heavy load on
# this VM kind some processes traced with --all have lost a fraction of
# their allocation events, silently (see README "Limits": not explained
# yet).  A retry keeps CI meaningful (a second failure fails) while the
# cause is investigated; both attempts' results are printed.
here=$(dirname "$0")
if out=$("$here/all_mode.sh" 2>&1); then
	echo "$out"
	exit 0
fi
echo "first attempt: $out"
"$here/all_mode.sh"
rc=$?
[ $rc -eq 0 ] && echo "(passed on the second attempt)"
exit $rc
