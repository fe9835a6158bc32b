// cgo.go turns tests/go/knownalloc into a dynamically linked cgo program
// that calls into C once at start: tests/e2e/test_binary_kinds.sh builds
// it together with knownalloc's main.go (CGO_ENABLED=1).
package main

// static int c_answer(void) { return 42; }
import "C"

func init() {
	if C.c_answer() != 42 {
		panic("cgo")
	}
}
