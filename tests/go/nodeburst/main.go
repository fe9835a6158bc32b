// nodeburst allocates a known number of main.Node values as soon as main
// starts, without waiting for anything: for tracing a program from its
// first instruction (traceaf-bpf -- CMD) or a short-lived process seen at
// exec (--all).
//
//	nodeburst [-n N] [-hold] [-exit CODE] [-die SIGNUM] [-- ARGS...]
//
// Order: allocate -n main.Node values (56 bytes, with a pointer; the same
// type as knownalloc's); print "out: ARG" on stdout and "err: ARG" on
// stderr for every ARG after the flags; print "done nodes=N" on stdout;
// with -hold, print "holding PID" and wait for SIGINT or SIGTERM, then
// print "got SIGNAL"; with -die, kill itself with signal SIGNUM; exit with
// -exit CODE.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// Node: six int64 and a pointer: size 56, PtrBytes 56.
type Node struct {
	a, b, c, d, e, f int64
	next             *Node
}

var sinkNode *Node

//go:noinline
func newNode(prev *Node, i int64) *Node {
	return &Node{a: i, next: prev}
}

func main() {
	n := flag.Int("n", 20000, "Nodes to allocate at start")
	hold := flag.Bool("hold", false, "after the work, wait for SIGINT or SIGTERM")
	code := flag.Int("exit", 0, "exit status")
	die := flag.Int("die", 0, "kill itself with this signal at the end")
	flag.Parse()

	var head *Node
	for i := 0; i < *n; i++ {
		head = newNode(head, int64(i))
		if i%1024 == 1023 {
			sinkNode = head
			head = nil
		}
	}
	sinkNode = head

	for _, a := range flag.Args() {
		fmt.Fprintf(os.Stdout, "out: %s\n", a)
		fmt.Fprintf(os.Stderr, "err: %s\n", a)
	}
	fmt.Printf("done nodes=%d\n", *n)
	if *hold {
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGINT, syscall.SIGTERM)
		fmt.Printf("holding %d\n", os.Getpid())
		s := <-c
		fmt.Printf("got %v\n", s)
	}
	if *die != 0 {
		syscall.Kill(os.Getpid(), syscall.Signal(*die))
		select {}
	}
	os.Exit(*code)
}
