# ksmscan — see README.md. `make` builds a static binary with musl.
#
#   make            ./ksmscan (static, musl-gcc, stripped)
#   make demo       install what is missing, build, scan two live processes
#   make test       install what is missing, build, run the suites (the tool's
#                   own; no service is installed or started)
#   make test-apps  the tests that run real applications (Chromium, LibreOffice,
#                   Redis, PostgreSQL, node_exporter), installed with their
#                   services kept from starting (scripts/install-deps apps)
#   make check      the suites again, built with clang ASan + UBSan, and the
#                   threaded ones with TSan
#   make install    PREFIX=/usr/local DESTDIR= MANDIR=$(PREFIX)/share/man
#                   UNITDIR=$(PREFIX)/lib/systemd/system PYTHONDIR=(below)
#   make uninstall  removes what make install put, with the same variables
#   make deb        build/ksmscan_VERSION_amd64.deb
#   make cross-arm64  the objects for arm64 (and the binary, libraries there)
#   make clean

PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
MANDIR  ?= $(PREFIX)/share/man
PYTHON  ?= /usr/bin/python3

CC      = musl-gcc
# The compiler that knows where Debian put the libraries and headers (their
# multiarch folder, whatever the machine): musl-gcc's own search path has
# musl's only.
LIB_CC  ?= gcc
MULTIARCH := $(shell $(LIB_CC) -print-multiarch)
# Debian's headers for xxHash, zstd and zlib come after musl's own.
CPPFLAGS += -idirafter /usr/include $(if $(MULTIARCH),-idirafter /usr/include/$(MULTIARCH))
CFLAGS  ?= -O2
CFLAGS  += -std=c11 -D_GNU_SOURCE -Wall -Wextra -pipe -pthread
LDFLAGS += -static -s -pthread
# A static library by its full path, as LIB_CC (or the compiler given) finds
# it; a bare name when it is not installed: zstd and gzip;
# the compression layers besides them (dump/layers.c): xz, bzip2, lz4;
# jansson, for the JSON of a forecast read back by --check.
static_lib = $(strip $(foreach p,$(shell $(or $(2),$(LIB_CC)) -print-file-name=lib$(1).a),\
                 $(if $(findstring /,$(p)),$(abspath $(p)),$(p))))
LIBS    = zstd z lzma bz2 lz4 jansson
STATIC_LIBS := $(foreach l,$(LIBS),$(call static_lib,$(l)))
LDLIBS  += $(STATIC_LIBS)
# The same libraries for the clang builds (sanitizers, fuzzing).
LAYER_LIBS = -llzma -lbz2 -llz4 -ljansson

# The sources are found, not listed: every .c file of a room (docs/
# architecture.md) and of its subfolders (report/write/ ...), and ksmscan.c.
# A new file in a room is built with no edit here.
ROOMS = util hash dump scan check model compress host cli report
SRCS  = ksmscan.c $(sort $(wildcard $(ROOMS:%=%/*.c) $(ROOMS:%=%/*/*.c)))
# The vector builds of XXH3 (hash/xxh3_vec.h) are x86-64's only: the
# machine the compiler builds for, from its triplet (x86_64-linux-gnu).
VEC_SRCS = hash/xxh3_avx2.c hash/xxh3_avx512.c
ARCH ?= $(firstword $(subst -, ,$(shell $(CC) -dumpmachine)))
ifneq ($(ARCH),x86_64)
SRCS := $(filter-out $(VEC_SRCS),$(SRCS))
endif

# The musl build alone: glibc's fortified entry points that Debian's
# glibc-built static libraries call (compat/glibc.c says why).
COMPAT_SRCS = compat/glibc.c

OBJS = $(SRCS:%.c=build/%.o) $(COMPAT_SRCS:%.c=build/%.o)
CHECK_OBJS = $(SRCS:%.c=build-check/%.o)

