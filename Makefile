# traceaf-bpf — build, test, demo.
#
#   make deps    install build/test dependencies and Go 1.21-1.27 (apt, root)
#   make         build build/traceaf-bpf
#   make test    unit + end-to-end tests; last line "N passed, M failed"
#   make demo    trace the bundled demo program and print a summary
#   make bench   performance figures (see BENCHMARKS.md)
#   make compat-table  Go 1.21-1.27 x stripped x PIE matrix into README.md

BUILD    ?= build
CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
VERSION  := 0.1.0

CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter \
            -D_GNU_SOURCE -DTRACEAF_VERSION='"$(VERSION)"' \
            -Iinclude -I$(BUILD)
LDLIBS   := -lbpf -lelf -ldw -lcapstone -lz -lm

BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall -Werror \
              -Iinclude -I$(BUILD)

BPF_SRCS  := $(wildcard bpf/*.bpf.c)
BPF_OBJS  := $(patsubst bpf/%.bpf.c,$(BUILD)/%.bpf.o,$(BPF_SRCS))
BPF_SKELS := $(patsubst bpf/%.bpf.c,$(BUILD)/%.skel.h,$(BPF_SRCS))

USER_SRCS := $(wildcard user/*.c)
USER_OBJS := $(patsubst user/%.c,$(BUILD)/obj/%.o,$(USER_SRCS))
# Everything but main() is a library the unit tests link against.
LIB_OBJS  := $(filter-out $(BUILD)/obj/main.o,$(USER_OBJS))

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))

.PHONY: all deps test unit e2e workloads demo bench clean compat-table
.DELETE_ON_ERROR:
.SECONDARY:

all: $(BUILD)/traceaf-bpf

deps:
	./scripts/install-deps.sh

$(BUILD)/vmlinux.h:
	@mkdir -p $(@D)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@

$(BUILD)/%.bpf.o: bpf/%.bpf.c $(BUILD)/vmlinux.h $(wildcard bpf/*.h include/*.h)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp
	$(BPFTOOL) gen object $@ $@.tmp
	@rm -f $@.tmp

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@

$(BUILD)/obj/%.o: user/%.c $(wildcard include/*.h) $(BPF_SKELS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/traceaf-bpf: $(USER_OBJS)
	$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(LIB_OBJS) $(wildcard tests/unit/*.h)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itests/unit $< $(LIB_OBJS) -o $@ $(LDLIBS) -lcmocka

unit: $(UNIT_BINS)

# Go programs the tests run, built by every installed toolchain (cached).
workloads:
	OUT=$(abspath $(BUILD))/go-bin ./tests/go/build-workloads.sh allocloop knownalloc fullwork

test: deps all unit workloads
	BUILD=$(BUILD) ./tests/run_all.sh

demo: deps all
	BUILD=$(BUILD) ./scripts/demo.sh

bench: deps all
	BUILD=$(BUILD) ./scripts/bench.sh

# tests/e2e/test_compat_matrix.sh's table (re-run when older than the
# tracer) between the compat-matrix markers of README.md.
compat-table: all workloads
	BUILD=$(BUILD) ./scripts/compat-table.sh

clean:
	rm -rf $(BUILD)
