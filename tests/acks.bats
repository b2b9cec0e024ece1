#!/usr/bin/env bats
# --acks: ss-produce reports the lines it delivered to a file that ss-asof reads, so the
# results ss-asof committed are kept in its state until delivered, and written again
# after a killed ss-produce. Against the mock cluster (ss-mock-broker).

bats_require_minimum_version 1.5.0
load helpers
load kafka

setup_file() {
	mock_start --topic count:1 --topic parts:2 --topic out1:1 --topic out2:1
}
teardown_file() { mock_stop; }

gen() { python3 "$BATS_TEST_DIRNAME/asof-statedir-gen.py" "$@"; }
delivered() { sqlite3 "$1" 'SELECT delivered FROM ss_acks'; }
kept() { sqlite3 "$1" 'SELECT count(*) FROM asof_outbox'; }
opts=(--on .t --by .k --emit revise)
# one result per left record: the mock cluster keeps only ~5 MB per partition
kopts=(--on .t --by .k --emit defer)
key=(--key '[.left.partition, .left.offset]')

@test "ss-produce --acks counts the lines delivered, blank and skipped lines included" {
	printf '{"a":1}\n\n{"a":2}\nnot json\n{"a":3}\n' >"$T/in"
	run --separate-stderr ss-produce -b "$B" --acks "$T/a.db" --on-error skip count <"$T/in"
	assert_success
	assert_equal "$(delivered "$T/a.db")" 5
	assert_equal "$(kcat -C -b "$B" -t count -e -q | wc -l)" 3
	# nothing read, nothing reported
	rm "$T/a.db"
	ss-produce -b "$B" --acks "$T/a.db" count </dev/null
	assert_equal "$(delivered "$T/a.db")" ''
}

@test "ss-produce --acks: a record not delivered stops the count before its line" {
	printf '{"p":0}\n{"p":1}\n{"p":5}\n{"p":1}\n' >"$T/in"
	run ss-produce -b "$B" --acks "$T/a.db" --partition .p parts <"$T/in"
	[ "$status" -ne 0 ]
	assert_output --partial '<stdin>:3:'
	assert_equal "$(delivered "$T/a.db")" 2
}

@test "ss-asof --acks keeps results until reported delivered; the next run writes them again first" {
	gen 1 "$T" 2 300
	ss-asof "${opts[@]}" "$T/left" "$T/right" >"$T/want"
	# nobody reports: every result stays in the state (after 2 s without reports)
	run --separate-stderr ss-asof "${opts[@]}" --state "$T/s.db" --acks "$T/a.db" "$T/left" "$T/right"
	assert_success
	diff -u "$T/want" <(printf '%s\n' "$output")
	n=$(wc -l <"$T/want")
	assert_equal "$(kept "$T/s.db")" "$n"
	[[ "$stderr" == *"a.db: $n results not reported delivered: kept, written again by the next run"* ]]
	# the next run (nothing new to read) writes them again, in order; delivered, they go
	run --separate-stderr bash -c "ss-asof ${opts[*]} --state '$T/s.db' --acks '$T/a.db' /dev/null /dev/null |
		ss-produce --dry-run --acks '$T/a.db' x | jq -c .value"
	assert_success
	diff -u "$T/want" <(printf '%s\n' "$output")
	[[ "$stderr" == *"s.db: $n results of an earlier run not known to be delivered: written again"* ]]
	assert_equal "$(kept "$T/s.db")" 0
	assert_equal "$(delivered "$T/a.db")" "$n"
}

@test "ss-asof --acks | ss-produce --acks: a clean run keeps nothing; without --acks kept results go once" {
	gen 2 "$T" 2 300
	run bash -c "ss-asof ${opts[*]} --state '$T/s.db' --acks '$T/a.db' '$T/left' '$T/right' |
		ss-produce --dry-run --acks '$T/a.db' x >/dev/null"
	assert_success
	assert_equal "$(kept "$T/s.db")" 0
	# kept results (as a killed deliverer leaves them) and a run without --acks: written
	# again once, and no longer kept
	sqlite3 "$T/s.db" "INSERT INTO asof_outbox(line) VALUES ('{\"left\":1,\"right\":null}')"
	run --separate-stderr ss-asof "${opts[@]}" --state "$T/s.db" /dev/null /dev/null
	assert_success
	assert_output '{"left":1,"right":null}'
	assert_equal "$(kept "$T/s.db")" 0
	test_must_fail 2 ss-asof "${opts[@]}" --acks "$T/a.db" /dev/null /dev/null
}

