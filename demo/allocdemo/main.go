// allocdemo is the program `make demo` traces: a small in-memory "order
// book" that allocates a few recognisable types at a steady rate, keeps some
// of them (a cache that grows) and lets the rest die.
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"
)

// Order is a typical small struct with pointers.
type Order struct {
	ID       int64
	Price    float64
	Qty      int32
	Customer *Customer
	Tags     []string
}

// Customer is kept in a growing cache: it "leaks" by design.
type Customer struct {
	Name    string
	Balance int64
	Orders  []*Order
}

var cache = map[string]*Customer{}

// report is a short-lived worker: its goroutine's stack grows while it
// recurses and is freed when it exits, so stacks show up in the trace.
func report(depth int, done chan<- int) {
	var frame [256]byte
	frame[0] = byte(depth)
	if depth > 0 {
		report(depth-1, done)
		return
	}
	done <- int(frame[0])
}

func main() {
	dur := flag.Duration("d", 0, "run for this long (0 = forever)")
	flag.Parse()
	fmt.Printf("allocdemo pid %d\n", os.Getpid())
	deadline := time.Now().Add(*dur)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	var n int64
	done := make(chan int, 1)
	for *dur == 0 || time.Now().Before(deadline) {
		<-tick.C
		if n%2000 == 0 {
			go report(64, done)
			<-done
		}
		for i := 0; i < 200; i++ {
			n++
			key := "c" + strconv.FormatInt(n%5000, 10)
			c := cache[key]
			if c == nil {
				c = &Customer{Name: key}
				cache[key] = c
			}
			o := &Order{ID: n, Price: float64(n%1000) / 10, Qty: int32(n % 7), Customer: c}
			o.Tags = append(o.Tags, "new")
			if n%10 == 0 {
				c.Orders = append(c.Orders, o)
			}
			buf := make([]byte, 256)
			buf[0] = byte(n)
		}
	}
}
