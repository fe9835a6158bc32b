package main

import (
	"encoding/binary"
	"fmt"
)

// The AllocFree experiment's side data (runtime/traceallocfree.go,
// runtime/tracetype.go): each experimental batch starts with a kind byte.
const (
	batchTypes = 0 // [{id, type address, size, ptrBytes, name length, name}...]
	batchInfo  = 1 // [minPageHeapAddr, pageSize, minHeapAlign, fixedStack]
)

type heapInfo struct {
	minPageHeapAddr, pageSize, minHeapAlign, fixedStack uint64
}

type typeRecord struct {
	addr, size, ptrBytes uint64
	name                 string
}

// parseAllocFreeBatch adds a types batch's records to types, or returns the
// info of an info batch.
func parseAllocFreeBatch(b []byte, types map[uint64]typeRecord) (*heapInfo, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("empty AllocFree batch")
	}
	d := &decoder{b: b[1:]}
	switch b[0] {
	case batchInfo:
		info := &heapInfo{d.uvarint(), d.uvarint(), d.uvarint(), d.uvarint()}
		if d.err != nil || len(d.b) != 0 {
			return nil, fmt.Errorf("malformed AllocFree info batch (%d bytes)", len(b))
		}
		return info, nil
	case batchTypes:
		for len(d.b) > 0 && d.err == nil {
			id := d.uvarint()
			t := typeRecord{addr: d.uvarint(), size: d.uvarint(), ptrBytes: d.uvarint()}
			t.name = d.str(d.uvarint())
			if d.err != nil {
				break
			}
			if id == 0 {
				return nil, fmt.Errorf("type %q has id 0", t.name)
			}
			if _, dup := types[id]; dup {
				return nil, fmt.Errorf("type id %d defined twice in a generation", id)
			}
			types[id] = t
		}
		if d.err != nil {
			return nil, fmt.Errorf("malformed AllocFree types batch: %v", d.err)
		}
		return nil, nil
	}
	return nil, fmt.Errorf("unknown AllocFree batch kind %d", b[0])
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = fmt.Errorf("bad varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) str(n uint64) string {
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)) {
		d.err = fmt.Errorf("string of %d bytes overruns batch", n)
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}
