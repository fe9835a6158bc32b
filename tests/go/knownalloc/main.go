// knownalloc performs a known number of allocations of a known type when
// told to, so a tracer attached beforehand can be checked against it.
//
// It prints "ready <pid>" and waits for SIGUSR1; then it allocates -n
// main.Node values (56 bytes, with a pointer) and -bytes []byte slices of
// 100 bytes, prints "done nodes=N bytes=M mallocs=K" where K is the
// runtime.MemStats.Mallocs delta over the loop, and exits.
//
// -big N allocates, after those, N []byte of each size in -bigsizes
// (large objects, one to a span, pointer-free) and adds
// "totalalloc=T" to the done line: the runtime's MemStats.TotalAlloc
// delta over all the loops, what a report's allocated bytes must match.
//
// -hold keeps the process (and every Node) after the done line, until
// SIGINT or SIGTERM: a heap the tracer stops on, with no GC since.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// Node: six int64 and a pointer: size 56, PtrBytes 56.
type Node struct {
	a, b, c, d, e, f int64
	next             *Node
}

// Warm is what -busy allocates while waiting: a type of its own, so the
// Node count stays exact.
type Warm struct {
	a, b int64
	next *Warm
}

var sinkNode *Node
var sinkBytes []byte
var sinkWarm *Warm

//go:noinline
func newWarm(prev *Warm) *Warm {
	return &Warm{next: prev}
}

//go:noinline
func newNode(prev *Node, i int64) *Node {
	return &Node{a: i, next: prev} // stacks-e2e: newNode allocates here
}

//go:noinline
func newBytes(n int) []byte {
	return make([]byte, n)
}

func main() {
	n := flag.Int("n", 100000, "Nodes to allocate")
	nb := flag.Int("bytes", 0, "[]byte slices of 100 bytes to allocate")
	big := flag.Int("big", 0, "large []byte slices to allocate of each -bigsizes size")
	bigSizes := flag.String("bigsizes", "131072,139264", "comma-separated sizes for -big")
	hold := flag.Bool("hold", false, "after the done line, wait for SIGINT or SIGTERM")
	busy := flag.Bool("busy", false, "allocate main.Warm values while waiting for SIGUSR1")
	flag.Parse()

	start := make(chan os.Signal, 1)
	signal.Notify(start, syscall.SIGUSR1)
	fmt.Printf("ready %d\n", os.Getpid())
	if *busy {
		// A tracer attaches while this goroutine is inside the allocator
		// most of the time: the case of a production process.
		var w *Warm
		for i := 0; ; i++ {
			select {
			case <-start:
				goto phase
			default:
			}
			for j := 0; j < 100; j++ {
				w = newWarm(w)
			}
			if i%100 == 99 {
				sinkWarm = w
				w = nil
			}
		}
	}
	<-start
phase:

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var head *Node
	for i := 0; i < *n; i++ {
		head = newNode(head, int64(i))
		if i%1024 == 1023 {
			sinkNode = head
			head = nil
		}
	}
	for i := 0; i < *nb; i++ {
		sinkBytes = newBytes(100)
	}
	if *big > 0 {
		for _, f := range strings.Split(*bigSizes, ",") {
			size, err := strconv.Atoi(f)
			if err != nil || size <= 0 {
				fmt.Fprintf(os.Stderr, "knownalloc: bad -bigsizes entry %q\n", f)
				os.Exit(2)
			}
			for i := 0; i < *big; i++ {
				sinkBytes = newBytes(size)
			}
		}
	}
	sinkNode = head
	runtime.ReadMemStats(&after)
	if *big > 0 {
		fmt.Printf("done nodes=%d bytes=%d mallocs=%d totalalloc=%d\n", *n, *nb,
			after.Mallocs-before.Mallocs, after.TotalAlloc-before.TotalAlloc)
	} else {
		fmt.Printf("done nodes=%d bytes=%d mallocs=%d numgc=%d\n", *n, *nb,
			after.Mallocs-before.Mallocs, after.NumGC-before.NumGC)
	}
	if *hold {
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGINT, syscall.SIGTERM)
		<-term
	}
}
