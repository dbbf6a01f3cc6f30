# lab: see README.md. `make` builds ./lab, `make test` runs every test that
# can run on this machine, `make deps` installs what they need (Debian 12).

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share/lab
MANDIR ?= $(PREFIX)/share/man
COMPLDIR ?= $(PREFIX)/share/bash-completion/completions
VERSION := 0.1

CC ?= cc
PKGS := yaml-0.1 libcrypto libvirt gsl sqlite3 libarchive jansson
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -lyaml -lcrypto -lvirt -lgsl -lgslcblas -lsqlite3 -larchive -ljansson)
WARN := -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wno-format-nonliteral -Wmissing-prototypes \
	-Wstrict-prototypes -Wvla -Wno-missing-field-initializers
BASE_CFLAGS := -std=gnu11 $(WARN) -D_GNU_SOURCE -Ilab $(PKG_CFLAGS) \
	-DLAB_VERSION='"$(VERSION)"' -DLAB_DATADIR='"$(DATADIR)"'
CFLAGS ?= -O2 -g
LIBS := $(PKG_LIBS) -lm
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

LIB_SRC := $(sort $(wildcard lab/util/*.c lab/spec/*.c lab/plan/*.c lab/kernel/*.c lab/image/*.c lab/vm/*.c lab/ssh/*.c \
	lab/result/*.c lab/engine/*.c lab/store/*.c lab/host/*.c lab/doctor/*.c lab/cache/*.c))
CMD_SRC := lab/main.c $(sort $(wildcard lab/cmd-*.c))
HDRS := $(wildcard lab/*.h lab/*/*.h)
UNIT_SRC := $(sort $(wildcard tests/unit/test-*.c))

B := build/release
A := build/asan
LIB_OBJ := $(LIB_SRC:%.c=$(B)/%.o)
CMD_OBJ := $(CMD_SRC:%.c=$(B)/%.o)
ALIB_OBJ := $(LIB_SRC:%.c=$(A)/%.o)
ACMD_OBJ := $(CMD_SRC:%.c=$(A)/%.o)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(A)/tests/%)

# The binary is build/lab: ./lab is the source folder.
LAB_BIN := build/lab
# The insn monitor's QEMU TCG plugin (lab/plugin/lab-insn.c), loaded by QEMU, not by lab.
PLUGIN := build/lib/lab-insn.so

.PHONY: all test test-full test-slow bench fuzz deps install uninstall clean regen quick docs
all: $(LAB_BIN) $(PLUGIN)

$(LAB_BIN): $(LIB_OBJ) $(CMD_OBJ)
	$(CC) $(CFLAGS) -o $@ $^ $(LIBS)

$(PLUGIN): lab/plugin/lab-insn.c lab/plugin/qemu-plugin-abi.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(WARN) -D_GNU_SOURCE $(CFLAGS) -fPIC -shared -fvisibility=hidden -o $@ $< -lpthread

$(B)/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -c -o $@ $<

$(A)/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -O1 -g $(SAN) -c -o $@ $<

