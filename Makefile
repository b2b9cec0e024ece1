# ss — Slipstream for the shell. Plain Makefile: every cmd/ss-*.c becomes bin/ss-*,
# every lib/*/*.c (lib/README: one folder per subsystem) goes into libss.a, every tests/*.bats runs in `make check`.
#
# Every build artefact is under build/, one directory per variant, so switching variants
# never mixes objects and needs no clean:
#   build/release/   make               (-O2)
#   build/sanitize/  make SANITIZE=1    (ASan+UBSan)
#   build/trace/     make TRACE=1       (-finstrument-functions: each call logged, scripts/calltrace)
# each with obj/ (lib/ and cmd/ objects), lib/libss.a, bin/ss-* and tests/unit; and
#   build/fuzz/      make fuzz, make fuzz-merge: the libFuzzer targets (tests/fuzz/build).
# `make` ends by pointing build/current at the variant it built, and bin is a symlink to
# build/current/bin: bin/ss-* (where the tests, scripts and README find the tools) are
# always the tools of the last variant built, all of one variant. So `make` after
# `make SANITIZE=1` gives the release tools again (relinking nothing if they are up to
# date), and tests that link against the library take build/current/lib/libss.a and the
# flags of the variant build/current names (tests/helpers.bash).
PREFIX   ?= /usr/local
DESTDIR  ?=
CC       ?= cc
OPT      ?= -O2
CFLAGS   += -std=c11 $(OPT) -g -Wall -Wextra -Werror -D_GNU_SOURCE -Ilib
LDLIBS   += -lrdkafka -lsqlite3 -ljq -lavro -ljansson -lcurl -lm -lpthread
ifeq ($(SANITIZE),1)
CFLAGS   += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS  += -fsanitize=address,undefined
VARIANT  := sanitize
else ifeq ($(TRACE),1)
# every lib/ and cmd/ function logs its entry and return (scripts/calltrace-hook.c, linked
# into libss.a); no PIE, so the logged addresses are the symbols' addresses in the tools
CFLAGS   += -finstrument-functions -finstrument-functions-exclude-file-list=/usr/include
LDFLAGS  += -no-pie
VARIANT  := trace
else
VARIANT  := release
endif
OUT      := build/$(VARIANT)
OBJDIR   := $(OUT)/obj
LIBSS    := $(OUT)/lib/libss.a
UNIT     := $(OUT)/tests/unit

LIB_SRC  := $(wildcard lib/*/*.c)
LIB_HDR  := $(wildcard lib/*/*.h)
LIB_OBJ  := $(LIB_SRC:%.c=$(OBJDIR)/%.o)
ifeq ($(VARIANT),trace)
LIB_OBJ  += $(OBJDIR)/scripts/calltrace-hook.o
endif
CMD_SRC  := $(wildcard cmd/ss-*.c)
TOOLS    := $(CMD_SRC:cmd/%.c=$(OUT)/bin/%)
MANPAGES := $(wildcard man/*.1 man/*.7)

# Debian packages the build, the tests and the demo need (make deps installs them).
DEB_PKGS := build-essential librdkafka-dev libsqlite3-dev libjq-dev jq sqlite3 \
            bats bats-assert bats-support kcat bc time valgrind python3 python3-venv mandoc \
            libavro-dev libjansson-dev libcurl4-openssl-dev openssl bsdextrautils man-db \
            openjdk-17-jdk-headless maven curl clang libclang-rt-14-dev
# Kafka and a schema registry for the integration suite: from Maven Central, by Maven
# (scripts/kafka-fetch, scripts/registry-fetch).

# keep objects between builds (make would delete them as intermediates)
.SECONDARY:

.PHONY: all clean install uninstall deps check check-fast check-integration demo \
        bench bench-deps torture fuzz fuzz-merge current FORCE
all: $(TOOLS) $(UNIT) current

# build/current -> the variant just built; bin -> build/current/bin (a real bin/ directory
# of an older checkout is replaced by the link). The library is named too: the tests link
# against it, and a missing one is remade (all targets are .SECONDARY).
current: $(TOOLS) $(UNIT) $(LIBSS)
	@ln -sfn $(VARIANT) build/current
	@[ -L bin ] || { rm -rf bin; ln -s build/current/bin bin; }

# `make bin/ss-asof` (bench/) builds that tool of the variant and makes it current
bin/%: $(OUT)/bin/% FORCE
	@ln -sfn $(VARIANT) build/current
	@[ -L bin ] || { rm -rf bin; ln -s build/current/bin bin; }
FORCE:

$(OBJDIR)/%.o: %.c $(LIB_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(LIBSS): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $(LIB_OBJ)

$(OUT)/bin/%: $(OBJDIR)/cmd/%.o $(LIBSS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(LIBSS) $(LDLIBS)

clean:
	rm -rf build bin tests/.tmp

# installs the tools of the variant asked for (release unless SANITIZE=1) without making
# it current: bin/ stays what the last `make` built
install: $(TOOLS) $(UNIT)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man7
	install -m 755 $(TOOLS) $(DESTDIR)$(PREFIX)/bin/
	for m in $(MANPAGES); do s=$${m##*.}; install -m 644 $$m $(DESTDIR)$(PREFIX)/share/man/man$$s/; done

uninstall:
	for t in $(TOOLS); do rm -f $(DESTDIR)$(PREFIX)/bin/$${t##*/}; done
	for m in $(MANPAGES); do s=$${m##*.}; rm -f $(DESTDIR)$(PREFIX)/share/man/man$$s/$${m#man/}; done

deps:
	@scripts/deps $(DEB_PKGS)

check: deps all
	bats --timing tests/
	@if [ -n "$$CI" ] || command -v java >/dev/null 2>&1; then \
	  $(MAKE) --no-print-directory check-integration; \
	else echo "make check: no java here, integration suite (real Kafka) skipped"; fi

check-fast: all
	bats tests/

check-integration: all
	@if [ -d tests/integration ]; then bats --timing tests/integration/; fi

demo: deps all
	scripts/demo

bench-deps: deps all
	bench/deps

bench: bench-deps
	bench/run

torture: all
	tests/torture/run

fuzz:
	tests/fuzz/run $(FUZZ_SECONDS)

# Minimize tests/fuzz/corpus/ (libFuzzer -merge=1): named seeds and regressions stay, of
# the auto-named inputs only those adding coverage (tests/fuzz/merge).
fuzz-merge:
	tests/fuzz/merge

# Unit tests of lib/ on its own (run by tests/lib.bats as build/current/tests/unit).
$(UNIT): tests/unit/unit.c $(LIBSS) $(LIB_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBSS) $(LDLIBS)
