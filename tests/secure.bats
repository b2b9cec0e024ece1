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
