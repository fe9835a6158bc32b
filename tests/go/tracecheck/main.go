// Command tracecheck checks one Go execution trace with the Go toolchain's
// own parser: every event is read with internal/trace's Reader and checked
// by internal/trace/testtrace's Validator.  It then prints a summary on
// stdout, one "key value" per line (the value is the last field; a type name
// in a "type" line may contain spaces), and exits 0 iff the trace is valid.
//
//	tracecheck [-replay] [file]     (stdin when no file is given)
//
// It is built from inside GOROOT/src by tests/go/build-tracecheck.sh because
// internal packages import only from there.  The parts of internal/trace
// whose API changed between Go versions live in api_*.go.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"internal/trace"
)

func main() {
	replay := flag.Bool("replay", false, "replay alloc/free events by ID and report inconsistencies")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: %s [-replay] [trace-file]\n", os.Args[0])
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 1 {
		flag.Usage()
		os.Exit(2)
	}
	var data []byte
	var err error
	if flag.NArg() == 1 {
		data, err = os.ReadFile(flag.Arg(0))
	} else {
		data, err = io.ReadAll(os.Stdin)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tracecheck:", err)
		os.Exit(2)
	}

	s := newSummary(*replay)
	err = s.check(data)
	s.print(os.Stdout, err)
	if err != nil {
		os.Exit(1)
	}
}

// headerVersion reads N from the file header "go 1.N trace\0\0\0".
func headerVersion(data []byte) (int, error) {
	var v int
	if _, err := fmt.Sscanf(string(data[:min(len(data), 16)]), "go 1.%d trace", &v); err != nil {
		return 0, fmt.Errorf("bad header: not a Go execution trace")
	}
	return v, nil
}

// check parses and validates the whole trace, feeding every event to s.
func (s *summary) check(data []byte) error {
	s.bytes = len(data)
	v, err := headerVersion(data)
	if err != nil {
		return err
	}
	s.version = v
	r, err := trace.NewReader(bytes.NewReader(data))
	if err != nil {
		return err
	}
	val := newValidator(v)
	for {
		ev, err := r.ReadEvent()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := val.Event(ev); err != nil {
			return fmt.Errorf("validator: %v", err)
		}
		if err := s.event(ev); err != nil {
			return err
		}
	}
}

func (s *summary) event(ev trace.Event) error {
	s.events++
	if key, batches, ok := allocFreeData(ev); ok && key != s.tableKey {
		s.tableKey = key
		if err := s.loadTable(batches); err != nil {
			return err
		}
	}
	switch ev.Kind() {
	case trace.EventSync:
		s.syncs++
		if syncStartsGeneration(ev) {
			s.generations++
		}
	case trace.EventExperimental:
		name, args := experimental(ev)
		s.evCounts[name]++
		s.threads[uint64(ev.Thread())] = true
		return s.experimentalEvent(name, args)
	}
	return nil
}

// typeKey identifies a type by what a reader sees; addresses differ per run.
type typeKey struct {
	name string
	size uint64
}

type summary struct {
	replay      bool
	version     int
	bytes       int
	events      int
	syncs       int
	generations int
	evCounts    map[string]int
	threads     map[uint64]bool

	tableKey     any
	types        map[uint64]typeRecord // this generation's type table
	typesDefined int
	infoBatches  int
	info         *heapInfo
	typeAllocs   map[typeKey]int
	typeExists   map[typeKey]int

	fams map[string]*family
}

func newSummary(replay bool) *summary {
	return &summary{
		replay:     replay,
		evCounts:   make(map[string]int),
		threads:    make(map[uint64]bool),
		types:      make(map[uint64]typeRecord),
		typeAllocs: make(map[typeKey]int),
		typeExists: make(map[typeKey]int),
		fams: map[string]*family{
			"heap":  newFamily(),
			"span":  newFamily(),
			"stack": newFamily(),
		},
	}
}

