#!/usr/bin/env bats
# Every EXAMPLES block of every man page runs as written: "$ command" lines run in a
# scratch directory (stderr joined to stdout), the lines after them are the expected output.
load helpers
bats_require_minimum_version 1.5.0

# examples PAGE: the literal blocks of the EXAMPLES section, "\e" unescaped.
examples() {
	awk '/^\.Sh EXAMPLES/ {ex=1; next} /^\.Sh / {ex=0} ex && /^\.Bd -literal/ {lit=1; next}
	     ex && /^\.Ed/ {lit=0; print "@@END"; next} ex && lit {print}' "$1" | sed 's/\\e/\\/g; s/\\&//g'
}

# run_examples PAGE: run each block; fail on the first difference.
run_examples() {
	local cmd= want= got n=0
	cd "$T"
	flush() {
		[ -n "$cmd" ] || return 0
		# 3>&-: what an example leaves in the background (a mock cluster fed by
		# `sleep 60 |`) must not hold bats' report open after the test
		got=$(sh -c "$cmd" 2>&1 3>&-)
		if [ "$got" != "$want" ]; then
			printf 'example: %s\nwant:\n%s\ngot:\n%s\n' "$cmd" "$want" "$got" >&2
			return 1
		fi
		n=$((n + 1))
	}
	while IFS= read -r line; do
		case $line in
		'$ '*) flush || return 1; cmd=${line#\$ }; want= ;;
		@@END) flush || return 1; cmd= ;;
		*) want=${want:+$want$'\n'}$line ;;
		esac
	done < <(examples "$1")
	echo "$n examples ran" >&3
	[ "$n" -gt 0 ]
}

@test "man ss-cache(1): the EXAMPLES run as written" {
	run_examples "$ROOT/man/ss-cache.1"
}

@test "man ss-asof(1): the EXAMPLES run as written" {
	run_examples "$ROOT/man/ss-asof.1"
}

@test "man ss-checkpoint(1): the EXAMPLES run as written" {
	run_examples "$ROOT/man/ss-checkpoint.1"
}

@test "man ss(7): the EXAMPLES run as written" {
	run_examples "$ROOT/man/ss.7"
}

@test "man ss-consume(1): the EXAMPLES run as written" {
	run_examples "$ROOT/man/ss-consume.1"
}

@test "man ss-produce(1): the EXAMPLES run as written" {
	run_examples "$ROOT/man/ss-produce.1"
}

@test "man ss-mock-broker(1): the EXAMPLES run as written" {
	run_examples "$ROOT/man/ss-mock-broker.1"
}

@test "every man page is well-formed mdoc (mandoc -T lint, or groff)" {
	for m in "$ROOT"/man/*.[17]; do
		if command -v mandoc >/dev/null; then
			run mandoc -T lint -W warning "$m"
		else
			run sh -c "groff -mandoc -Tutf8 -ww -z '$m' 2>&1"
		fi
		assert_output ''
	done
}

# mandoc's style level, less what it cannot judge: cross-references to the sibling
# pages, which are not in the system's man database until installed.
@test "mandoc -T lint -W style: nothing but sibling references (no source line past 80 bytes)" {
	command -v mandoc >/dev/null || skip "no mandoc"
	for m in "$ROOT"/man/*.[17]; do
		# (the lint is on stdout; stderr has only the system database's own complaints)
		run sh -c "mandoc -T lint -W style '$m' 2>/dev/null | grep -v \
			-e 'referenced manual not found: Xr ss' -e 'outdated mandoc.db'"
		assert_output ''
	done
}

# A flag macro swallows the plain words after a delimiter (.Fl -strict , reaching it
# renders "--strict, -reaching -it"): no rendered word may start with one dash and two
# letters unless it is a real option (kcat's -Kd in ss-consume(1)).
@test "no words rendered as flags by a swallowing Fl" {
	command -v mandoc >/dev/null || skip "no mandoc"
	for m in "$ROOT"/man/*.[17]; do
		run sh -c "mandoc -T ascii '$m' | col -b | grep -oE '(^|[ (\[])-[a-zA-Z][a-zA-Z]+' | grep -vx ' -Kd'"
		assert_output ''
	done
}

@test "make demo prints no escape codes when stdout is not a terminal" {
	"$ROOT/scripts/demo" >"$T/out" 2>&1
	grep -q 'The nearby join' "$T/out"
	run grep -c $'\033' "$T/out"
	assert_output 0
}

@test "each tool's -h prints the SYNOPSIS of its man page" {
	for m in "$ROOT"/man/ss-*.1; do
		tool=$(basename "$m" .1)
		[ -x "$ROOT/bin/$tool" ] || continue
		run "$tool" -h
		assert_success
		assert_line --index 0 --partial "usage: $tool"
		# every option of the SYNOPSIS appears in the usage
		for opt in $(sed -n '/^\.Sh SYNOPSIS/,/^\.Sh DESCRIPTION/p' "$m" | grep -o 'Fl -[a-z-]*' | sed 's/Fl //' | sort -u); do
			[[ "$output" == *"$opt"* ]] || { echo "$tool -h lacks $opt" >&2; return 1; }
		done
	done
}

# options_of PAGE: every flag an .It Fl line of the page's OPTIONS section documents
# (the whole page when it has none, as ss-cache(1)), one a line, with its dashes.
options_of() {
	awk '/^\.Sh OPTIONS/ {o=1} /^\.Sh / && !/OPTIONS/ {if (o) exit} o' "$1" >"$T/opts"
	[ -s "$T/opts" ] || cp "$1" "$T/opts"
	grep '^\.It Fl' "$T/opts" | grep -o 'Fl [^ ]*' | sed 's/^Fl /-/' | sort -u
}

# help_flags TOOL: the flags of the option lines of TOOL -h
help_flags() {
	"$1" -h | grep '^  -' | sed 's/^  //; s/  .*//' | grep -oE '(^|[ ,])-[-a-zA-Z]+' | tr -d ' ,' | sort -u
}

