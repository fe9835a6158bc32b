package main

import (
	"fmt"
	"io"
)

// family replays one kind of ID (heap objects, spans or stacks) of a file:
// an "exists" or alloc event makes an ID live, a free makes it dead.  IDs
// are address-derived, so they are comparable across a whole file.
type family struct {
	live         map[uint64]struct{}
	allocs       int // alloc and exists events
	frees        int
	allocOfLive  int // alloc/exists of an ID that is already live
	freeOfUnknow int // free of an ID that is not live
}

func newFamily() *family {
	return &family{live: make(map[uint64]struct{})}
}

func (f *family) apply(op byte, id uint64) {
	switch op {
	case 'e', 'a':
		f.allocs++
		if _, ok := f.live[id]; ok {
			f.allocOfLive++
		}
		f.live[id] = struct{}{}
	case 'f':
		f.frees++
		if _, ok := f.live[id]; !ok {
			f.freeOfUnknow++
		}
		delete(f.live, id)
	}
}

func (f *family) print(w io.Writer, name string) {
	fmt.Fprintln(w, "replay", name, "allocs", f.allocs)
	fmt.Fprintln(w, "replay", name, "frees", f.frees)
	fmt.Fprintln(w, "replay", name, "alloc_of_live", f.allocOfLive)
	fmt.Fprintln(w, "replay", name, "free_of_unknown", f.freeOfUnknow)
	fmt.Fprintln(w, "replay", name, "live_at_end", len(f.live))
}
