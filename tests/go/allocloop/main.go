// allocloop allocates main.Node values in a loop so that a tracer has a
// known type (main.Node, 56 bytes, one pointer) and a known rate to check.
//
// Usage: allocloop [-n N] [-sleep DUR]
//   -n N        number of Nodes to allocate (0 = forever)
//   -sleep DUR  pause after each batch of 1000 (default 0)
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

// Node is 7 words: six int64 and one pointer, so size 56 and PtrBytes 56.
type Node struct {
	a, b, c, d, e, f int64
	next             *Node
}

// sink keeps the last Node reachable so the allocations are not optimised away.
var sink *Node

// buf holds a []byte so the binary contains a uint8 element type in use.
var buf []byte

//go:noinline
func newNode(prev *Node, i int64) *Node {
	return &Node{a: i, b: i + 1, c: i + 2, d: i + 3, e: i + 4, f: i + 5, next: prev}
}

func main() {
	n := flag.Int64("n", 1000000, "nodes to allocate (0 = forever)")
	sleep := flag.Duration("sleep", 0, "pause after each batch of 1000")
	flag.Parse()

	var head *Node
	for i := int64(0); *n == 0 || i < *n; i++ {
		head = newNode(head, i)
		if i%1000 == 999 {
			head = nil // let the chain die so the sweeper frees it
			buf = make([]byte, 64+i%64)
			if *sleep > 0 {
				time.Sleep(*sleep)
			}
		}
		sink = head
	}
	fmt.Fprintf(os.Stdout, "allocated %d nodes, buf %d\n", *n, len(buf))
}
