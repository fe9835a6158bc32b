// inlinecheck prints, for each PC given (hex link addresses of its own
// code; build it without -buildmode=pie), the source frames Go's runtime
// reports there: runtime.CallersFrames, inlined calls expanded, innermost
// first, one "FUNCTION FILE:LINE" line each, then "--".  The reference for
// go_pclntab_src_frames (tests/unit/test_pclntab_line.c).
//
// With -alloc N it first builds a list through inlined helpers, so its
// own code has allocations inside inlined calls to look at.
package main

import (
	"flag"
	"fmt"
	"runtime"
	"strconv"
)

type item struct {
	v    int
	next *item
}

var sink *item

// Small enough to be inlined into push, and push into build.
func newItem(v int, next *item) *item {
	return &item{v: v, next: next} // inlinecheck: allocation
}

func push(l *item, v int) *item {
	return newItem(v, l)
}

//go:noinline
func build(n int) *item {
	var l *item
	for i := 0; i < n; i++ {
		l = push(l, i)
	}
	return l
}

func main() {
	n := flag.Int("alloc", 0, "items to allocate first")
	flag.Parse()
	sink = build(*n)
	for _, a := range flag.Args() {
		pc, err := strconv.ParseUint(a, 0, 64)
		if err != nil {
			panic(err)
		}
		// CallersFrames takes return addresses: it looks up PC - 1.  It
		// expands the calls inlined at a PC only while more PCs follow
		// (runtime.Callers lists one per inlined call): 0 is one that
		// names no function and is skipped.
		frames := runtime.CallersFrames([]uintptr{uintptr(pc) + 1, 0})
		for {
			f, more := frames.Next()
			fmt.Printf("%s %s:%d\n", f.Function, f.File, f.Line)
			if !more {
				break
			}
		}
		fmt.Println("--")
	}
}
