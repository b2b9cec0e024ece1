#!/usr/bin/env bats
# Secrets off the command line and files that do not follow planted symlinks (issue 16,
# "Secured clusters"). The Kafka parts run against the mock cluster; the real TLS + SASL
# broker is in tests/integration/secure.bats.
load helpers
load kafka

setup_file() {
	mock_start --topic cfg:1
	printf '{"n":1}\n{"n":2}\n' | ss-produce -b "$B" cfg
}
teardown_file() { mock_stop; }

setup() {
	common_setup
	# No user's configuration leaks into a test, none of the test's into the user's.
	export HOME=$T/home
	unset SS_CONFIG XDG_CONFIG_HOME SS_BROKERS
	mkdir -p "$HOME/.config/ss"
}

@test "config: ~/.config/ss/kafka.conf is read by default (brokers from it, no -b)" {
	printf '# the cluster\nbootstrap.servers = %s\n' "$B" >"$HOME/.config/ss/kafka.conf"
	run ss-consume -e cfg
	assert_success
	[ "${#lines[@]}" -eq 2 ]
	echo '{"n":3}' | ss-produce cfg
	run ss-consume -e -o -1 cfg
	assert_output --partial '"value":{"n":3}'
}

@test "config: \$SS_CONFIG is read instead of ~/.config/ss/kafka.conf; set but empty, none is" {
	printf 'bootstrap.servers=127.0.0.1:1\n' >"$HOME/.config/ss/kafka.conf"
	printf 'bootstrap.servers=%s\n' "$B" >"$T/mine.conf"
	SS_CONFIG=$T/mine.conf run ss-consume -e -c 1 cfg
	assert_success
	assert_output --partial '"offset":0'
	SS_CONFIG= SS_BROKERS=$B run ss-consume -e -c 1 cfg
	assert_success
}

@test "config: \$SS_CONFIG naming a missing file is a usage error that names it" {
	SS_CONFIG=$T/nope.conf run ss-consume -e cfg
	[ "$status" -eq 2 ]
	assert_output --partial "ss-consume: \$SS_CONFIG $T/nope.conf: No such file or directory"
	printf 'no equals sign\n' >"$T/bad.conf"
	SS_CONFIG=$T/bad.conf run ss-produce cfg </dev/null
	[ "$status" -eq 2 ]
	assert_output --partial "ss-produce: $T/bad.conf:1: expected property=value"
}

@test "config: -F replaces the default file; -b and -X override it" {
	printf 'bootstrap.servers=127.0.0.1:1\nclient.id=from-default\n' >"$HOME/.config/ss/kafka.conf"
	printf 'bootstrap.servers=%s\n' "$B" >"$T/f.conf"
	run ss-consume -F "$T/f.conf" -e -c 1 cfg
	assert_success
	run ss-consume -b "$B" -e -c 1 cfg
	assert_success
	run ss-consume -X "bootstrap.servers=$B" -e -c 1 cfg
	assert_success
	# and the default file is really in use when nothing overrides it
	run ss-consume --timeout 1s -e cfg
	[ "$status" -eq 75 ]
	assert_output --partial "cannot reach brokers 127.0.0.1:1"
}

@test "config: without -b, the file's brokers beat \$SS_BROKERS" {
	printf 'bootstrap.servers=%s\n' "$B" >"$HOME/.config/ss/kafka.conf"
	SS_BROKERS=127.0.0.1:1 run ss-consume -e -c 1 cfg
	assert_success
}

@test "secrets: -X sasl.password / ssl.key.password warn on stderr and are never echoed" {
	for p in sasl.password ssl.key.password ssl.keystore.password; do
		run ss-consume -b 127.0.0.1:1 --timeout 1s -X "$p=hunter2" -e cfg
		[ "$status" -eq 75 ]
		assert_line --index 0 "ss-consume: warning: -X $p=... puts a secret on the command line, where ps shows it to every user; put it in a file only you can read: \$SS_CONFIG, ~/.config/ss/kafka.conf or -F FILE"
		refute_output --partial hunter2
	done
	run ss-produce -b "$B" -X sasl.password=hunter2 cfg </dev/null
	assert_success
	assert_output --partial "ss-produce: warning: -X sasl.password=... puts a secret"
	# other properties are not warned about
	run ss-consume -b "$B" -X client.id=me -e -c 1 cfg
	assert_success
	refute_output --partial warning
}

@test "secrets: in a file only its owner can read, no warning; readable by others, a warning" {
	printf 'bootstrap.servers=%s\nsasl.username=u\nsasl.password=hunter2\n' "$B" >"$T/s.conf"
	chmod 600 "$T/s.conf"
	run ss-consume -F "$T/s.conf" -e -c 1 cfg
	assert_success
	refute_output --partial warning
	chmod 644 "$T/s.conf"
	SS_CONFIG=$T/s.conf run ss-consume -e -c 1 cfg
	assert_success
	assert_output --partial "ss-consume: warning: $T/s.conf holds sasl.password and others can read it: chmod 600 $T/s.conf"
	refute_output --partial hunter2
}

