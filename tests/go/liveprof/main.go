// liveprof holds a known set of objects sampled by its own heap profiler
// before any tracer comes, for --memprofilerate's attach-time picture.
//
// It sets runtime.MemProfileRate to -rate (and imports runtime/pprof, so
// its linker keeps memory profiling on), allocates -n main.Keep values
// (256 bytes, with a pointer) and keeps them, prints "ready <pid>
// samples=S" (S: the main.Keep samples its own heap profile holds,
// runtime.MemProfile) and waits for SIGUSR1; then it drops them, runs two
// GCs so the sweeper frees them, prints "done" and exits (-linger N: N
// GCs 50 ms apart before the drop and N after).
//
// With -mix BYTES it instead allocates about BYTES through ten sites of
// different types and sizes (most of it garbage at once, a little kept),
// from the start, without waiting; with -heapprofile FILE it then writes
// its own heap profile (runtime/pprof, sampled at the runtime's current
// MemProfileRate) there: what the tracer's estimates are held against.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"
)

// Keep: 31 int64 and a pointer: 256 bytes, size class 256.
type Keep struct {
	v    [31]int64
	next *Keep
}

var kept []*Keep

//go:noinline
func newKeep(i int) *Keep {
	return &Keep{v: [31]int64{int64(i)}}
}

// keepSamples counts the live samples whose stack passes newKeep.
func keepSamples() int {
	var recs []runtime.MemProfileRecord
	n, _ := runtime.MemProfile(nil, true)
	for {
		recs = make([]runtime.MemProfileRecord, n+50)
		var ok bool
		n, ok = runtime.MemProfile(recs, true)
		if ok {
			break
		}
	}
	live := 0
	for _, r := range recs[:n] {
		frames := runtime.CallersFrames(r.Stack())
		for {
			f, more := frames.Next()
			if strings.HasSuffix(f.Function, "main.newKeep") {
				live += int(r.InUseObjects())
				break
			}
			if !more {
				break
			}
		}
	}
	return live
}

// The ten sites of -mix, each its own function and type, with byte
// shares far enough apart (at least ~10 %) that a ranking by bytes does
// not depend on sampling noise, and each large enough (>= 300 B per
// round, >= 17 MB per GB) for thousands of samples at 4096.
type small struct {
	a, b, c int64
	p       *small
}
type medium struct {
	v [60]int64
	p *medium
}
type record struct {
	name string
	v    [120]int64
}
type node struct {
	next *node
	v    [6]int64
}
type words [48]uintptr

var sinkSmall *small
var sinkMedium *medium
var sinkRecords []*record
var sinkBuf []byte
var sinkStr string
var sinkLarge []int32
var sinkInts []int64
var sinkPtrs []*small
var sinkWords *words
var sinkNode *node

//go:noinline
func makeSmall() { sinkSmall = &small{p: sinkSmall}; sinkSmall.p = nil }

//go:noinline
func makeMedium() { sinkMedium = &medium{} }

//go:noinline
func makeRecord(i int) {
	r := &record{}
	if i%64 == 0 {
		sinkRecords = append(sinkRecords, r)
	}
}

//go:noinline
func makeBuf(n int) { sinkBuf = make([]byte, n) }

//go:noinline
func makeString(i int) { sinkStr = fmt.Sprint("key-", i, "-", i*7) }

//go:noinline
func makeLarge() { sinkLarge = make([]int32, 10000) } // 40000 -> 40960 B

//go:noinline
func makeInts() { sinkInts = make([]int64, 110) } // 880 -> 896 B

//go:noinline
func makePtrs() { sinkPtrs = make([]*small, 80) } // 640 B

//go:noinline
func makeWords() { sinkWords = &words{} } // 384 B

//go:noinline
func makeList() { // 5 x 56 -> 64 B
	var l *node
	for k := 0; k < 5; k++ {
		l = &node{next: l}
	}
	sinkNode = l
}

//go:noinline
func makeText(b []byte) { sinkStr = string(b) } // 200 -> 208 B

var text = make([]byte, 200)

func mix(total int64, heapprofile string) {
	var done int64
	for i := 0; done < total; i++ {
		if i%4 == 0 {
			makeLarge() // 40960 B, 10240 B a round
			done += 40960
		}
		makeBuf(2048 + i%4096) // 2-6 KiB, 4096 B a round
		makeRecord(i)          // 976 -> 1024 B
		makeInts()             // 896 B
		makePtrs()             // 640 B
		makeMedium()           // 496 -> 512 B
		makeWords()            // 384 B
		makeList()             // 320 B
		makeText(text)         // 208 B
		for k := 0; k < 8; k++ {
			makeSmall() // 8 x 32 B
		}
		makeString(i) // ~16 B and fmt's own
		done += int64(2048+i%4096) + 1024 + 896 + 640 + 512 + 384 + 320 + 208 + 256 + 16
	}
	fmt.Printf("done mix bytes=%d records_kept=%d\n", done, len(sinkRecords))
	if heapprofile != "" {
		f, err := os.Create(heapprofile)
		if err == nil {
			err = pprof.Lookup("heap").WriteTo(f, 0)
			f.Close()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "liveprof:", err)
			os.Exit(1)
		}
	}
}

func main() {
	n := flag.Int("n", 20000, "main.Keep values to hold")
	rate := flag.Int("rate", 4096, "runtime.MemProfileRate to run at (0: leave it)")
	mixBytes := flag.Int64("mix", 0, "allocate about this many bytes through ten sites, then exit")
	heapprofile := flag.String("heapprofile", "", "with -mix: write the heap profile here")
	linger := flag.Int("linger", 0, "on SIGUSR1, this many GCs 50 ms apart before dropping them, and as many after the two that free them (a tracer's reads on both sides of the frees)")
	flag.Parse()
	if *rate > 0 {
		runtime.MemProfileRate = *rate
	}
	_ = pprof.Lookup("heap")
	if *mixBytes > 0 {
		mix(*mixBytes, *heapprofile)
		return
	}

	kept = make([]*Keep, *n)
	for i := range kept {
		kept[i] = newKeep(i)
	}
	// MemProfile reports the samples of the last completed GC cycle.
	runtime.GC()
	runtime.GC()
	start := make(chan os.Signal, 1)
	signal.Notify(start, syscall.SIGUSR1)
	fmt.Printf("ready %d samples=%d\n", os.Getpid(), keepSamples())
	<-start
	gcs := func() {
		for i := 0; i < *linger; i++ {
			time.Sleep(50 * time.Millisecond)
			runtime.GC()
		}
	}
	gcs()
	runtime.KeepAlive(kept)
	kept = nil
	runtime.GC()
	runtime.GC()
	gcs()
	fmt.Println("done")
}