// loadTable replaces the type table with the one of a new generation.
func (s *summary) loadTable(batches [][]byte) error {
	clear(s.types)
	for _, b := range batches {
		info, err := parseAllocFreeBatch(b, s.types)
		if err != nil {
			return err
		}
		if info != nil {
			s.infoBatches++
			if s.info == nil {
				s.info = info
			}
		}
	}
	s.typesDefined += len(s.types)
	return nil
}

// Experimental event names, as internal/trace spells them, and what they do.
var expEvents = []struct {
	name   string
	family string
	op     byte // 'e' exists, 'a' alloc, 'f' free
}{
	{"Span", "span", 'e'},
	{"SpanAlloc", "span", 'a'},
	{"SpanFree", "span", 'f'},
	{"HeapObject", "heap", 'e'},
	{"HeapObjectAlloc", "heap", 'a'},
	{"HeapObjectFree", "heap", 'f'},
	{"GoroutineStack", "stack", 'e'},
	{"GoroutineStackAlloc", "stack", 'a'},
	{"GoroutineStackFree", "stack", 'f'},
}

func (s *summary) experimentalEvent(name string, args []uint64) error {
	if len(args) == 0 {
		return fmt.Errorf("experimental event %s without arguments", name)
	}
	if name == "HeapObject" || name == "HeapObjectAlloc" {
		k := typeKey{name: "<notype>"}
		if id := args[1]; id != 0 {
			t, ok := s.types[id]
			if !ok {
				return fmt.Errorf("%s id %d: type id %d not defined in this generation", name, args[0], id)
			}
			k = typeKey{t.name, t.size}
		}
		if name == "HeapObject" {
			s.typeExists[k]++
		} else {
			s.typeAllocs[k]++
		}
	}
	if s.replay {
		for _, e := range expEvents {
			if e.name == name {
				s.fams[e.family].apply(e.op, args[0])
			}
		}
	}
	return nil
}

func (s *summary) print(w io.Writer, err error) {
	if err != nil {
		fmt.Fprintln(w, "valid 0")
		msg := strings.Join(strings.Fields(err.Error()), " ")
		fmt.Fprintln(w, "error", msg)
	} else {
		fmt.Fprintln(w, "valid 1")
	}
	fmt.Fprintln(w, "version", s.version)
	fmt.Fprintln(w, "bytes", s.bytes)
	fmt.Fprintln(w, "events", s.events)
	fmt.Fprintln(w, "syncs", s.syncs)
	fmt.Fprintln(w, "generations", s.generations)
	fmt.Fprintln(w, "threads", len(s.threads))
	exp := 0
	for _, e := range expEvents {
		fmt.Fprintln(w, "ev", e.name, s.evCounts[e.name])
		exp += s.evCounts[e.name]
	}
	fmt.Fprintln(w, "experimental_events", exp)
	if exp > 0 {
		fmt.Fprintf(w, "bytes_per_event %.2f\n", float64(s.bytes)/float64(exp))
	}
	fmt.Fprintln(w, "info_batches", s.infoBatches)
	if s.info != nil {
		fmt.Fprintf(w, "info minPageHeapAddr %#x\n", s.info.minPageHeapAddr)
		fmt.Fprintln(w, "info pageSize", s.info.pageSize)
		fmt.Fprintln(w, "info minHeapAlign", s.info.minHeapAlign)
		fmt.Fprintln(w, "info fixedStack", s.info.fixedStack)
	}
	fmt.Fprintln(w, "types_defined", s.typesDefined)
	printTypes(w, "allocs", s.typeAllocs)
	printTypes(w, "exists", s.typeExists)
	if s.replay {
		for _, name := range []string{"heap", "span", "stack"} {
			s.fams[name].print(w, name)
		}
	}
}

// printTypes prints "type <name> <size> <what> N", most frequent first.
func printTypes(w io.Writer, what string, m map[typeKey]int) {
	keys := make([]typeKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if m[a] != m[b] {
			return m[a] > m[b]
		}
		if a.name != b.name {
			return a.name < b.name
		}
		return a.size < b.size
	})
	for _, k := range keys {
		fmt.Fprintf(w, "type %s %d %s %d\n", k.name, k.size, what, m[k])
	}
}
