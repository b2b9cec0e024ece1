#!/usr/bin/env bats
# ss-mock-broker: startup line, topics, and the ways it stops.
load helpers
load kafka

start_on_fifo() {
	mkfifo "$T/in"
	ss-mock-broker "$@" <"$T/in" >"$T/out" 2>"$T/err" &
	pid=$!
	exec 7>"$T/in"
	for _ in $(seq 100); do
		B=$(sed -n 's/^BROKERS=//p' "$T/out")
		[ -n "$B" ] && break
		sleep 0.05
	done
	[ -n "$B" ]
}

@test "prints BROKERS=host:port first, serves clients, and stops when stdin closes" {
	start_on_fifo --brokers 3 --topic a:3 --topic b
	run head -1 "$T/out"
	assert_output --regexp '^BROKERS=127\.0\.0\.1:[0-9]+(,127\.0\.0\.1:[0-9]+){2}$'
	run kcat -L -b "$B" -t a
	assert_output --partial '3 partitions'
	assert_output --partial '3 brokers'
	run kcat -L -b "$B" -t b
	assert_output --partial '1 partitions'
	exec 7>&-
	wait_exit $pid 10
	[ "$wait_status" -eq 0 ]
}

@test "SIGTERM stops it" {
	start_on_fifo
	kill -TERM $pid
	wait_exit $pid 10
	[ "$wait_status" -eq 143 ]
}

@test "stdin at end from the start (</dev/null) stops it at once, unless --no-stdin" {
	run timeout 10 ss-mock-broker </dev/null
	assert_success
	assert_line --index 0 --regexp '^BROKERS='
	ss-mock-broker --no-stdin </dev/null >"$T/out" 3>&- &
	pid=$!
	sleep 1
	kill -0 $pid
	kill -INT $pid
	wait_exit $pid 10
	[ "$wait_status" -eq 130 ]
}

@test "usage errors exit 2" {
	test_must_fail 2 ss-mock-broker --brokers 0
	test_must_fail 2 ss-mock-broker --topic a:x </dev/null
	test_must_fail 2 ss-mock-broker extra
	run ss-mock-broker -h
	assert_success
	assert_output --partial 'usage: ss-mock-broker'
}
