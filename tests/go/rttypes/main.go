// rttypes allocates objects of types made at run time by reflect
// (StructOf, SliceOf, MapOf, ArrayOf, PointerTo, FuncOf, ChanOf) and of a
// generic instantiation, -n of each: the runtime names such a type
// through its reflectOffs map (runtime/runtime1.go), not the binary's
// types section, and a trace's type table must carry that name.
//
// With -native FILE it also writes the runtime's own trace of its work
// there (runtime/trace; run it with GODEBUG=traceallocfree=1): the names
// the runtime itself gives.  Prints "done n=N types=T", stays -linger
// longer and exits.
//
// Builds with Go 1.21 .. 1.27 (no go.mod; see tests/go/build-workloads.sh).
package main

import (
	"flag"
	"fmt"
	"os"
	"reflect"
	"runtime/trace"
	"time"
)

// Pair is instantiated below: a generic type's name is in the binary.
type Pair[K comparable, V any] struct {
	Key K
	Val V
	next *Pair[K, V]
}

var sink []any

func main() {
	n := flag.Int("n", 2000, "objects of each type")
	native := flag.String("native", "", "write the runtime's own trace here")
	linger := flag.Duration("linger", 0, "stay this long after the work (a tracer reads the types from the live process)")
	flag.Parse()
	if *native != "" {
		f, err := os.Create(*native)
		if err == nil {
			err = trace.Start(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "rttypes:", err)
			os.Exit(1)
		}
		defer func() { trace.Stop(); f.Close() }()
	}

	st := reflect.StructOf([]reflect.StructField{
		{Name: "ID", Type: reflect.TypeOf(int64(0))},
		{Name: "Next", Type: reflect.TypeOf((*int)(nil))},
		{Name: "Name", Type: reflect.TypeOf(""), Tag: `json:"name"`},
	})
	types := []reflect.Type{
		st,
		reflect.ArrayOf(3, st),
		reflect.PointerTo(st),
		reflect.SliceOf(st),
		reflect.MapOf(reflect.TypeOf(""), st),
		reflect.ChanOf(reflect.BothDir, st),
		reflect.FuncOf([]reflect.Type{st}, []reflect.Type{reflect.TypeOf(0)}, false),
		reflect.StructOf([]reflect.StructField{
			{Name: "Inner", Type: st},
			{Name: "Buf", Type: reflect.ArrayOf(64, reflect.TypeOf(byte(0)))},
		}),
	}
	for i := 0; i < *n; i++ {
		for _, t := range types {
			sink = append(sink, reflect.New(t).Interface())
		}
		sink = append(sink, reflect.MakeSlice(reflect.SliceOf(st), 4, 4).Interface())
		sink = append(sink, &Pair[string, int]{Key: "k", Val: i})
		if len(sink) > 4096 {
			sink = sink[:0]
		}
	}
	fmt.Printf("done n=%d types=%d\n", *n, len(types))
	time.Sleep(*linger)
}
