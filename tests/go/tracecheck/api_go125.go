//go:build go1.25

// internal/trace as of Go 1.25+ (tracev2): experimental side data comes with
// the Sync event that opens each generation; one more Sync ends the trace.
package main

import (
	"internal/trace"
	"internal/trace/testtrace"
	"internal/trace/version"
)

// newValidator must be told the file's version: left at version.Current it
// demands clock snapshots that "go 1.23 trace" files cannot have.
func newValidator(fileVersion int) *testtrace.Validator {
	v := testtrace.NewValidator()
	v.GoVersion = version.Version(fileVersion)
	return v
}

func experimental(ev trace.Event) (string, []uint64) {
	x := ev.Experimental()
	args := make([]uint64, len(x.Args))
	for i := range args {
		args[i] = x.ArgValue(i).Uint64()
	}
	return x.Name, args
}

func allocFreeData(ev trace.Event) (key any, batches [][]byte, ok bool) {
	if ev.Kind() != trace.EventSync {
		return nil, nil, false
	}
	s := ev.Sync()
	if s.ExperimentalBatches == nil {
		return nil, nil, false // the trailing Sync: no generation follows
	}
	for _, b := range s.ExperimentalBatches["AllocFree"] {
		batches = append(batches, b.Data)
	}
	return s.N, batches, true
}

func syncStartsGeneration(ev trace.Event) bool {
	return ev.Sync().ExperimentalBatches != nil
}
