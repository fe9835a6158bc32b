// fullwork exercises every kind of memory event of the AllocFree experiment
// (heap objects, spans, goroutine stacks: alloc, free and "exists") with
// known, deterministic counts, so that a tracer attached to it beforehand can
// be compared with the Go runtime's own GODEBUG=traceallocfree=1 trace.
//
// It prints "ready <pid>" and waits for SIGUSR1 (-wait=false: starts at
// once), runs one phase, prints one line
//
//	done key=value key=value ...
//
// and exits 0.  Keys (counts of what the phase did, then MemStats deltas
// over the phase, "d" = after - before, may be negative):
//
//	nodes nodes_kept           main.Node (56 B, with a pointer) churned in
//	                           chains of 1024; every 64th kept alive until exit
//	bytes5 bytes12             make([]byte, 5|12): tiny allocator (< 16 B, noscan)
//	bytes100 bytes1000 bytes4000  small noscan []byte (type uint8, size 1)
//	big                        new(main.Big): 576 B size class, pointers
//	                           (malloc-header path from Go 1.22)
//	large_noscan large_scan    make([]byte, 40000) / new(main.LargePtr) (40 KiB,
//	                           pointers): large objects, one span each
//	large_kept                 how many of those (each kind) stay alive
//	goroutines depth frame     goroutines started in waves of -wave; each
//	                           recurses depth frames of ~frame bytes: its
//	                           starting stack (2 KiB, or 4 KiB once the
//	                           runtime's adaptive start size has adapted)
//	                           is copied to 4, 8, ... 128 KiB, then freed
//	                           at exit (gfput frees non-starting-size stacks)
//	gcs                        runtime.GC() calls in the phase (incl. final 2)
//	mallocs frees              MemStats.Mallocs / Frees deltas (a tiny object
//	                           merged into an existing tiny block counts as
//	                           both a malloc and a free in MemStats)
//	heap_alloc_d heap_objects_d stack_inuse_d  signed deltas
//	total_alloc num_gc         TotalAlloc / NumGC deltas
//	ms                         wall time of the phase in milliseconds
//
// -scale F multiplies every count (default 1: ~4.7M heap allocations,
// 12000 goroutines; the phase takes ~0.7 s natively, ~1.2 s with the
// runtime's own AllocFree tracing, whose trace is ~58 MB; -scale 0.1 for
// quick runs).  -parts LIST runs only some parts of the phase (comma-
// separated from nodes,bytes,big,large,goroutines; default all; skipped
// parts count 0; -parts= runs an empty phase), to isolate one kind of
// event.  -native FILE: runtime/trace.Start(FILE) at the start of the phase
// (before the first MemStats read) and trace.Stop at its end (after the
// last one); run with GODEBUG=traceallocfree=1 to get the runtime's
// reference AllocFree trace (Go 1.23+; older Go writes a plain trace).
//
// Builds with Go 1.21 .. 1.27 (no go.mod; see tests/go/build-workloads.sh).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/trace"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Node: six int64 and a pointer: size 56, PtrBytes 56.
type Node struct {
	a, b, c, d, e, f int64
	next             *Node
}

// Big: 70 pointers + an int = 568 bytes, size class 576.  Over 512 bytes
// with pointers: from Go 1.22 it carries a malloc header.
type Big struct {
	p [70]*int
	n int
}

// LargePtr: 5000 pointers = 40000 bytes, a large object (> 32 KiB) with
// pointers, allocated in its own span.
type LargePtr struct {
	p [5000]*Node
}

// Sinks keep the last allocation of each kind reachable so that nothing is
// optimised away; the kept slices keep a known number alive until exit.
var (
	sinkNode  *Node
	sinkBytes []byte
	sinkBig   *Big
	sinkLarge []byte
	sinkLP    *LargePtr

	keptNodes   []*Node
	keptLarge   [][]byte
	keptLargeP  []*LargePtr
	depthResult int64
)

//go:noinline
func newNode(prev *Node, i int64) *Node {
	return &Node{a: i, b: i + 1, next: prev}
}

