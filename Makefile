# ksmscan — see README.md. `make` builds a static binary with musl.
#
#   make            ./ksmscan (static, musl-gcc, stripped)
#   make demo       install what is missing, build, scan two live processes
#   make test       install what is missing, build, run the suites
#   make check      the suites again, built with clang ASan + UBSan, and the
#                   threaded ones with TSan
#   make install    PREFIX=/usr/local DESTDIR= MANDIR=$(PREFIX)/share/man
#                   UNITDIR=$(PREFIX)/lib/systemd/system
#   make clean

PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
MANDIR  ?= $(PREFIX)/share/man
PYTHON  ?= /usr/bin/python3

CC      = musl-gcc
# Debian's headers for xxHash, zstd and zlib come after musl's own.
CPPFLAGS += -idirafter /usr/include -idirafter /usr/include/x86_64-linux-gnu
CFLAGS  ?= -O2
CFLAGS  += -std=c11 -D_GNU_SOURCE -Wall -Wextra -pipe -pthread
LDFLAGS += -static -s -pthread
LDLIBS  += /usr/lib/x86_64-linux-gnu/libzstd.a /usr/lib/x86_64-linux-gnu/libz.a
# Compression layers besides zstd and gzip (dump/layers.c): xz, bzip2, lz4.
LDLIBS  += /usr/lib/x86_64-linux-gnu/liblzma.a /usr/lib/x86_64-linux-gnu/libbz2.a \
           /usr/lib/x86_64-linux-gnu/liblz4.a
# The JSON of a forecast, read back by --check.
LDLIBS  += /usr/lib/x86_64-linux-gnu/libjansson.a
# The same libraries for the clang builds (sanitizers, fuzzing).
LAYER_LIBS = -llzma -lbz2 -llz4 -ljansson

SRCS = ksmscan.c \
       util/util.c util/file.c util/text.c util/progress.c util/shell.c \
       hash/hash.c hash/measure.c hash/jhash2.c hash/crc32c.c hash/xxh.c hash/xxh3_avx2.c \
       hash/xxh3_avx512.c \
       dump/dump.c dump/source.c dump/layers.c dump/refuse.c dump/raw.c dump/elf.c dump/kdump.c \
       dump/lime.c dump/qemu.c dump/proc.c \
       scan/scan.c scan/index.c scan/slots.c scan/spool.c scan/maps.c scan/hot.c scan/tally.c \
       scan/frames.c scan/forked.c scan/series.c scan/group.c scan/pagerec.c scan/domains.c \
       check/forecast.c check/actual.c check/compare.c \
       model/ksm.c model/rbtree.c model/treesim.c model/replay.c model/replay_clock.c model/replay_skip.c model/replay_memory.c \
       model/replay_figures.c model/pace.c model/search.c \
       model/policy.c model/fixed.c model/advisor.c model/ksmtuned.c model/kubevirt.c model/zram.c \
       model/exposure.c \
       compress/codecs.c compress/lzo.c \
       host/root.c host/ksm.c host/process.c host/doctor.c host/memory.c host/kernel.c host/units.c \
       cli/groups.c cli/options.c cli/optparse.c cli/names.c cli/setup.c cli/version.c cli/units.c cli/usage.c \
       report/reports.c report/report_sink.c report/svg.c report/params.c \
       report/write/cell.c report/write/writer.c report/write/csv.c report/write/json.c report/write/table.c \
       report/write/openmetrics.c report/write/settings.c \
       report/figures/summary.c report/figures/pages.c report/figures/regions.c \
       report/figures/bench.c report/figures/histogram.c report/figures/algos.c \
       report/figures/summary_people.c \
       report/contents/top.c report/contents/tree.c report/contents/compress.c \
       report/contents/matrix.c report/contents/contents.c report/contents/exposure.c \
       report/contents/mitigations.c \
       report/series/timeline.c report/series/processes.c report/series/check.c \
       report/series/policies.c report/series/advise.c report/series/volatility.c \
       report/host/doctor.c report/host/numa.c report/host/thp.c

# The musl build alone: glibc's fortified entry points that Debian's
# glibc-built static libraries call (compat/glibc.c says why).
COMPAT_SRCS = compat/glibc.c

