// allocbench times an allocation loop for the probe benchmarks
// (scripts/bench_probes.sh): it prints "ready <pid>", waits for SIGUSR1
// (so a tracer can attach first), allocates -n objects of one kind and
// prints "ns/alloc <float> mallocs=<MemStats.Mallocs delta>" (for map,
// whose iterations allocate twice, per allocation counted by MemStats)
// and "cpu/alloc <float>": the process's user + system CPU time per
// allocation (getrusage), which on a loaded machine measures the probes
// where wall time mostly measures waiting for a CPU.  -memprofilerate
// sets the runtime's own heap sampling (0 by default, as in a program
// that never reads its profile).
//
// Kinds (on Go 1.27 all but node and tiny go through mallocgc's
// size-class tables):
//
//	node   new(Node), 56 bytes with a pointer: mallocgc up to Go 1.25; a
//	       direct call of mallocgcSmallScanNoHeaderSC6 from Go 1.26/1.27
//	bytes  make([]byte, 24) of a variable length: through mallocgc (on
//	       1.27 its noscan size-class table)
//	tiny   new(uint32): the tiny allocator
//	string a + b of 24 bytes: concatstrings -> rawstring (type nil)
//	append append(s, i) to a full []int64 of 2: growslice to 4 (32
//	       bytes, pointer-free: mallocgc's type nil)
//	map    make(map[int32]int32) and one insert: the map (newobject) and
//	       its first group (newarray(typ.Group, 1), 72 bytes)
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/trace"
	"sort"
	"syscall"
	"time"
)

type Node struct {
	a, b, c, d, e, f int64
	next             *Node
}

var (
	sinkNode   *Node
	sinkBytes  []byte
	sinkTiny   *uint32
	sinkString string
	sinkSlice  []int64
	sinkMap    map[int32]int32
	length     = 24
	strA       = "0123456789ab"
	strB       = "cdefghijklmn"
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

//go:noinline
func newString(a, b string) string {
	return a + b
}

//go:noinline
func grow(s []int64, v int64) []int64 {
	return append(s, v)
}

//go:noinline
func newMap(k int32) map[int32]int32 {
	m := make(map[int32]int32)
	m[k] = k
	return m
}

func main() {
	n := flag.Int("n", 1000000, "allocations")
	kind := flag.String("kind", "node", "node, bytes, tiny, string, append or map")
	wait := flag.Bool("wait", true, "wait for SIGUSR1 before the loop")
	native := flag.String("native", "", "write the runtime's own execution trace of the loop to this file")
	rate := flag.Int("memprofilerate", 0, "runtime.MemProfileRate for the loop: 0 is what a program that never reads its heap profile has; 524288 (the runtime's default where it does) is the control for --memprofilerate: the runtime's own sampling without the tracer")
	flag.Parse()
	// A program that never calls runtime.MemProfile has the linker
	// turn heap profiling off (runtime.disableMemoryProfiling), and no
	// rate can turn it back on; this call, never made, keeps it
	// possible, and the rate is this program's own.
	if *rate < 0 {
		runtime.MemProfile(nil, false)
	}
	runtime.MemProfileRate = *rate

	start := make(chan os.Signal, 1)
	signal.Notify(start, syscall.SIGUSR1)
	fmt.Printf("ready %d\n", os.Getpid())
	if *wait {
		<-start
	}
	if *native != "" {
		f, err := os.Create(*native)
		if err == nil {
			err = trace.Start(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "-native:", err)
			os.Exit(1)
		}
		defer func() { trace.Stop(); f.Close() }()
	}
	var ms0, ms1 runtime.MemStats
	var ru0, ru1 syscall.Rusage
	runtime.ReadMemStats(&ms0)
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
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
	case "string":
		for i := 0; i < *n; i++ {
			sinkString = newString(strA, strB)
		}
	case "append":
		full := []int64{1, 2}
		for i := 0; i < *n; i++ {
			sinkSlice = grow(full[:2:2], int64(i))
		}
	case "map":
		for i := 0; i < *n; i++ {
			sinkMap = newMap(int32(i))
		}
	default:
		fmt.Fprintln(os.Stderr, "unknown -kind", *kind)
		os.Exit(2)
	}
	el := time.Since(t0)
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	runtime.ReadMemStats(&ms1)
	allocs := float64(*n)
	if *kind == "map" {
		allocs = float64(ms1.Mallocs - ms0.Mallocs)
	}
	fmt.Printf("ns/alloc %.1f mallocs=%d\n", float64(el.Nanoseconds())/allocs,
		ms1.Mallocs-ms0.Mallocs)
	cpu := ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano()
	fmt.Printf("cpu/alloc %.1f\n", float64(cpu)/allocs)
	// Where a difference in cpu/alloc lies: user or system time (a
	// tracer's traps and BPF programs are system time), and how many GCs
	// ran and how long the world stood stopped for them.
	// The median pause of the last 256 cycles (both of a cycle's
	// stops): an outlier (the host took the CPU) moves the total, not it.
	var pauses []uint64
	for i := uint32(0); i < ms1.NumGC-ms0.NumGC && i < 256; i++ {
		pauses = append(pauses, ms1.PauseNs[(ms1.NumGC-1-i)%256])
	}
	sort.Slice(pauses, func(i, j int) bool { return pauses[i] < pauses[j] })
	p50 := 0.0
	if len(pauses) > 0 {
		p50 = float64(pauses[len(pauses)/2]) / 1e3
	}
	fmt.Printf("loop user_ms %.1f sys_ms %.1f gcs %d pause_total_us %.0f pause_p50_us %.1f\n",
		float64(ru1.Utime.Nano()-ru0.Utime.Nano())/1e6,
		float64(ru1.Stime.Nano()-ru0.Stime.Nano())/1e6,
		ms1.NumGC-ms0.NumGC, float64(ms1.PauseTotalNs-ms0.PauseTotalNs)/1e3, p50)
}