@test "each tool's -h has one line per option of its page, and names the page" {
	for m in "$ROOT"/man/ss-*.1; do
		tool=$(basename "$m" .1)
		run "$tool" -h
		assert_success
		assert_line --partial "man $tool"
		# no line of the option list is wrapped
		run sh -c "'$tool' -h | sed -n '/^options:/,\$p' | awk 'length > 80'"
		assert_output ''
		help_flags "$tool" >"$T/help"
		for opt in $(options_of "$m"); do
			grep -qx -- "$opt" "$T/help" || { echo "$tool -h lacks a line for $opt" >&2; return 1; }
		done
		# and the other way round (git's t0450): every option of -h is on the page
		for opt in $(cat "$T/help"); do
			grep -q "Fl ${opt#-}\b" "$m" || { echo "$tool -h has $opt, its page does not" >&2; return 1; }
		done
	done
}

@test "every option a tool accepts is on its page, and every option of its page is accepted" {
	for m in "$ROOT"/man/ss-*.1; do
		tool=$(basename "$m" .1)
		"$BATS_TEST_DIRNAME/accepted-options.py" "$ROOT/cmd/$tool.c" >"$T/accepted"
		grep -qx -- '-h' "$T/accepted" # the tables were found
		for opt in $(cat "$T/accepted"); do
			grep -q "Fl ${opt#-}\b" "$m" || { echo "$tool accepts $opt, its page does not say so" >&2; return 1; }
		done
		for opt in $(options_of "$m"); do
			grep -qx -- "$opt" "$T/accepted" || { echo "$tool's page has $opt, the tool does not take it" >&2; return 1; }
		done
	done
	# subcommands: each one's options are its own (ss-cache scan takes no --key)
	run ss-cache "$T/c.db" scan --key .k
	assert_failure 2
	run ss-checkpoint "$T/k.db" status --ts .t
	assert_failure 2
}

@test "misuse: the reason and the usage on stderr, exit 2, nothing on stdout" {
	for m in "$ROOT"/man/ss-*.1; do
		tool=$(basename "$m" .1)
		run --separate-stderr "$tool" --no-such-option x y
		[ "$status" -eq 2 ] || { echo "$tool: exit $status" >&2; return 1; }
		[ -z "$output" ] || { echo "$tool wrote to stdout: $output" >&2; return 1; }
		[[ "${stderr_lines[0]}" == "$tool: "* ]] || { echo "$tool: $stderr" >&2; return 1; }
		[[ "$stderr" == *"usage: $tool"* ]] || { echo "$tool: no usage: $stderr" >&2; return 1; }
	done
}

# check TOOL EXPECTED-FIRST-LINE ARGS...: a usage error (2), its first line, then the
# usage. Run by path: getopt's own message would start with the path, not "ss-TOOL: ".
check() {
	local tool=$1 want=$2
	shift 2
	run --separate-stderr "$ROOT/bin/$tool" "$@"
	[ "$status" -eq 2 ] || { echo "$tool $*: exit $status" >&2; return 1; }
	[ "${stderr_lines[0]}" = "$want" ] || { echo "$tool $*: $stderr" >&2; return 1; }
	[[ "${stderr_lines[1]}" == "usage: $tool"* ]] || { echo "$tool $*: $stderr" >&2; return 1; }
}

