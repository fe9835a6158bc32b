// leaky leaks one struct type through one function while churning others,
// the program a person would point `traceaf-bpf report` at.
//
// Over -steps steps of -step each it calls leak() -n/-steps times (each
// makes one *main.leakRecord and appends it to a global slice that is never
// cut) and churns short-lived main.churnNode values and []byte buffers that
// become garbage at once.  It prints "done leaked=N churned=M" (N exactly
// the main.leakRecord values made) and exits.
//
// With -native FILE it records its own execution trace into FILE through
// runtime/trace (run it with GODEBUG=traceallocfree=1 for the AllocFree
// events): the reference for the tracer's report.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime/trace"
	"time"
)

// leakRecord: 192 bytes with pointers (size class 192).
type leakRecord struct {
	id      int64
	payload [21]int64
	next    *leakRecord
}

// churnNode: 48 bytes, garbage as soon as made.
type churnNode struct {
	a, b, c, d int64
	next       *churnNode
	pad        int64
}

var leaked []*leakRecord
var sinkNode *churnNode
var sinkBytes []byte

//go:noinline
func leak(i int) {
	leaked = append(leaked, &leakRecord{id: int64(i)})
}

//go:noinline
func churn(n int) int {
	var head *churnNode
	for i := 0; i < n; i++ {
		head = &churnNode{a: int64(i), next: head}
		if i%64 == 63 {
			sinkNode = head
			head = nil
		}
		if i%8 == 0 {
			sinkBytes = make([]byte, 200)
		}
	}
	return n + n/8
}

func main() {
	n := flag.Int("n", 30000, "main.leakRecord values to leak")
	steps := flag.Int("steps", 40, "steps")
	step := flag.Duration("step", 50*time.Millisecond, "pause per step")
	churnPer := flag.Int("churn", 4000, "churnNode values per step")
	native := flag.String("native", "", "write a runtime/trace execution trace here")
	flag.Parse()

	if *native != "" {
		f, err := os.Create(*native)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := trace.Start(f); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer f.Close()
		defer trace.Stop()
	}
	made, churned := 0, 0
	for s := 0; s < *steps; s++ {
		want := *n * (s + 1) / *steps
		for ; made < want; made++ {
			leak(made)
		}
		churned += churn(*churnPer)
		time.Sleep(*step)
	}
	fmt.Printf("done leaked=%d churned=%d live=%d\n", made, churned, len(leaked))
}
