// bigheap holds -n live main.Node values (56 bytes in 64-byte slots, one
// linked list) and waits: the heap for measuring how long the tracer's
// attach-time snapshot stops a process (scripts/bench.sh).
//
// It prints "holding PID" once the heap is built and exits on SIGINT or
// SIGTERM.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"
)

type Node struct {
	a, b, c, d, e, f int64
	next             *Node
}

var head *Node

func main() {
	n := flag.Int("n", 1<<24, "live Nodes")
	flag.Parse()
	for i := 0; i < *n; i++ {
		head = &Node{a: int64(i), next: head}
	}
	// Swept and quiet: the snapshot sees live objects, not garbage.
	runtime.GC()
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGINT, syscall.SIGTERM)
	fmt.Printf("holding %d\n", os.Getpid())
	<-c
}