OBJS = $(SRCS:%.c=build/%.o) $(COMPAT_SRCS:%.c=build/%.o)
CHECK_OBJS = $(SRCS:%.c=build-check/%.o)

CHECK_CC     = clang
CHECK_CFLAGS = -std=c11 -D_GNU_SOURCE -Wall -Wextra -O1 -g \
               -fsanitize=address,undefined -fno-sanitize-recover=all \
               -fno-omit-frame-pointer -pthread

.PHONY: all test check install clean deps demo bench fuzz fuzz-build deb

all: ksmscan

ksmscan: $(OBJS)
	$(CC) $(LDFLAGS) -o $@ $(OBJS) $(LDLIBS)

# Every build kind compiles the same way into its own folder; -MMD writes
# each object's header dependencies beside it (included at the end).
build/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(CFLAGS_VEC) -MMD -MP -c -o $@ $<

build-check/%.o: %.c
	@mkdir -p $(dir $@)
	$(CHECK_CC) $(CHECK_CFLAGS) $(CFLAGS_VEC) -MMD -MP -c -o $@ $<

build-tsan/%.o: %.c
	@mkdir -p $(dir $@)
	$(CHECK_CC) $(TSAN_CFLAGS) $(CFLAGS_VEC) -MMD -MP -c -o $@ $<

build-fuzz/%.o: %.c
	@mkdir -p $(dir $@)
	$(CHECK_CC) $(FUZZ_CFLAGS) $(CFLAGS_VEC) -MMD -MP -c -o $@ $<

# Each vector build of XXH3 is its own object, in every build kind; hash.c
# picks one at run time.
BUILDS = build build-check build-tsan build-fuzz
$(BUILDS:%=%/hash/xxh3_avx2.o): CFLAGS_VEC = -mavx2
$(BUILDS:%=%/hash/xxh3_avx512.o): CFLAGS_VEC = -mavx512f

build-check/ksmscan: $(CHECK_OBJS)
	$(CHECK_CC) $(CHECK_CFLAGS) -o $@ $(CHECK_OBJS) -lzstd -lz $(LAYER_LIBS) -lm

# The threads under ThreadSanitizer: make check runs the -j tests with it.
TSAN_OBJS = $(SRCS:%.c=build-tsan/%.o)
TSAN_CFLAGS = -std=c11 -D_GNU_SOURCE -Wall -Wextra -O1 -g -pthread -fsanitize=thread

build-tsan/ksmscan: $(TSAN_OBJS)
	$(CHECK_CC) $(TSAN_CFLAGS) -o $@ $(TSAN_OBJS) -lzstd -lz $(LAYER_LIBS) -lm

# Installs what is missing (Debian packages); does nothing when all is there.
deps:
	./scripts/install-deps

# Two live processes holding the same data set, scanned: no input file
# needed, and only the build's packages installed.
demo:
	./scripts/install-deps build
	$(MAKE) ksmscan
	./scripts/demo

# Unit tests in C of code the command line cannot reach alone (tests/unit_*.c).
UNITS = $(patsubst %.c,%,$(wildcard tests/unit_*.c))

# They link the product's objects as an archive: a test takes the members it
# calls (one that includes a .c file itself takes that file's functions).
LIB_SRCS = $(filter-out ksmscan.c,$(SRCS))
build/libksmscan.a: $(LIB_SRCS:%.c=build/%.o) $(COMPAT_SRCS:%.c=build/%.o)
	rm -f $@ && ar rcs $@ $^

build-check/libksmscan.a: $(LIB_SRCS:%.c=build-check/%.o)
	rm -f $@ && ar rcs $@ $^

build/tests/unit_%: tests/unit_%.c build/libksmscan.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -static -o $@ $< build/libksmscan.a \
		$(LDLIBS)

build-check/tests/unit_%: tests/unit_%.c build-check/libksmscan.a
	@mkdir -p $(dir $@)
	$(CHECK_CC) $(CHECK_CFLAGS) -MMD -MP -o $@ $< build-check/libksmscan.a \
		-lzstd -lz $(LAYER_LIBS) -lm