@test "secrets: a value librdkafka rejects is not echoed when it is a secret" {
	# a Java client's property, unknown to librdkafka, in a file
	printf 'ssl.truststore.password=hunter2\nbootstrap.servers=%s\n' "$B" >"$T/k.conf"
	chmod 600 "$T/k.conf"
	run ss-consume -F "$T/k.conf" -e -c 1 cfg
	[ "$status" -eq 2 ]
	assert_output 'ss-consume: ssl.truststore.password=(secret not shown): No such configuration property: "ssl.truststore.password"'
	run ss-consume -F "$T/k.conf" -X sasl.oauthbearer.client.secret=hunter2 -e -c 1 cfg
	[ "$status" -eq 2 ]
	refute_output --partial hunter2
}

# planted LINK TARGET: a symbolic link at LINK to TARGET, as someone else could leave in a
# shared directory.
planted() { ln -s "$2" "$1"; }

@test "symlinks: a dead-letter file that is a planted link is refused, its target untouched" {
	printf 'not json\n' >"$T/in"
	planted "$T/dl" "$T/victim"
	run ss-cache "$T/s.db" put --key .k --on-error "dead-letter=$T/dl" <"$T/in"
	[ "$status" -eq 1 ]
	assert_output "ss-cache: $T/dl: is a symbolic link: refused (a file that holds records is never written through one; remove it or name the real file)"
	[ ! -e "$T/victim" ]
	echo keep >"$T/victim"
	run ss-produce --dry-run --on-error "dead-letter=$T/dl" t <"$T/in"
	[ "$status" -eq 1 ]
	assert_output --partial "$T/dl: is a symbolic link: refused"
	[ "$(cat "$T/victim")" = keep ]
	# a real file is appended to, as before
	run ss-produce --dry-run --on-error "dead-letter=$T/real" t <"$T/in"
	assert_success
	grep -q "not json" "$T/real"
}

@test "symlinks: a late file that is a planted link is refused, its target untouched" {
	printf '{"t":5,"k":"a"}\n' >"$T/l"
	printf '{"t":1,"k":"a"}\n' >"$T/r"
	echo keep >"$T/victim"
	planted "$T/late" "$T/victim"
	run ss-asof "$T/l" "$T/r" --on .t --by .k --late-file "$T/late"
	[ "$status" -eq 1 ]
	assert_output --partial "ss-asof: $T/late: cannot open: is a symbolic link: refused"
	[ "$(cat "$T/victim")" = keep ]
}

@test "symlinks: a checkpoint events file that is a planted link is refused" {
	planted "$T/ev" "$T/victim"
	run ss-checkpoint "$T/c.db" pulse ck --dependency d --events "$T/ev" </dev/null
	[ "$status" -eq 1 ]
	assert_output --partial "$T/ev: is a symbolic link: refused"
	[ ! -e "$T/victim" ]
}

@test "symlinks: a new state file through a dangling link is refused; a link to an existing state works" {
	planted "$T/s.db" "$T/victim.db"
	run ss-cache "$T/s.db" put --key .k <<<'{"k":"a"}'
	[ "$status" -eq 1 ]
	assert_output "ss-cache: $T/s.db: is a symbolic link to a file that does not exist: refused (opening it would create the state file where the link points)"
	[ ! -e "$T/victim.db" ]
	# acks files are state files too
	planted "$T/a.acks" "$T/victim.acks"
	run ss-produce --dry-run --acks "$T/a.acks" t <<<'{"k":"a"}'
	[ "$status" -eq 1 ]
	assert_output --partial "$T/a.acks: is a symbolic link to a file that does not exist: refused"
	[ ! -e "$T/victim.acks" ]
	# the user's own link to an existing state file is followed
	ss-cache "$T/real.db" put --key .k <<<'{"k":"a"}'
	ln -s "$T/real.db" "$T/mine.db"
	run ss-cache "$T/mine.db" put --key .k <<<'{"k":"b"}'
	assert_success
	run ss-cache "$T/real.db" get '"b"'
	assert_output '{"k":"b"}'
}

@test "symlinks: a planted -wal, -shm or -journal link beside a state file is refused" {
	for s in -wal -shm -journal; do
		planted "$T/s$s.db$s" "$T/victim$s"
		run ss-cache "$T/s$s.db" put --key .k <<<'{"k":"a"}'
		[ "$status" -eq 1 ]
		assert_output "ss-cache: $T/s$s.db: $T/s$s.db$s is a symbolic link: refused (SQLite would write the state through it)"
		[ ! -e "$T/victim$s" ]
	done
}

@test "symlinks: --end-file is written under a mkstemp name and renamed; a planted link is replaced, its target untouched" {
	echo keep >"$T/victim"
	planted "$T/end" "$T/victim"
	planted "$T/end.tmp" "$T/victim"
	run ss-consume -b "$B" -e --end-file "$T/end" cfg
	assert_success
	[ "$(cat "$T/victim")" = keep ]
	[ ! -L "$T/end" ]
	grep -q '"last":' "$T/end"
	[ -z "$(find "$T" -name 'end.??????')" ]
}
