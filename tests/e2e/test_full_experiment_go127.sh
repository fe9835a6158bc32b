#!/bin/bash
# All nine AllocFree events of fullwork built by Go 1.27: our trace
# against the runtime's own; see full_experiment.sh for the checks.
exec "$(dirname "$0")/lib/full_experiment.sh" 1.27