test: deps ksmscan $(UNITS:%=build/%)
	KSMSCAN=./ksmscan KSMSCAN_UNITS="$(UNITS:%=build/%)" $(PYTHON) tests/run_all.py

check: deps build-check/ksmscan build-tsan/ksmscan $(UNITS:%=build-check/%)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	KSMSCAN=./build-check/ksmscan KSMSCAN_UNITS="$(UNITS:%=build-check/%)" \
	$(PYTHON) tests/run_all.py
	TSAN_OPTIONS=halt_on_error=1:exitcode=66 \
	KSMSCAN=./build-tsan/ksmscan $(PYTHON) tests/run_all.py test_checksum_impl test_report_ \
	    test_several_inputs test_invariance test_compress

# What the machine does at best (bench/floor.c), with ksmscan's own hashing.
build/bench/floor: bench/floor.c build/hash/xxh.o build/hash/xxh3_avx2.o \
		build/hash/xxh3_avx512.o
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -static -o $@ $^

bench: ksmscan build/bench/floor
	KSMSCAN=./ksmscan $(PYTHON) bench/compare.py
	KSMSCAN=./ksmscan KSMSCAN_FLOOR=build/bench/floor $(PYTHON) bench/scan_bench.py
	KSMSCAN=./ksmscan $(PYTHON) bench/fleet_bench.py
	KSMSCAN=./ksmscan $(PYTHON) bench/series_bench.py
	KSMSCAN=./ksmscan $(PYTHON) bench/exposure_bench.py
	KSMSCAN=./ksmscan $(PYTHON) bench/units_bench.py
	KSMSCAN=./ksmscan $(PYTHON) bench/frames_bench.py

# Fuzzing: libFuzzer harnesses with ASan and UBSan, FUZZ_SECONDS each.
FUZZ_SECONDS ?= 20
FUZZ_CFLAGS = -std=c11 -D_GNU_SOURCE -g -O1 -pthread \
              -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
FUZZ_LIB_SRCS = $(filter-out ksmscan.c,$(SRCS))
FUZZ_OBJS = $(FUZZ_LIB_SRCS:%.c=build-fuzz/%.o)
FUZZERS = fuzz_elf fuzz_kdump fuzz_lime fuzz_qemu fuzz_auto fuzz_stream fuzz_maps fuzz_options \
          fuzz_replay fuzz_forecast
FUZZ_DUMP_elf = -DFUZZ_FORMAT='"elf"'
FUZZ_DUMP_kdump = -DFUZZ_FORMAT='"kdump"'
FUZZ_DUMP_lime = -DFUZZ_FORMAT='"lime"'
FUZZ_DUMP_qemu = -DFUZZ_FORMAT='"qemu-save"'
FUZZ_DUMP_auto =
FUZZ_DUMP_stream = -DFUZZ_STREAM