CHECK_CC     = clang
CHECK_CFLAGS = -std=c11 -D_GNU_SOURCE -Wall -Wextra -O1 -g \
               -fsanitize=address,undefined -fno-sanitize-recover=all \
               -fno-omit-frame-pointer -pthread

.PHONY: all test test-apps check install uninstall clean deps demo bench fuzz fuzz-build deb \
	cross-arm64

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
BUILDS = build build-check build-tsan build-fuzz build-arm64
$(BUILDS:%=%/hash/xxh3_avx2.o): CFLAGS_VEC = -mavx2
$(BUILDS:%=%/hash/xxh3_avx512.o): CFLAGS_VEC = -mavx512f

build-check/ksmscan: $(CHECK_OBJS)
	$(CHECK_CC) $(CHECK_CFLAGS) -o $@ $(CHECK_OBJS) -lzstd -lz $(LAYER_LIBS) -lm

# The threads under ThreadSanitizer: make check runs the -j tests with it.
TSAN_OBJS = $(SRCS:%.c=build-tsan/%.o)
TSAN_CFLAGS = -std=c11 -D_GNU_SOURCE -Wall -Wextra -O1 -g -pthread -fsanitize=thread

build-tsan/ksmscan: $(TSAN_OBJS)
	$(CHECK_CC) $(TSAN_CFLAGS) -o $@ $(TSAN_OBJS) -lzstd -lz $(LAYER_LIBS) -lm

# arm64 with Debian's cross compiler (gcc-aarch64-linux-gnu), glibc's static
# libc (Debian has no musl for cross builds): every object into build-arm64/,
# and the binary when the arm64 static libraries are installed
# (dpkg --add-architecture arm64; libzstd-dev:arm64 ... of the BUILD list).
CROSS_CC = aarch64-linux-gnu-gcc
CROSS_MULTIARCH := $(shell $(CROSS_CC) -print-multiarch 2>/dev/null)
CROSS_CPPFLAGS = -idirafter /usr/include \
                 $(if $(CROSS_MULTIARCH),-idirafter /usr/include/$(CROSS_MULTIARCH))
ARM64_SRCS = $(filter-out $(VEC_SRCS),$(SRCS))
ARM64_OBJS = $(ARM64_SRCS:%.c=build-arm64/%.o)
ARM64_LIBS = $(foreach l,$(LIBS),$(call static_lib,$(l),$(CROSS_CC)))