# kill_produce_run TOPIC DB STATE...: the pipeline over $T/left and $T/right with
# ss-produce SIGKILLed as soon as state file DB keeps results (committed, not yet known
# to be delivered); ss-asof then ends with EPIPE or by itself.
kill_produce_run() {
	local topic=$1 db=$2
	shift 2
	rm -f "$T/p"
	mkfifo "$T/p"
	# the left arrives over time, so that results are committed while the run goes on
	ss-asof "${kopts[@]}" "$@" --acks "$T/a.db" <(trickle "$T/left" 20) "$T/right" >"$T/p" 2>"$T/asof.err" &
	apid=$!
	ss-produce -b "$B" "${key[@]}" --acks "$T/a.db" "$topic" <"$T/p" 2>/dev/null &
	ppid=$!
	for _ in $(seq 1000); do [ "$(kept "$db" 2>/dev/null)" -ge 1 ] 2>/dev/null && break; sleep 0.01; done
	kill -9 "$ppid"
	wait "$ppid" || true
	wait_exit "$apid" 30
}

# check_topic TOPIC: the latest result per left record in TOPIC is the uninterrupted run's
check_topic() {
	ss-consume -b "$B" -e "$1" | jq -c .value >"$T/got"
	latest "$T/got" | diff -u "$T/want" -
}

@test "a killed ss-produce loses no result ss-asof committed (--state): restart resends them" {
	gen 3 "$T" 4 2500
	ss-asof "${kopts[@]}" "$T/left" "$T/right" >"$T/clean"
	latest "$T/clean" >"$T/want"
	kill_produce_run out1 "$T/s.db" --state "$T/s.db"
	[ "$(delivered "$T/a.db")" -lt "$(wc -l <"$T/clean")" ]
	after "$T/left" "$T/left2" "$T/s.db"
	after "$T/right" "$T/right2" "$T/s.db"
	run --separate-stderr bash -c "ss-asof ${kopts[*]} --state '$T/s.db' --acks '$T/a.db' '$T/left2' '$T/right2' |
		ss-produce -b '$B' --key '[.left.partition, .left.offset]' --acks '$T/a.db' out1"
	assert_success
	[[ "$stderr" =~ s.db:\ [1-9][0-9]*\ results\ of\ an\ earlier\ run ]]
	assert_equal "$(kept "$T/s.db")" 0
	check_topic out1
}

@test "--state-dir: every partition's kept results are written again at start, also of partitions with no new record" {
	gen 4 "$T" 4 2500
	ss-asof "${kopts[@]}" --state-dir "$T/d0" "$T/left" "$T/right" >"$T/clean"
	latest "$T/clean" >"$T/want"
	n=$(wc -l <"$T/clean")
	# ss-asof committed every result, and its reader died before reporting any
	ss-asof "${kopts[@]}" --state-dir "$T/d" --acks "$T/a.db" "$T/left" "$T/right" >/dev/null 2>&1 &
	pid=$!
	kept_all() { local db k=0; for db in "$T"/d/*.db; do k=$((k + $(kept "$db" 2>/dev/null || echo 0))); done; echo $k; }
	for _ in $(seq 1000); do [ "$(kept_all)" -eq "$n" ] && break; sleep 0.01; done
	kill -9 "$pid"
	wait "$pid" || true
	assert_equal "$(kept_all)" "$n"
	# nothing new to read: the results go out all the same, and once delivered, go
	run --separate-stderr bash -c "ss-asof ${kopts[*]} --state-dir '$T/d' --acks '$T/a.db' /dev/null /dev/null |
		ss-produce -b '$B' --key '[.left.partition, .left.offset]' --acks '$T/a.db' out2"
	assert_success
	assert_equal "$(grep -c 'results of an earlier run not known to be delivered: written again' <<<"$stderr")" 4
	assert_equal "$(kept_all)" 0
	check_topic out2
}
