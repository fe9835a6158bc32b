//go:build !go1.25

// internal/trace as of Go 1.23 and 1.24: experimental side data hangs off
// each experimental event; the reader emits one Sync after each generation.
package main

import (
	"internal/trace"
	"internal/trace/testtrace"
)

func newValidator(fileVersion int) *testtrace.Validator {
	return testtrace.NewValidator()
}

func experimental(ev trace.Event) (string, []uint64) {
	x := ev.Experimental()
	return x.Name, x.Args
}

// allocFreeData returns the AllocFree batches of the event's generation,
// keyed so that a new generation has a new key.
func allocFreeData(ev trace.Event) (key any, batches [][]byte, ok bool) {
	if ev.Kind() != trace.EventExperimental {
		return nil, nil, false
	}
	d := ev.Experimental().Data
	if d == nil {
		// No side data in this generation: an empty table.
		return (*trace.ExperimentalData)(nil), nil, true
	}
	for _, b := range d.Batches {
		batches = append(batches, b.Data)
	}
	return d, batches, true
}

func syncStartsGeneration(ev trace.Event) bool { return true }