//go:noinline
func newBytes(n int) []byte {
	return make([]byte, n)
}

//go:noinline
func newBig(i int) *Big {
	return &Big{n: i}
}

//go:noinline
func newLargePtr(n *Node) *LargePtr {
	lp := new(LargePtr)
	lp.p[0] = n
	return lp
}

const frameBytes = 1024

// recurse uses a ~1 KiB frame per level so that depth levels need about
// depth KiB of stack: 100 levels grow a 2-4 KiB stack to 128 KiB.
//
//go:noinline
func recurse(depth int, seed byte) int64 {
	var buf [frameBytes]byte
	for i := 0; i < len(buf); i += 64 {
		buf[i] = seed + byte(i)
	}
	if depth == 0 {
		return int64(buf[int(seed)%frameBytes])
	}
	return recurse(depth-1, seed+1) + int64(buf[int(seed)*3%frameBytes])
}

type counts struct {
	kv []string
}

func (c *counts) add(k string, v int64) { c.kv = append(c.kv, fmt.Sprintf("%s=%d", k, v)) }

func scaled(n int, f float64) int {
	v := int(float64(n)*f + 0.5)
	if v < 1 && n > 0 {
		v = 1
	}
	return v
}

func main() {
	scale := flag.Float64("scale", 1, "multiply every count by this factor")
	native := flag.String("native", "", "write the runtime's own execution trace of the phase to this file")
	wait := flag.Bool("wait", true, "print \"ready <pid>\" and wait for SIGUSR1 before the phase")
	parts := flag.String("parts", "nodes,bytes,big,large,goroutines", "parts of the phase to run")
	wave := flag.Int("wave", 100, "goroutines alive at once")
	depth := flag.Int("depth", 100, "recursion depth of each goroutine (~1 KiB per level)")
	flag.Parse()

	run := map[string]bool{}
	for _, p := range strings.Split(*parts, ",") {
		switch p {
		case "nodes", "bytes", "big", "large", "goroutines":
			run[p] = true
		case "":
		default:
			fmt.Fprintf(os.Stderr, "fullwork: unknown part %q\n", p)
			os.Exit(2)
		}
	}
	part := func(name string, n int) int {
		if !run[name] {
			return 0
		}
		return scaled(n, *scale)
	}
	nNodes := part("nodes", 3000000)
	nTiny := part("bytes", 300000)  // each of bytes5 and bytes12
	nSmall := part("bytes", 300000) // each of bytes100, bytes1000, bytes4000
	nBig := part("big", 150000)
	nLarge := part("large", 6000) // each of large_noscan and large_scan
	nG := part("goroutines", 12000)

	// Everything the phase keeps is preallocated, so the phase itself
	// allocates only what it counts.
	keptNodes = make([]*Node, 0, nNodes/64+1)
	keptLarge = make([][]byte, 0, nLarge/16+1)
	keptLargeP = make([]*LargePtr, 0, nLarge/16+1)
	sizes := []int{5, 12, 100, 1000, 4000}
	var f *os.File
	if *native != "" {
		var err error
		if f, err = os.Create(*native); err != nil {
			fmt.Fprintln(os.Stderr, "fullwork:", err)
			os.Exit(1)
		}
		if !strings.Contains(os.Getenv("GODEBUG"), "traceallocfree=1") {
			fmt.Fprintln(os.Stderr, "fullwork: note: GODEBUG=traceallocfree=1 not set: no AllocFree events")
		}
	}

	if *wait {
		start := make(chan os.Signal, 1)
		signal.Notify(start, syscall.SIGUSR1)
		fmt.Printf("ready %d\n", os.Getpid())
		<-start
		signal.Stop(start)
	}

	if f != nil {
		if err := trace.Start(f); err != nil {
			fmt.Fprintln(os.Stderr, "fullwork: trace.Start:", err)
			os.Exit(1)
		}
	}
	t0 := time.Now()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	gcs := 0

	// 1. main.Node churn: chains of 1024 die, every 64th Node survives.
	var head *Node
	for i := 0; i < nNodes; i++ {
		if i%64 == 63 {
			// A kept Node links to nothing, so it keeps no chain alive.
			keptNodes = append(keptNodes, newNode(nil, int64(i)))
		} else {
			head = newNode(head, int64(i))
		}
		if i%1024 == 1023 {
			sinkNode = head
			head = nil
		}
	}
	sinkNode = head
	runtime.GC()
	gcs++

	// 2. []byte of five sizes: tiny (5, 12) and small noscan.
	for i := 0; i < nTiny; i++ {
		sinkBytes = newBytes(sizes[0])
		sinkBytes = newBytes(sizes[1])
	}
	for i := 0; i < nSmall; i++ {
		sinkBytes = newBytes(sizes[2])
		sinkBytes = newBytes(sizes[3])
		sinkBytes = newBytes(sizes[4])
	}

	// 3. main.Big: > 512 bytes with pointers.
	for i := 0; i < nBig; i++ {
		sinkBig = newBig(i)
	}

	// 4. Large objects, pointer-free and with pointers; every 16th kept.
	for i := 0; i < nLarge; i++ {
		sinkLarge = newBytes(40000)
		sinkLP = newLargePtr(sinkNode)
		if i%16 == 15 {
			keptLarge = append(keptLarge, sinkLarge)
			keptLargeP = append(keptLargeP, sinkLP)
		}
	}
	runtime.GC()
	gcs++

	// 5. Goroutines in waves; each grows its stack to 128 KiB and exits.
	var mu sync.Mutex
	var total int64
	for started := 0; started < nG; {
		n := *wave
		if nG-started < n {
			n = nG - started
		}
		var wg sync.WaitGroup
		wg.Add(n)
		for j := 0; j < n; j++ {
			go func(seed byte) {
				r := recurse(*depth, seed)
				mu.Lock()
				total += r
				mu.Unlock()
				wg.Done()
			}(byte(started + j))
		}
		wg.Wait()
		started += n
	}
	depthResult = total

	// 6. Final collections: everything that died above is swept (and its
	// frees traced) before runtime.GC returns.
	runtime.GC()
	runtime.GC()
	gcs += 2
	runtime.ReadMemStats(&after)
	elapsed := time.Since(t0)
	if f != nil {
		trace.Stop()
		if err := f.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "fullwork:", err)
			os.Exit(1)
		}
	}

	var c counts
	c.add("nodes", int64(nNodes))
	c.add("nodes_kept", int64(len(keptNodes)))
	c.add("bytes5", int64(nTiny))
	c.add("bytes12", int64(nTiny))
	c.add("bytes100", int64(nSmall))
	c.add("bytes1000", int64(nSmall))
	c.add("bytes4000", int64(nSmall))
	c.add("big", int64(nBig))
	c.add("large_noscan", int64(nLarge))
	c.add("large_scan", int64(nLarge))
	c.add("large_kept", int64(len(keptLarge)))
	c.add("goroutines", int64(nG))
	c.add("depth", int64(*depth))
	c.add("frame", frameBytes)
	c.add("gcs", int64(gcs))
	c.add("mallocs", int64(after.Mallocs-before.Mallocs))
	c.add("frees", int64(after.Frees-before.Frees))
	c.add("heap_alloc_d", int64(after.HeapAlloc)-int64(before.HeapAlloc))
	c.add("heap_objects_d", int64(after.HeapObjects)-int64(before.HeapObjects))
	c.add("stack_inuse_d", int64(after.StackInuse)-int64(before.StackInuse))
	c.add("total_alloc", int64(after.TotalAlloc-before.TotalAlloc))
	c.add("num_gc", int64(after.NumGC-before.NumGC))
	c.add("ms", elapsed.Milliseconds())
	fmt.Println("done " + strings.Join(c.kv, " "))
	runtime.KeepAlive(keptNodes)
	runtime.KeepAlive(keptLarge)
	runtime.KeepAlive(keptLargeP)
}
