# ss — Slipstream for the shell. Plain Makefile: every cmd/ss-*.c becomes bin/ss-*,
# every lib/*.c goes into lib/libss.a, every tests/*.bats runs in `make check`.
PREFIX   ?= /usr/local
DESTDIR  ?=
CC       ?= cc
OPT      ?= -O2
CFLAGS   += -std=c11 $(OPT) -g -Wall -Wextra -Werror -D_GNU_SOURCE -Ilib
LDLIBS   += -lrdkafka -lsqlite3 -ljq -lavro -ljansson -lcurl -lm -lpthread
ifeq ($(SANITIZE),1)
CFLAGS   += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS  += -fsanitize=address,undefined
VARIANT  := san
else
VARIANT  := rel
endif
OBJDIR   := build/$(VARIANT)

LIB_SRC  := $(wildcard lib/*.c)
LIB_OBJ  := $(LIB_SRC:lib/%.c=$(OBJDIR)/lib/%.o)
CMD_SRC  := $(wildcard cmd/ss-*.c)
TOOLS    := $(CMD_SRC:cmd/%.c=bin/%)
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
        bench bench-deps torture fuzz
all: $(TOOLS) build/tests/unit

# A variant switch (SANITIZE=1 and back) must relink every tool: the stamp file of the
# variant is renewed at parse time when the variant changes, and the library depends on it.
$(shell [ -f build/variant.$(VARIANT) ] || { mkdir -p build; rm -f build/variant.*; touch build/variant.$(VARIANT); })

$(OBJDIR)/lib/%.o: lib/%.c $(wildcard lib/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(OBJDIR)/cmd/%.o: cmd/%.c $(wildcard lib/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

lib/libss.a: $(LIB_OBJ) build/variant.$(VARIANT)
	rm -f $@
	ar rcs $@ $(LIB_OBJ)

bin/%: $(OBJDIR)/cmd/%.o lib/libss.a
	@mkdir -p bin
	$(CC) $(LDFLAGS) -o $@ $< lib/libss.a $(LDLIBS)

clean:
	rm -rf build bin lib/libss.a tests/.tmp

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man7
	install -m 755 $(TOOLS) $(DESTDIR)$(PREFIX)/bin/
	for m in $(MANPAGES); do s=$${m##*.}; install -m 644 $$m $(DESTDIR)$(PREFIX)/share/man/man$$s/; done

uninstall:
	for t in $(TOOLS); do rm -f $(DESTDIR)$(PREFIX)/bin/$${t#bin/}; done
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

# Unit tests of lib/ on its own (run by tests/lib.bats).
build/tests/unit: tests/unit/unit.c lib/libss.a
	@mkdir -p build/tests
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< lib/libss.a $(LDLIBS)