build-fuzz/fuzz_%: fuzz/fuzz_dump.c $(FUZZ_OBJS)
	$(CHECK_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(FUZZ_DUMP_$*) -o $@ $< \
		$(FUZZ_OBJS) -lzstd -lz $(LAYER_LIBS) -lm

build-fuzz/fuzz_maps: fuzz/fuzz_maps.c $(filter-out build-fuzz/dump/proc.o,$(FUZZ_OBJS))
	$(CHECK_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $^ -lzstd -lz $(LAYER_LIBS) -lm

build-fuzz/fuzz_options: fuzz/fuzz_options.c $(FUZZ_OBJS)
	$(CHECK_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $^ -lzstd -lz $(LAYER_LIBS) -lm

build-fuzz/fuzz_replay: fuzz/fuzz_replay.c $(FUZZ_OBJS)
	$(CHECK_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $^ -lzstd -lz $(LAYER_LIBS) -lm

build-fuzz/fuzz_forecast: fuzz/fuzz_forecast.c $(FUZZ_OBJS)
	$(CHECK_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $^ -lzstd -lz $(LAYER_LIBS) -lm

fuzz-build: $(FUZZERS:%=build-fuzz/%)

fuzz: fuzz-build
	@for f in $(FUZZERS); do \
		mkdir -p build-fuzz/corpus/$$f; \
		echo "== $$f ($(FUZZ_SECONDS) s)"; \
		build-fuzz/$$f -max_total_time=$(FUZZ_SECONDS) -max_len=262144 \
			-rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
			-artifact_prefix=build-fuzz/$$f- \
			build-fuzz/corpus/$$f fuzz/seeds/$$f 2>&1 | \
			grep -E 'stat::number_of_executed_units|stat::peak_rss|ERROR|SUMMARY|Test unit written|crash-|leak-|timeout-' ; \
		if ls build-fuzz/$$f-crash-* build-fuzz/$$f-leak-* build-fuzz/$$f-timeout-* \
			build-fuzz/$$f-oom-* 2>/dev/null | grep -q .; then \
			echo "$$f: FINDINGS in build-fuzz/"; exit 1; fi; \
	done

COMPDIR_BASH ?= $(PREFIX)/share/bash-completion/completions
COMPDIR_ZSH ?= $(PREFIX)/share/zsh/vendor-completions
# ksmfleet: its package (FLEETDIR/ksmfleet/, every module) and its launcher
# (FLEETDIR/bin/ksmfleet, which puts FLEETDIR on Python's path), linked from
# BINDIR; the same layout as fleet/ in the source.
FLEETDIR ?= $(PREFIX)/share/ksmscan/fleet
# The metrics for node_exporter: systemd's units (systemd reads
# /usr/local/lib/systemd/system too) and the script they run (systemd/).
UNITDIR ?= $(PREFIX)/lib/systemd/system
LIBEXECDIR ?= $(PREFIX)/lib/ksmscan
# The installed paths written into the script and the service.
SUBST = sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@LIBEXECDIR@|$(LIBEXECDIR)|g'

install: ksmscan
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(COMPDIR_BASH) $(DESTDIR)$(COMPDIR_ZSH)
	install -m 755 ksmscan $(DESTDIR)$(BINDIR)/ksmscan
	install -m 644 man/ksmscan.1 man/ksmfleet.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 completions/ksmscan.bash $(DESTDIR)$(COMPDIR_BASH)/ksmscan
	install -m 644 completions/_ksmscan $(DESTDIR)$(COMPDIR_ZSH)/_ksmscan
	install -d $(DESTDIR)$(FLEETDIR)/bin $(DESTDIR)$(FLEETDIR)/ksmfleet
	install -m 755 fleet/bin/ksmfleet $(DESTDIR)$(FLEETDIR)/bin/ksmfleet
	install -m 644 fleet/ksmfleet/*.py $(DESTDIR)$(FLEETDIR)/ksmfleet/
	ln -sfr $(DESTDIR)$(FLEETDIR)/bin/ksmfleet $(DESTDIR)$(BINDIR)/ksmfleet
	install -d $(DESTDIR)$(UNITDIR) $(DESTDIR)$(LIBEXECDIR)
	$(SUBST) systemd/ksmscan-metrics.in > $(DESTDIR)$(LIBEXECDIR)/ksmscan-metrics
	chmod 755 $(DESTDIR)$(LIBEXECDIR)/ksmscan-metrics
	$(SUBST) systemd/ksmscan-metrics.service.in > $(DESTDIR)$(UNITDIR)/ksmscan-metrics.service
	chmod 644 $(DESTDIR)$(UNITDIR)/ksmscan-metrics.service
	install -m 644 systemd/ksmscan-metrics.timer $(DESTDIR)$(UNITDIR)/ksmscan-metrics.timer

# A Debian package of what install puts in place (scripts/make-deb).
VERSION = $(shell sed -n 's/^\#define KSMSCAN_VERSION "\(.*\)"/\1/p' util/version.h)

deb: ksmscan
	rm -rf build/deb
	$(MAKE) -s install DESTDIR=$(CURDIR)/build/deb PREFIX=/usr MANDIR=/usr/share/man
	./scripts/make-deb $(VERSION) build/deb .

clean:
	rm -rf $(BUILDS) ksmscan ksmscan_*.deb

# Header dependencies that -MMD wrote.
-include $(OBJS:.o=.d) $(CHECK_OBJS:.o=.d) $(TSAN_OBJS:.o=.d) $(FUZZ_OBJS:.o=.d) \
	$(UNITS:%=build/%.d) $(UNITS:%=build-check/%.d)
