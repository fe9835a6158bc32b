// churn is a long-running, busy Go program for the attach/detach stress
// test (tests/stress/attach_cycles.sh): it allocates, drops, collects and
// starts goroutines in rounds, for as long as it is left running, and
// checks that every round computes what the same round computed before.
//
// Round r does the work of seed s = r mod -seeds (default 64), built from
// a PRNG seeded by s only:
//
//	a binary tree of main.Node (56 B, pointers), summed, then dropped
//	[]byte buffers of 8..4000 bytes (tiny, small and size-class churn)
//	a map[string]int of a few hundred strconv keys, summed
//	16 goroutines that recurse ~40..100 KiB deep (stack growth and copy)
//	and allocate on the way; their results summed
//	runtime.GC() every 8th round
//
// and folds the results into the seed's checksum.  The first round of a
// seed records it; every later round of that seed must reproduce it, or
// churn prints "mismatch round R seed S" on stdout and exits 1 at once.
//
// It stops after -rounds N rounds (0: until SIGUSR1 or SIGTERM, after the
// current round), then prints one line on stdout
//
//	done seeds=64 checksum=HEX
//
// (HEX folds the checksums of every seed; it does not depend on how many
// rounds ran, so an untraced "churn -rounds 128" prints the same line) and
// exits 0.  Only once every seed has run (rounds >= seeds); earlier it
// prints "done early rounds=R" and exits 1.
//
// On stderr, one line per round: "round R WALL_US CPU_US" (wall time of the
// round, and the CPU time of the whole process during it: user + system,
// every thread), for measuring the cost of probes.  Builds with Go 1.21 ..
// 1.27 (no go.mod; see tests/go/build-workloads.sh).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

// Node: six int64 and a pointer: size 56, PtrBytes 56.
type Node struct {
	a, b, c, d, e, f int64
	left, right      *Node
}

type rng uint64

func (r *rng) next() uint64 {
	x := uint64(*r)
	x ^= x << 13
	x ^= x >> 7
	x ^= x << 17
	*r = rng(x)
	return x
}

func mix(h, v uint64) uint64 {
	h ^= v + 0x9e3779b97f4a7c15 + (h << 6) + (h >> 2)
	return h
}

//go:noinline
func tree(r *rng, depth int) *Node {
	if depth == 0 {
		return nil
	}
	v := int64(r.next() & 0xffff)
	n := &Node{a: v, b: v * 3, c: v ^ 5, d: -v, e: v >> 1, f: v + 7}
	n.left = tree(r, depth-1)
	n.right = tree(r, depth-1)
	return n
}

func treeSum(n *Node) uint64 {
	if n == nil {
		return 1
	}
	s := uint64(n.a + n.b + n.c + n.d + n.e + n.f)
	return mix(mix(s, treeSum(n.left)), treeSum(n.right))
}

// deep recurses with ~1 KiB frames so the goroutine's stack grows and is
// copied, allocating a little on the way.
//
//go:noinline
func deep(n int, v uint64) uint64 {
	var frame [128]uint64
	frame[n%128] = v
	if n == 0 {
		b := make([]byte, 32+v%200)
		b[0] = byte(v)
		return uint64(len(b)) + uint64(b[0])
	}
	return deep(n-1, v*31+1) + frame[n%128]
}

func round(seed uint64) uint64 {
	r := rng(seed*0x2545f4914f6cdd1d + 1)
	h := seed

	t := tree(&r, 12+int(seed%3))
	h = mix(h, treeSum(t))

	var bytes uint64
	keep := make([][]byte, 0, 300)
	for i := 0; i < 2000; i++ {
		n := 8 + int(r.next()%4000)
		if i%3 == 0 {
			n = 1 + int(r.next()%15)
		}
		b := make([]byte, n)
		b[n-1] = byte(i)
		bytes += uint64(n) + uint64(b[n-1])
		if i%7 == 0 {
			keep = append(keep, b)
		}
	}
	h = mix(h, bytes+uint64(len(keep)))

	m := make(map[string]int)
	for i := 0; i < 1000; i++ {
		m["k"+strconv.FormatUint(r.next()%1000, 10)] += i
	}
	var msum uint64
	for k, v := range m {
		msum += uint64(len(k)) * uint64(v+1)
	}
	h = mix(h, msum)

	res := make(chan uint64, 16)
	for g := 0; g < 16; g++ {
		d := 40 + int(r.next()%60)
		v := r.next()
		go func() { res <- deep(d, v) }()
	}
	var gsum uint64
	for g := 0; g < 16; g++ {
		gsum += <-res
	}
	return mix(h, gsum)
}

func cpuMicros() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Sec*1e6 + int64(ru.Utime.Usec) +
		ru.Stime.Sec*1e6 + int64(ru.Stime.Usec)
}

func main() {
	rounds := flag.Int("rounds", 0, "rounds to run (0: until SIGUSR1/SIGTERM)")
	seeds := flag.Int("seeds", 64, "distinct rounds (seeds)")
	flag.Parse()

	var stop atomic.Bool
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1, syscall.SIGTERM)
	go func() {
		<-sig
		stop.Store(true)
	}()

	errw := bufio.NewWriterSize(os.Stderr, 1<<16)
	sums := make([]uint64, *seeds)
	seen := make([]bool, *seeds)
	r := 0
	last := time.Now()
	for ; (*rounds == 0 || r < *rounds) && !stop.Load(); r++ {
		cpu0, t0 := cpuMicros(), time.Now()
		s := r % *seeds
		c := round(uint64(s))
		if r%8 == 7 {
			runtime.GC()
		}
		if seen[s] && sums[s] != c {
			errw.Flush()
			fmt.Printf("mismatch round %d seed %d: %x, first %x\n",
				r, s, c, sums[s])
			os.Exit(1)
		}
		sums[s], seen[s] = c, true
		fmt.Fprintf(errw, "round %d %d %d\n", r,
			time.Since(t0).Microseconds(), cpuMicros()-cpu0)
		// Lines reach the file at least every 100 ms.
		if time.Since(last) > 100*time.Millisecond {
			errw.Flush()
			last = time.Now()
		}
	}
	errw.Flush()
	if r < *seeds {
		fmt.Printf("done early rounds=%d\n", r)
		os.Exit(1)
	}
	var h uint64
	for _, c := range sums {
		h = mix(h, c)
	}
	fmt.Printf("done seeds=%d checksum=%016x\n", *seeds, h)
}
