#!/usr/bin/env bats
# ss-consume -L, -G GROUP --lag and --offsets-at against the mock cluster (ss-mock-broker).
# The mock answers -1 to every offset-for-a-time look-up and cannot describe groups
# (DescribeGroups): the offsets found for a time and the members owning partitions are
# tested against a real broker in tests/integration/inspect.bats.
load helpers
load kafka
bats_require_minimum_version 1.5.0

setup_file() {
	mock_start --topic lst:3 --topic lst2:1 --topic __hidden:1 --topic lag:2 --topic lag2:1 \
		--topic at:2 --topic live:2
}
teardown_file() { mock_stop; }
teardown() { stop_jobs; common_teardown; }

# on_tty CMD: run CMD with stdout on a terminal (script(1)); its output without \r
on_tty() {
	script -qec "$*" /dev/null | tr -d '\r'
}

# produce_to TOPIC PARTITION N: N records {"n":i} into one partition
produce_to() {
	seq_json "$3" | kcat -P -b "$B" -t "$1" -p "$2"
}

@test "-L TOPIC: brokers first, then one line per partition with leader, replicas, isr, low, high" {
	produce_to lst 0 3
	produce_to lst 2 5
	run ss-consume -b "$B" -L lst
	assert_success
	[ "${#lines[@]}" -eq 4 ]
	port=${B##*:}
	echo "${lines[0]}" | jq -e --argjson port "$port" '
		(.brokers | length == 1) and .brokers[0] == {id:1,host:"127.0.0.1",port:$port}
		and (.cluster | type == "string") and has("controller")'
	printf '%s\n' "${lines[@]:1}" | jq -e -s '
		map({topic, partition, low, high}) == [
			{topic:"lst",partition:0,low:0,high:3},
			{topic:"lst",partition:1,low:0,high:0},
			{topic:"lst",partition:2,low:0,high:5}]
		and all(.[]; .leader == 1 and .replicas == [1] and .isr == [1])
		and all(.[]; keys_unsorted == ["topic","partition","leader","replicas","isr","low","high"])'
}

@test "-L without a topic: every topic, sorted, internal __ topics only when named" {
	run ss-consume -b "$B" -L
	assert_success
	topics=$(printf '%s\n' "${lines[@]:1}" | jq -r .topic | uniq | tr '\n' ' ')
	[ "$topics" = "at lag lag2 live lst lst2 " ]
	run ss-consume -b "$B" -L __hidden lst2
	assert_success
	printf '%s\n' "${lines[@]:1}" | jq -e -s 'map([.topic, .partition]) == [["__hidden",0],["lst2",0]]'
}

@test "-L, --lag, --offsets-at: an unknown topic is a clear message and exit 1, and is not created" {
	for args in "-L" "-G g --lag" "--offsets-at now"; do
		run --separate-stderr ss-consume -b "$B" $args lst nosuch
		[ "$status" -eq 1 ]
		[ -z "$output" ]
		[ "$stderr" = "ss-consume: nosuch: no such topic on $B" ]
	done
	run ss-consume -b "$B" -L
	refute_output --partial nosuch
}

@test "-L on a terminal: aligned tables of brokers and partitions" {
	produce_to lst2 0 2
	run on_tty ss-consume -b "$B" -L lst2
	assert_success
	assert_line --index 1 --regexp '^BROKER +HOST +PORT'
	assert_line --regexp "^ +1  127\.0\.0\.1  ${B##*:}"
	assert_line --regexp '^TOPIC +PARTITION +LEADER +REPLICAS +ISR +LOW +HIGH$'
	assert_line --regexp '^lst2 +0 +1 +1 +1 +0 +2$'
	# the columns line up: each value ends under the end of its header
	head=$(echo "$output" | grep '^TOPIC')
	row=$(echo "$output" | grep '^lst2')
	[ "${#head}" -eq "${#row}" ]
	# not on a terminal: JSON
	run ss-consume -b "$B" -L lst2
	echo "$output" | jq -e . >/dev/null
}

@test "--lag: committed, high and lag per partition the group committed, then the total" {
	produce_to lag 0 5
	produce_to lag 1 3
	produce_to lag2 0 4
	# group lg reads 6 of the 8 records of lag (some of each partition), none of lag2
	ss-consume -b "$B" -G lg -X session.timeout.ms=6000 -c 6 lag >"$T/read"
	[ "$(wc -l <"$T/read")" -eq 6 ]
	run ss-consume -b "$B" -G lg --lag
	assert_success
	echo "$output" | jq -e -s '
		.[0:-1] | map(select(.topic == "lag")) | length == 2
		and all(.[]; .lag == .high - .committed and .member == null)
		and (map(.high) == [5,3])' || { echo "$output"; false; }
	total=$(echo "$output" | jq -s '.[0:-1] | map(.lag) | add')
	echo "${lines[-1]}" | jq -e --argjson t "$total" '
		. == {group:"lg",state:null,members:null,partitions:2,total_lag:$t}'
	[ "$total" -eq 2 ]
	# lag2: no commit, no line
	refute_output --partial '"lag2"'
}

@test "--lag TOPIC: only the topics named; a group without commits there is exit 1" {
	run ss-consume -b "$B" -G lg --lag lag
	assert_success
	[ "$(echo "$output" | jq -s '.[-1].partitions')" -eq 2 ]
	run --separate-stderr ss-consume -b "$B" -G lg --lag lag2
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[ "$stderr" = "ss-consume: group lg has no committed offsets for these topics on $B" ]
	run --separate-stderr ss-consume -b "$B" -G no-such-group --lag
	[ "$status" -eq 1 ]
	[ "$stderr" = "ss-consume: group no-such-group has no committed offsets on $B" ]
}

@test "--lag on a terminal: a table and a total line" {
	run on_tty ss-consume -b "$B" -G lg --lag lag
	assert_success
	assert_line --index 0 --regexp '^TOPIC +PARTITION +COMMITTED +HIGH +LAG +MEMBER +CLIENT +HOST$'
	assert_line --regexp '^lag +0 +[0-9]+ +5 +[0-9]+  -'
	assert_line --regexp '^lag +1 +[0-9]+ +3 +[0-9]+  -'
	assert_line --regexp '^group lg: total lag 2 over 2 partitions$'
}

# feed_states DIR: the partition states ss-consume tells the reader of its pipe
feed_states() {
	cat "$1"/* 2>/dev/null | awk '$1 == "part" {print $2 ":" $3 ":" $5}' | sort | tr '\n' ' '
}

# stop_jobs: the background processes a test started, even when it failed midway
stop_jobs() {
	local p
	for p in ${member:-} ${watcher:-} ${second:-}; do kill "$p" 2>/dev/null || true; done
}

@test "--lag never joins the group: a running ss-consume -G keeps its assignment (a second member would take it)" {
	produce_to live 0 2
	produce_to live 1 2
	mkdir "$T/feed"
	SS_FEED_DIR=$T/feed ss-consume -b "$B" -G running -X session.timeout.ms=6000 live \
		> >(cat >"$T/out") 2>"$T/err" &
	member=$!
	wait_lines "$T/out" 4 30
	for _ in $(seq 50); do
		[ "$(feed_states "$T/feed")" = "live:0:caught-up live:1:caught-up " ] && break
		sleep 0.1
	done
	[ "$(feed_states "$T/feed")" = "live:0:caught-up live:1:caught-up " ]
	# the member commits what reached its output every second, asynchronously
	for _ in $(seq 100); do
		ss-consume -b "$B" -G running --lag live 2>/dev/null |
			jq -e -s '.[-1].total_lag == 0' >/dev/null && break
		sleep 0.1
	done
	# watch the feed: a rebalance revokes the member's partitions
	( while :; do feed_states "$T/feed"; echo; sleep 0.02; done >"$T/watch" ) &
	watcher=$!
	for _ in 1 2 3; do
		run ss-consume -b "$B" -G running --lag live
		assert_success
		echo "$output" | jq -e -s '.[-1].partitions == 2 and .[-1].group == "running"'
	done
	sleep 1
	produce_to live 0 1
	produce_to live 1 1
	wait_lines "$T/out" 6 10
	run grep -c revoked "$T/watch"
	assert_output 0
	[ "$(feed_states "$T/feed")" = "live:0:caught-up live:1:caught-up " ]
	# the witness sees a rebalance: a second member joining revokes the partitions
	ss-consume -b "$B" -G running -X session.timeout.ms=6000 live >/dev/null 2>&1 &
	second=$!
	for _ in $(seq 150); do grep -q revoked "$T/watch" && break; sleep 0.1; done
	kill "$watcher" "$second" "$member"
	wait "$member" || true
	grep -q revoked "$T/watch"
}

@test "--offsets-at: one line per partition; where no record is that late (always, on the mock) the high watermark" {
	produce_to at 0 4
	run ss-consume -b "$B" --offsets-at 2023-01-01T10:00:00Z at
	assert_success
	echo "$output" | jq -e -s '. == [
		{topic:"at",partition:0,time:1672567200000,offset:4},
		{topic:"at",partition:1,time:1672567200000,offset:0}]'
	# the same times as -o @TIME and --from: seconds, @TIME, relative
	run ss-consume -b "$B" --offsets-at 1672567200 at
	echo "$output" | jq -e -s 'map(.time) == [1672567200000, 1672567200000]'
	run ss-consume -b "$B" --offsets-at @2023-01-01T10:00:00.5Z at
	echo "$output" | jq -e -s 'map(.time) == [1672567200500, 1672567200500]'
	run ss-consume -b "$B" --offsets-at -1h at
	assert_success
	now=$(date +%s%3N)
	echo "$output" | jq -e --argjson now "$now" '(.time - ($now - 3600000)) | fabs < 60000' >/dev/null
	run on_tty ss-consume -b "$B" --offsets-at 2023-01-01T10:00:00Z at
	assert_line --index 0 --regexp '^TOPIC +PARTITION +TIME +OFFSET$'
	assert_line --index 1 --regexp '^at +0  2023-01-01T10:00:00Z +4$'
}

@test "usage: the modes exclude each other and the options of a read; unreachable brokers exit 75" {
	test_must_fail 2 ss-consume -b "$B" -L --lag -G g
	test_must_fail 2 ss-consume -b "$B" --lag lag
	assert_output --partial "--lag needs a group (-G)"
	test_must_fail 2 ss-consume -b "$B" -L -e lst
	echo '"string"' >"$T/s.avsc"
	test_must_fail 2 ss-consume -b "$B" -L --value-format avro --value-schema "$T/s.avsc" lst
	assert_output --partial "read no records"
	test_must_fail 2 ss-consume -b "$B" -G g -L
	test_must_fail 2 ss-consume -b "$B" --offsets-at yesterday-ish at
	test_must_fail 75 ss-consume -b 127.0.0.1:1 --timeout 1s -L
	assert_output --partial "ss-consume: cannot reach brokers 127.0.0.1:1"
	run ss-consume -h
	assert_success
	assert_output --partial "ss-consume -L "
	assert_output --partial "ss-consume -G group --lag"
	assert_output --partial "ss-consume --offsets-at time"
}