build-arm64/%.o: %.c
	@mkdir -p $(dir $@)
	$(CROSS_CC) $(CROSS_CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

build-arm64/ksmscan: $(ARM64_OBJS)
	$(CROSS_CC) $(LDFLAGS) -o $@ $(ARM64_OBJS) $(ARM64_LIBS) -lm

cross-arm64: $(ARM64_OBJS)
	@if [ -z "$(filter-out /%,$(ARM64_LIBS))" ]; then $(MAKE) build-arm64/ksmscan; \
	else echo "cross-arm64: objects built; not linked, arm64 static libraries" \
		"missing: $(filter-out /%,$(ARM64_LIBS))"; fi

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

# The suites holding tests of real applications (ksmtest.app(); a live
# suites: tests/test_apps_live.py, tests/test_systemd_boot_live.py). make test skips those tests when the
# application is missing; here they run alone (KSMSCAN_APPS=1: only them,
# and a missing application fails).
APP_SUITES = test_apps_live test_guests_live test_hostile_input test_monitoring test_output test_prometheus_rules \
	test_systemd_boot_live
test-apps: deps ksmscan
	./scripts/install-deps apps
	KSMSCAN_APPS=1 KSMSCAN=./ksmscan $(PYTHON) tests/run_all.py $(APP_SUITES)

# The release build too: the suites install it (make install) and the demo
# runs it, whichever build they test.
check: deps ksmscan build-check/ksmscan build-tsan/ksmscan $(UNITS:%=build-check/%)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	KSMSCAN=./build-check/ksmscan KSMSCAN_UNITS="$(UNITS:%=build-check/%)" \
	$(PYTHON) tests/run_all.py
	TSAN_OPTIONS=halt_on_error=1:exitcode=66 \
	KSMSCAN=./build-tsan/ksmscan $(PYTHON) tests/run_all.py test_checksum_impl test_report_ \
	    test_several_inputs test_invariance test_compress test_search

# What the machine does at best (bench/floor.c), with ksmscan's own hashing.
build/bench/floor: bench/floor.c build/hash/xxh.o build/hash/xxh3_avx2.o \
		build/hash/xxh3_avx512.o
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -static -o $@ $^

# A generated series replayed whole and sampled (tests/series_gen.h).
build/bench/sample_bench: bench/sample_bench.c tests/series_gen.h build/libksmscan.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -static -o $@ $< build/libksmscan.a -lm

bench: ksmscan build/bench/floor build/bench/sample_bench
	KSMSCAN=./ksmscan $(PYTHON) bench/compare.py
	KSMSCAN=./ksmscan KSMSCAN_FLOOR=build/bench/floor $(PYTHON) bench/scan_bench.py
	KSMSCAN=./ksmscan PYTHONPATH=fleet $(PYTHON) bench/fleet_bench.py
	PYTHONPATH=fleet $(PYTHON) bench/fleet_refusal_bench.py
	KSMSCAN=./ksmscan $(PYTHON) bench/series_bench.py
	KSMSCAN=./ksmscan KSMSCAN_SAMPLE_BENCH=build/bench/sample_bench $(PYTHON) bench/sample_bench.py
	KSMSCAN=./ksmscan $(PYTHON) bench/record_bench.py
	KSMSCAN=./ksmscan $(PYTHON) bench/exposure_bench.py
	KSMSCAN=./ksmscan $(PYTHON) bench/units_bench.py
	KSMSCAN=./ksmscan $(PYTHON) bench/frames_bench.py
	KSMSCAN=./ksmscan $(PYTHON) bench/sparse_bench.py

# Fuzzing: libFuzzer harnesses with ASan and UBSan, FUZZ_SECONDS each.
FUZZ_SECONDS ?= 20
FUZZ_CFLAGS = -std=c11 -D_GNU_SOURCE -g -O1 -pthread \
              -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
FUZZ_LIB_SRCS = $(filter-out ksmscan.c,$(SRCS))
FUZZ_OBJS = $(FUZZ_LIB_SRCS:%.c=build-fuzz/%.o)
FUZZERS = fuzz_elf fuzz_kdump fuzz_lime fuzz_qemu fuzz_auto fuzz_stream fuzz_maps fuzz_options \
          fuzz_replay fuzz_forecast fuzz_record
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

build-fuzz/fuzz_record: fuzz/fuzz_record.c $(FUZZ_OBJS)
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
# ksmfleet: its package where Debian's python3 finds it (the system's
# /usr/lib/python3/dist-packages for PREFIX=/usr, the .deb; else
# PREFIX/lib/python3.X/dist-packages, where pip puts packages in /usr/local),
# and a launcher in BINDIR running `python3 -m ksmfleet`.
PYTHONDIR ?= $(PREFIX)/lib/$(if $(filter /usr,$(PREFIX)),python3,$(shell \
	$(PYTHON) -c 'import sys; print("python%d.%d" % sys.version_info[:2])'))/dist-packages
# The metrics for node_exporter: systemd's units (systemd reads
# /usr/local/lib/systemd/system too) and the script they run (systemd/).
UNITDIR ?= $(PREFIX)/lib/systemd/system
LIBEXECDIR ?= $(PREFIX)/lib/ksmscan
# The installed paths written into the script and the service.
SUBST = sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@LIBEXECDIR@|$(LIBEXECDIR)|g' \
	-e 's|@PYTHON@|$(PYTHON)|g'

install: ksmscan
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(COMPDIR_BASH) $(DESTDIR)$(COMPDIR_ZSH)
	install -m 755 ksmscan $(DESTDIR)$(BINDIR)/ksmscan
	install -m 644 man/ksmscan.1 man/ksmfleet.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 completions/ksmscan.bash $(DESTDIR)$(COMPDIR_BASH)/ksmscan
	install -m 644 completions/_ksmscan $(DESTDIR)$(COMPDIR_ZSH)/_ksmscan
	install -d $(DESTDIR)$(PYTHONDIR)/ksmfleet
	install -m 644 fleet/ksmfleet/*.py $(DESTDIR)$(PYTHONDIR)/ksmfleet/
	$(SUBST) fleet/ksmfleet.in > $(DESTDIR)$(BINDIR)/ksmfleet
	chmod 755 $(DESTDIR)$(BINDIR)/ksmfleet
	install -d $(DESTDIR)$(UNITDIR) $(DESTDIR)$(LIBEXECDIR)
	$(SUBST) systemd/ksmscan-metrics.in > $(DESTDIR)$(LIBEXECDIR)/ksmscan-metrics
	chmod 755 $(DESTDIR)$(LIBEXECDIR)/ksmscan-metrics
	$(SUBST) systemd/ksmscan-metrics.service.in > $(DESTDIR)$(UNITDIR)/ksmscan-metrics.service
	chmod 644 $(DESTDIR)$(UNITDIR)/ksmscan-metrics.service
	install -m 644 systemd/ksmscan-metrics.timer $(DESTDIR)$(UNITDIR)/ksmscan-metrics.timer
	install -d $(DESTDIR)$(RULESDIR)
	install -m 644 monitoring/ksmscan.rules.yml $(DESTDIR)$(RULESDIR)/

# Every file install puts, for uninstall; the folders of ksmscan's own
# (ksmfleet's package, LIBEXECDIR) go too once empty, the shared ones stay.
# The Prometheus rules (monitoring/), for a Prometheus to load.
RULESDIR ?= $(PREFIX)/share/ksmscan/prometheus
INSTALLED = $(BINDIR)/ksmscan $(BINDIR)/ksmfleet $(MANDIR)/man1/ksmscan.1 \
	$(MANDIR)/man1/ksmfleet.1 $(COMPDIR_BASH)/ksmscan $(COMPDIR_ZSH)/_ksmscan \
	$(patsubst fleet/%,$(PYTHONDIR)/%,$(wildcard fleet/ksmfleet/*.py)) \
	$(LIBEXECDIR)/ksmscan-metrics $(UNITDIR)/ksmscan-metrics.service \
	$(UNITDIR)/ksmscan-metrics.timer $(RULESDIR)/ksmscan.rules.yml

# No ksmscan needed: uninstall builds nothing.
uninstall:
	rm -f $(INSTALLED:%=$(DESTDIR)%)
	rm -rf $(DESTDIR)$(PYTHONDIR)/ksmfleet/__pycache__
	rmdir $(DESTDIR)$(PYTHONDIR)/ksmfleet $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(RULESDIR) \
		$(DESTDIR)$(PREFIX)/share/ksmscan 2>/dev/null || true

# A Debian package of what install puts in place (scripts/make-deb), in
# build/ as every other output.
VERSION = $(shell sed -n 's/^\#define KSMSCAN_VERSION "\(.*\)"/\1/p' util/version.h)

deb: ksmscan
	rm -rf build/deb build/ksmscan_*.deb
	$(MAKE) -s install DESTDIR=$(CURDIR)/build/deb PREFIX=/usr MANDIR=/usr/share/man
	./scripts/make-deb $(VERSION) build/deb build

clean:
	rm -rf $(BUILDS) ksmscan

# Header dependencies that -MMD wrote.
-include $(OBJS:.o=.d) $(ARM64_OBJS:.o=.d) $(CHECK_OBJS:.o=.d) $(TSAN_OBJS:.o=.d) $(FUZZ_OBJS:.o=.d) \
	$(UNITS:%=build/%.d) $(UNITS:%=build-check/%.d)