@test "misuse: one line that names the option and what is wrong with it, prefixed by the tool, whatever argv[0] is" {
	check ss-asof 'ss-asof: unknown option --no-such' --no-such a b
	check ss-asof 'ss-asof: --on needs a value' a b --on
	check ss-asof 'ss-asof: --strict takes no value' --strict=1 a b
	check ss-asof 'ss-asof: unknown option -z' -z a b
	check ss-consume 'ss-consume: -b needs a value' t -b
	check ss-consume 'ss-consume: unknown option -Z' -Z t
	check ss-produce 'ss-produce: unknown option --no-such' --no-such t
	check ss-cache 'ss-cache: put: unknown option --kex' "$T/c.db" put --kex .k
	check ss-cache 'ss-cache: scan: --limit needs a value' "$T/c.db" scan --limit
	check ss-checkpoint 'ss-checkpoint: heartbeat: --ts needs a value' "$T/k.db" heartbeat a b --ts
	check ss-checkpoint 'ss-checkpoint: pulse: unknown option --no-such' "$T/k.db" pulse a --no-such
	check ss-checkpoint 'ss-checkpoint: status: unknown option --no-such' "$T/k.db" status --no-such
	check ss-mock-broker 'ss-mock-broker: unknown option --no-such' --no-such
}

@test "a bad option value is said in one form by every tool: OPT VALUE: expected WHAT" {
	local d='250ms, 90s, 10m, 1h, 7d'
	check ss-asof "ss-asof: --grace 5x: expected a duration such as $d" a b --on .t --grace 5x
	check ss-asof "ss-asof: --right-partitions -1: expected a whole number from 0 to 1000000" a b --on .t --right-partitions -1
	check ss-asof "ss-asof: --emit never: expected eager, defer or revise" a b --on .t --emit never
	check ss-asof "ss-asof: --ts-unit h: expected s, ms, us or ns" a b --on .t --ts-unit h
	check ss-asof "ss-asof: --on-error stop: expected fail, skip or dead-letter=FILE" a b --on .t --on-error stop
	check ss-cache "ss-cache: --retain-age 0: expected a duration above zero, such as $d" "$T/c.db" put --retain-age 0
	check ss-cache "ss-cache: --retain-count 2k: expected a whole number, 1 or more" "$T/c.db" put --retain-count 2k
	check ss-cache "ss-cache: --limit -1: expected a whole number, 0 or more" "$T/c.db" scan --limit -1
	check ss-cache "ss-cache: --ts-unit m: expected s, ms, us or ns" "$T/c.db" put --retain-age 1h --ts-unit m
	check ss-consume "ss-consume: -c ten: expected a whole number, 0 or more" -b 127.0.0.1:1 -c ten t
	check ss-consume "ss-consume: --timeout 0: expected a duration above zero, such as $d" -b 127.0.0.1:1 --timeout 0 t
	check ss-consume "ss-consume: --value-format '': expected auto, json, string, base64 or avro" -b 127.0.0.1:1 --value-format '' t
	check ss-consume "ss-consume: --from yesterday: expected a time such as 2023-01-01T10:00:00Z, 1672567200, now or -1h" -b 127.0.0.1:1 --from yesterday t
	check ss-produce "ss-produce: --ts-unit x: expected s, ms, us or ns" --dry-run --ts-unit x t
	check ss-produce "ss-produce: --on-error x: expected fail, skip or dead-letter=FILE" --dry-run --on-error x t
	check ss-produce "ss-produce: --timeout 1: expected a duration above zero, such as $d" --timeout 1 t
	check ss-mock-broker "ss-mock-broker: --brokers 0: expected a whole number from 1 to 100" --brokers 0
	check ss-checkpoint "ss-checkpoint: --idle 0: expected a duration above zero, such as $d" "$T/k.db" heartbeat a b --idle 0
	check ss-checkpoint "ss-checkpoint: --partitions -2: expected a whole number from 0 to 2147483647" "$T/k.db" heartbeat a b --partitions -2
	check ss-checkpoint "ss-checkpoint: --dependency w=5x: expected NAME or NAME=DURATION, a duration such as $d" "$T/k.db" pulse a --dependency w=5x
	check ss-checkpoint "ss-checkpoint: --threshold x: expected a duration such as $d" "$T/k.db" pulse a --dependency w --threshold x
	check ss-checkpoint "ss-checkpoint: --ts-unit q: expected s, ms, us or ns" "$T/k.db" heartbeat a b --ts-unit q
}

@test "make install puts the pages where man finds them (MANPATH)" {
	make -s -C "$ROOT" install PREFIX=/usr DESTDIR="$T/root" >/dev/null
	run env MANPATH="$T/root/usr/share/man" man -w ss-asof
	assert_output "$T/root/usr/share/man/man1/ss-asof.1"
	run env MANPATH="$T/root/usr/share/man" man -w 7 ss
	assert_output "$T/root/usr/share/man/man7/ss.7"
	for m in "$ROOT"/man/ss-*.1; do
		[ -f "$T/root/usr/share/man/man1/$(basename "$m")" ]
	done
}
