// bigheap holds -n live main.Node values (56 bytes in 64-byte slots, one
// linked list) and waits: the heap for measuring how long the tracer's
// attach-time snapshot stops a process (scripts/bench.sh).
//
// It prints "holding PID" once the heap is built and exits on SIGINT or
// SIGTERM.  With -gcs N it runs runtime.GC() every 100 ms N times after
// that, then prints "gcs done": --memprofilerate's reads of a big heap's
// samples, one per GC mark, for make bench section 11 to time.
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

var head *Node

func main() {
	n := flag.Int("n", 1<<24, "live Nodes")
	gcs := flag.Int("gcs", 0, "after holding, GCs to run, one every 100 ms")
	flag.Parse()
	for i := 0; i < *n; i++ {
		head = &Node{a: int64(i), next: head}
	}
	// Swept and quiet: the snapshot sees live objects, not garbage.
	runtime.GC()
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGINT, syscall.SIGTERM)
	fmt.Printf("holding %d\n", os.Getpid())
	if *gcs > 0 {
		start := make(chan os.Signal, 1)
		signal.Notify(start, syscall.SIGUSR1)
		<-start
		for i := 0; i < *gcs; i++ {
			time.Sleep(100 * time.Millisecond)
			runtime.GC()
		}
		fmt.Println("gcs done")
	}
	<-c
}
