// allocbench times an allocation loop for the probe benchmarks
// (scripts/bench_probes.sh): it prints "ready <pid>", waits for SIGUSR1
// (so a tracer can attach first), allocates -n objects of one kind and
// prints "ns/alloc <float> mallocs=<MemStats.Mallocs delta>".
//
// Kinds:
//
//	node   new(Node), 56 bytes with a pointer: mallocgc up to Go 1.25; a
//	       direct call of mallocgcSmallScanNoHeaderSC6 from Go 1.26/1.27
//	bytes  make([]byte, 24) of a variable length: through mallocgc (on
//	       1.27 its noscan size-class table)
//	tiny   new(uint32): the tiny allocator
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"
)

type Node struct {
	a, b, c, d, e, f int64
	next             *Node
}

var (
	sinkNode  *Node
	sinkBytes []byte
	sinkTiny  *uint32
	length    = 24
)

//go:noinline
func newNode(prev *Node, i int64) *Node {
	return &Node{a: i, next: prev}
}

//go:noinline
func newBytes(n int) []byte {
	return make([]byte, n)
}

//go:noinline
func newTiny(i uint32) *uint32 {
	p := new(uint32)
	*p = i
	return p
}

func main() {
	n := flag.Int("n", 1000000, "allocations")
	kind := flag.String("kind", "node", "node, bytes or tiny")
	wait := flag.Bool("wait", true, "wait for SIGUSR1 before the loop")
	flag.Parse()

	start := make(chan os.Signal, 1)
	signal.Notify(start, syscall.SIGUSR1)
	fmt.Printf("ready %d\n", os.Getpid())
	if *wait {
		<-start
	}
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	t0 := time.Now()
	switch *kind {
	case "node":
		var head *Node
		for i := 0; i < *n; i++ {
			head = newNode(head, int64(i))
			if i%1000 == 999 {
				sinkNode = head
				head = nil
			}
		}
		sinkNode = head
	case "bytes":
		for i := 0; i < *n; i++ {
			sinkBytes = newBytes(length)
		}
	case "tiny":
		for i := 0; i < *n; i++ {
			sinkTiny = newTiny(uint32(i))
		}
	default:
		fmt.Fprintln(os.Stderr, "unknown -kind", *kind)
		os.Exit(2)
	}
	el := time.Since(t0)
	runtime.ReadMemStats(&ms1)
	fmt.Printf("ns/alloc %.1f mallocs=%d\n", float64(el.Nanoseconds())/float64(*n),
		ms1.Mallocs-ms0.Mallocs)
}