$(A)/bin/lab: $(ALIB_OBJ) $(ACMD_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(SAN) -o $@ $^ $(LIBS)

$(A)/tests/%: tests/unit/%.c $(ALIB_OBJ) tests/unit/unit.h
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -Wno-missing-prototypes -O1 -g $(SAN) -o $@ $< $(ALIB_OBJ) $(LIBS) -lcmocka

# Benchmark programs: bench/<name>.c against the release library, run by
# their bench/<name> script.
build/bench/%: bench/%.c $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -Wno-missing-prototypes $(CFLAGS) -o $@ $< $(LIB_OBJ) $(LIBS)

# Fuzz targets: tests/fuzz/fuzz-<name>.c, seeds and regression inputs in
# tests/fuzz/corpus-<name>/, a libFuzzer dictionary in tests/fuzz/fuzz-<name>.dict
# when there is one. Adding the file adds the target: its gcc replay, its
# clang fuzzer, `make fuzz` and t0200 all follow this list.
FUZZ_NAMES := $(sort $(patsubst tests/fuzz/fuzz-%.c,%,$(wildcard tests/fuzz/fuzz-*.c)))
F := build/fuzz
FUZZ_CC ?= clang
FUZZ_BIN := $(FUZZ_NAMES:%=$(F)/fuzz-%)
FUZZ_REPLAY := $(FUZZ_NAMES:%=$(A)/fuzz-replay-%)
FLIB_OBJ := $(LIB_SRC:%.c=$(F)/obj/%.o)

# Replays a committed corpus through its target under gcc's ASan+UBSan
# (no libFuzzer): $(A)/fuzz-replay-<name> DIR|FILE...
.PHONY: $(A)/fuzz-replay fuzz-build
$(A)/fuzz-replay: $(FUZZ_REPLAY)
$(A)/fuzz-replay-%: tests/fuzz/fuzz-%.c tests/fuzz/replay.c $(ALIB_OBJ)
	$(CC) $(BASE_CFLAGS) -Wno-missing-prototypes -O1 -g $(SAN) -o $@ $^ $(LIBS)

# The fuzzers (clang's libFuzzer). The library is compiled once, with
# coverage, for all of them; `make test` builds them so a clang-only break fails.
fuzz-build: $(FUZZ_BIN)
$(F)/obj/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(BASE_CFLAGS) -O1 -g -fsanitize=fuzzer-no-link,address,undefined -c -o $@ $<
$(F)/fuzz-%: tests/fuzz/fuzz-%.c $(FLIB_OBJ)
	$(FUZZ_CC) $(BASE_CFLAGS) -Wno-missing-prototypes -O1 -g -fsanitize=fuzzer,address,undefined \
		-o $@ $< $(FLIB_OBJ) $(LIBS)

# make fuzz [FUZZ_SECONDS=N] [FUZZ_TARGET=name] [FUZZ_FLAGS=...]: N seconds for
# each target; new inputs go to $(F)/new-<name>, crashers to $(F)/artifacts-<name>/.
FUZZ_SECONDS ?= 60
FUZZ_TARGET ?= $(FUZZ_NAMES)
FUZZ_MAX_LEN ?= 4096
FUZZ_FLAGS ?=
fuzz: $(FUZZ_TARGET:%=$(F)/fuzz-%)
	@set -e; for t in $(FUZZ_TARGET); do \
		mkdir -p $(F)/new-$$t $(F)/artifacts-$$t; \
		dict=; [ ! -f tests/fuzz/fuzz-$$t.dict ] || dict=-dict=tests/fuzz/fuzz-$$t.dict; \
		echo "fuzz-$$t: $(FUZZ_SECONDS) s"; \
		$(F)/fuzz-$$t -max_total_time=$(FUZZ_SECONDS) -max_len=$(FUZZ_MAX_LEN) $$dict \
			-artifact_prefix=$(F)/artifacts-$$t/ $(FUZZ_FLAGS) $(F)/new-$$t tests/fuzz/corpus-$$t; \
	done

# The default tier: every unit, golden, fuzz-replay and CLI test, and one
# real-VM happy path per capability (README: Tests).
test: $(A)/bin/lab $(UNIT_BIN) $(FUZZ_REPLAY) $(FUZZ_BIN) $(LAB_BIN) $(PLUGIN)
	@LAB=$(CURDIR)/$(A)/bin/lab LAB_RELEASE=$(CURDIR)/$(LAB_BIN) LAB_BUILD=$(CURDIR)/$(A) LAB_FUZZ=$(CURDIR)/$(F) \
		tests/run-all $(UNIT_BIN) $(FUZZ_REPLAY) tests/t/t[0-9]*.sh

# The full tier: make test, the tests that need FULL (repetitions, fault
# paths), the files of tests/full/ (the bench image's workloads) and the
# full builds of every shipped variant (tests/slow/).
# make test-full TESTS="FILE..." runs just those files in the full tier.
TESTS ?= $(UNIT_BIN) $(FUZZ_REPLAY) $(wildcard tests/t/t[0-9]*.sh tests/full/t[0-9]*.sh tests/slow/s[0-9]*.sh)
test-full: $(A)/bin/lab $(UNIT_BIN) $(FUZZ_REPLAY) $(FUZZ_BIN) $(LAB_BIN) $(PLUGIN)
	@LAB_TEST_FULL=1 LAB=$(CURDIR)/$(A)/bin/lab LAB_RELEASE=$(CURDIR)/$(LAB_BIN) LAB_BUILD=$(CURDIR)/$(A) \
		LAB_FUZZ=$(CURDIR)/$(F) tests/run-all $(TESTS)

# Full builds of every variant of the shipped lab.yaml alone (part of
# make test-full).
test-slow: $(A)/bin/lab $(LAB_BIN)
	@LAB=$(CURDIR)/$(A)/bin/lab LAB_RELEASE=$(CURDIR)/$(LAB_BIN) LAB_BUILD=$(CURDIR)/$(A) \
		tests/run-all tests/slow/s[0-9]*.sh

# Figures, printed; never asserted.
bench: $(LAB_BIN) $(PLUGIN) build/bench/shard-import build/bench/mann-whitney build/bench/bisect-plan
	bench/kernel-build
	bench/ccache-modes
	bench/image-boot
	bench/report
	bench/judge
	bench/mann-whitney
	bench/monitors
	bench/insn
	bench/placement
	bench/icount
	bench/shard-import
	bench/site
	bench/bisect-plan

# Rewrite golden files from the current output (then review the diff).
regen: $(A)/bin/lab
	LAB_TEST_REGENERATE=1 LAB=$(CURDIR)/$(A)/bin/lab tests/t/t0100-golden.sh

# docs/lab.1's OPTIONS and the bash completion's option lists come from the
# option tables in lab/cmd-*.c; both files are committed, t0400 fails when
# they and the tables disagree, and this rewrites them.
docs: $(LAB_BIN)
	docs/gen-docs $(LAB_BIN)

DEB_PKGS := build-essential pkg-config libyaml-dev libssl-dev libcmocka-dev clang libclang-rt-14-dev \
	valgrind python3 perl groff-base git ccache bc flex bison libelf-dev dwarves cpio kmod \
	linux-source-6.1 libvirt-dev libvirt-daemon-system libvirt-daemon-driver-qemu libvirt-clients libxml2-utils \
	mmdebstrap qemu-utils qemu-system-x86 genisoimage cloud-init openssh-client openssh-server busybox-static e2fsprogs \
	shellcheck libsqlite3-dev libgsl-dev libarchive-dev libjansson-dev zstd chromium slurm-wlm munge universal-ctags
deps:
	@missing=""; for p in $(DEB_PKGS); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	else echo "all Debian packages present"; fi

install: $(LAB_BIN) $(PLUGIN)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(COMPLDIR) $(DESTDIR)$(DATADIR)/lib
	install -m 755 $(LAB_BIN) $(DESTDIR)$(BINDIR)/lab
	install -m 644 $(PLUGIN) $(DESTDIR)$(DATADIR)/lib/lab-insn.so
	install -m 644 docs/lab.1 $(DESTDIR)$(MANDIR)/man1/lab.1
	install -m 644 docs/lab.bash-completion $(DESTDIR)$(COMPLDIR)/lab
	install -m 644 lab.yaml $(DESTDIR)$(DATADIR)/lab.yaml
	cp -R images kernels workloads $(DESTDIR)$(DATADIR)/

uninstall:
	rm -rf $(DESTDIR)$(BINDIR)/lab $(DESTDIR)$(MANDIR)/man1/lab.1 $(DESTDIR)$(COMPLDIR)/lab $(DESTDIR)$(DATADIR)

clean:
	rm -rf build

# The README's first command: validate the shipped lab.yaml, then run the
# quick experiment end to end (its kernels and image built when missing)
# and print its report. Exit 1 only when a verdict contradicts an
# expectation (lab.1, EXIT STATUS). Its kernels are the test kernel
# (tinyconfig + kernels/configs/test.config: every require: of base and
# what quick's workloads and monitors use, both built cold in 15 min 03 s
# here, base alone 25-32 min with the experiments' config), the same builds make test uses; where KVM does not work it
# runs as quick-insn (lab.yaml: without-kvm), whose insn monitor loads
# lab's QEMU plugin, built here too.
QUICK_KERNEL := --set kernel_start=tinyconfig --set kernel_config=kernels/configs/test.config
quick: $(LAB_BIN) $(PLUGIN)
	$(LAB_BIN) $(QUICK_KERNEL) validate
	$(LAB_BIN) $(QUICK_KERNEL) run quick
