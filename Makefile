# traceaf-bpf — build, test, demo.
#
#   make deps    install build/test dependencies and Go 1.21-1.27 (apt, root)
#   make         build build/traceaf-bpf
#   make test    unit + end-to-end tests; last line "N passed, M failed"
#   make demo    trace the bundled demo program and print a summary
#   make bench   performance figures (see BENCHMARKS.md)
#   make unit-asan  unit tests built with AddressSanitizer + UBSan, run
#   make fuzz-short every libFuzzer harness (tests/fuzz) for 10 s each
#   make compat-table  Go 1.21-1.27 x stripped x PIE matrix into README.md

BUILD    ?= build
CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
VERSION  := 0.1.0

CFLAGS   ?= -O2 -g
# Added to CFLAGS (compile and link): the sanitizer builds set it.
XCFLAGS  ?=
CFLAGS   += -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter \
            -D_GNU_SOURCE -DTRACEAF_VERSION='"$(VERSION)"' \
            -Iinclude -I$(BUILD) $(XCFLAGS)
LDLIBS   := -lbpf -lelf -ldw -lcapstone -lz -lm -lpthread

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

.PHONY: all deps test unit e2e workloads demo bench clean unit-asan \
        unit-asan-build fuzz fuzz-short compat-table
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

# The unit tests again, under AddressSanitizer and UBSan (any report fails
# the test), in their own build directory.
ASAN_BUILD ?= $(BUILD)-asan
ASAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all \
              -fno-omit-frame-pointer

unit-asan-build:
	$(MAKE) BUILD=$(ASAN_BUILD) XCFLAGS="$(ASAN_FLAGS)" unit

unit-asan: unit-asan-build workloads
	BUILD=$(BUILD) ASAN_BUILD=$(ASAN_BUILD) ./tests/run_all.sh asan

# libFuzzer harnesses (tests/fuzz/fuzz_*.c, seeds in tests/fuzz/corpus/):
# the parsers of untrusted input, built with clang, ASan and UBSan.
FUZZ_BUILD ?= $(BUILD)-fuzz
FUZZ_CC    ?= clang
FUZZ_CFLAGS := -O1 -g -std=gnu11 -Wall -Wextra -Werror \
               -Wno-unused-parameter -D_GNU_SOURCE -Iinclude -Itests/unit \
               -fsanitize=address,undefined -fno-sanitize-recover=all \
               -fno-omit-frame-pointer
FUZZ_MODS  := go_buildinfo go_binary go_pclntab go_dwarf go_types u64_map \
              go_layout go_layout_table disasm trace_writer
FUZZ_LIB   := $(patsubst %,$(FUZZ_BUILD)/obj/%.o,$(FUZZ_MODS))
FUZZ_BINS  := $(patsubst tests/fuzz/%.c,$(FUZZ_BUILD)/%, \
                $(wildcard tests/fuzz/fuzz_*.c))

$(FUZZ_BUILD)/obj/%.o: user/%.c $(wildcard include/*.h)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIB) \
                      $(wildcard tests/fuzz/*.h tests/unit/*.h)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_LIB) -o $@ \
		-lelf -ldw -lcapstone -lz

fuzz: $(FUZZ_BINS)

fuzz-short: fuzz
	BUILD=$(BUILD) FUZZ_BUILD=$(FUZZ_BUILD) ./tests/run_all.sh fuzz

test: deps all unit unit-asan-build fuzz workloads
	BUILD=$(BUILD) ASAN_BUILD=$(ASAN_BUILD) FUZZ_BUILD=$(FUZZ_BUILD) \
		./tests/run_all.sh

demo: deps all
	BUILD=$(BUILD) ./scripts/demo.sh

bench: deps all
	BUILD=$(BUILD) ./scripts/bench.sh

# tests/e2e/test_compat_matrix.sh's table (re-run when older than the
# tracer) between the compat-matrix markers of README.md.
compat-table: all workloads
	BUILD=$(BUILD) ./scripts/compat-table.sh

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
