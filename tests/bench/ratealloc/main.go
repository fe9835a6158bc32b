// ratealloc allocates main.Node values at a set rate, for measuring the
// tracer's ring-buffer drops at a sustained event rate (scripts/bench.sh).
// Nodes are dropped in chains of 1024, so the GC frees about as many as
// are allocated: each allocation becomes about two events (alloc + free).
//
// It prints "ready PID", waits for SIGUSR1, allocates -rate Nodes per
// second for -secs seconds over -g goroutines (paced per millisecond,
// catching up when late), prints "done allocs=N secs=S rate=R" and exits.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

type Node struct {
	a, b, c, d, e, f int64
	next             *Node
}

var sinks [64]*Node

//go:noinline
func newNode(prev *Node, i int64) *Node {
	return &Node{a: i, next: prev}
}

func main() {
	rate := flag.Float64("rate", 500000, "Nodes per second, all goroutines")
	secs := flag.Float64("secs", 3, "seconds")
	g := flag.Int("g", 2, "goroutines")
	flag.Parse()

	start := make(chan os.Signal, 1)
	signal.Notify(start, syscall.SIGUSR1)
	fmt.Printf("ready %d\n", os.Getpid())
	<-start

	per := *rate / float64(*g)
	dur := time.Duration(*secs * float64(time.Second))
	t0 := time.Now()
	var wg sync.WaitGroup
	counts := make([]int64, *g)
	for w := 0; w < *g; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var head *Node
			var done int64
			for {
				el := time.Since(t0)
				if el >= dur {
					break
				}
				want := int64(per * el.Seconds())
				for ; done < want; done++ {
					head = newNode(head, done)
					if done%1024 == 1023 {
						sinks[w%len(sinks)] = head
						head = nil
					}
				}
				time.Sleep(time.Millisecond)
			}
			counts[w] = done
		}(w)
	}
	wg.Wait()
	el := time.Since(t0).Seconds()
	var n int64
	for _, c := range counts {
		n += c
	}
	fmt.Printf("done allocs=%d secs=%.2f rate=%.0f\n", n, el, float64(n)/el)
}
