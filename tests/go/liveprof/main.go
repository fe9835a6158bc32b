// liveprof holds a known set of objects sampled by its own heap profiler
// before any tracer comes, for --memprofilerate's attach-time picture.
//
// It sets runtime.MemProfileRate to -rate (and imports runtime/pprof, so
// its linker keeps memory profiling on), allocates -n main.Keep values
// (256 bytes, with a pointer) and keeps them, prints "ready <pid>
// samples=S" (S: the main.Keep samples its own heap profile holds,
// runtime.MemProfile) and waits for SIGUSR1; then it drops them, runs two
// GCs so the sweeper frees them, prints "done" and exits.
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

func main() {
	n := flag.Int("n", 20000, "main.Keep values to hold")
	rate := flag.Int("rate", 4096, "runtime.MemProfileRate to run at")
	flag.Parse()
	runtime.MemProfileRate = *rate
	_ = pprof.Lookup("heap")

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
	kept = nil
	runtime.GC()
	runtime.GC()
	fmt.Println("done")
}
