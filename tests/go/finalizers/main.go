// finalizers makes garbage that has finalizers, the one case where the
// sweeper changes a span's mark bits itself: an unmarked object with a
// finalizer special is marked ("revived") and its finalizer queued, and
// only the next cycle's sweep frees it (runtime/mgcsweep.go, Go
// 1.21-1.27).  A tracer that took the marks as the sweep found them would
// free such an object a cycle early, then again.
//
// Each of -rounds rounds allocates -n objects of each kind below, with a
// finalizer on every one, keeps every third (so the spans hold live,
// revived and free slots side by side), drops the rest, and runs GCs
// until their finalizers have run; the kept ones go at the end.  Kinds:
// Small (32 B, no pointers: Green Tea's inline mark bits on 1.26+),
// SmallPtr (32 B, pointers), Pair (16 B, no pointers: the smallest size
// class outside the tiny allocator, whose blocks would tie objects'
// finalizers together), Mid (800 B, pointers: a malloc header on 1.22+)
// and Large (40 000 B: a span of its own).
//
// Prints "ready PID", then "done finalized=F want=W mallocs=M frees=R"
// (F must equal W; M and R are runtime.MemStats deltas over the rounds).
// -native FILE: runtime/trace.Start(FILE) before the rounds and
// trace.Stop after them, for GODEBUG=traceallocfree=1 (Go 1.23+).
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/trace"
	"sync/atomic"
	"time"
)

type Small struct{ a, b, c, d int64 }

type SmallPtr struct {
	p    *int64
	a, b int64
	c    int64
}

type Pair struct{ a, b int64 }

type Mid struct {
	p   *Mid
	buf [99]int64
}

type Large struct{ buf [5000]int64 }

var finalized atomic.Int64

func fin[T any](*T) { finalized.Add(1) }

// kinds allocate one object with a finalizer; the object is returned so
// the caller decides whether it stays reachable.
var kinds = []func(i int) any{
	func(i int) any { o := &Small{a: int64(i)}; runtime.SetFinalizer(o, fin[Small]); return o },
	func(i int) any { o := &SmallPtr{a: int64(i)}; runtime.SetFinalizer(o, fin[SmallPtr]); return o },
	func(i int) any { o := &Pair{a: int64(i)}; runtime.SetFinalizer(o, fin[Pair]); return o },
	func(i int) any { o := &Mid{}; o.buf[0] = int64(i); runtime.SetFinalizer(o, fin[Mid]); return o },
	func(i int) any { o := &Large{}; o.buf[0] = int64(i); runtime.SetFinalizer(o, fin[Large]); return o },
}

// settle runs GCs until finalized reaches want (finalizers run on their
// own goroutine after the sweep that queues them), for at most 20 s.
func settle(want int64) {
	deadline := time.Now().Add(20 * time.Second)
	for finalized.Load() < want && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	runtime.GC()
	runtime.GC()
}

func main() {
	n := flag.Int("n", 2000, "objects of each kind per round")
	rounds := flag.Int("rounds", 4, "rounds")
	native := flag.String("native", "", "write the runtime's own execution trace of the rounds to this file")
	flag.Parse()
	fmt.Printf("ready %d\n", os.Getpid())

	if *native != "" {
		f, err := os.Create(*native)
		if err != nil {
			fmt.Fprintln(os.Stderr, "finalizers:", err)
			os.Exit(1)
		}
		defer f.Close()
		if err := trace.Start(f); err != nil {
			fmt.Fprintln(os.Stderr, "finalizers: trace.Start:", err)
			os.Exit(1)
		}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var kept []any
	var want int64
	for r := 0; r < *rounds; r++ {
		for i := 0; i < *n; i++ {
			for _, k := range kinds {
				o := k(i)
				if i%3 == 0 {
					kept = append(kept, o)
				} else {
					want++
				}
			}
		}
		settle(want)
	}
	want += int64(len(kept))
	kept = nil
	settle(want)
	runtime.ReadMemStats(&after)
	if *native != "" {
		trace.Stop()
	}
	fmt.Printf("done finalized=%d want=%d mallocs=%d frees=%d\n", finalized.Load(), want,
		after.Mallocs-before.Mallocs, after.Frees-before.Frees)
}
