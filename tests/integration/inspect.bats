#!/usr/bin/env bats
# ss-consume -L, -G GROUP --lag and --offsets-at against a real Apache Kafka broker: what
# the mock cannot show (offsets for a time, group members and state, the broker's own
# record of rebalances), with kcat as the independent client.
load helpers
bats_require_minimum_version 1.5.0

setup_file() { kafka_setup_file; }
teardown_file() { kafka_teardown_file; }
setup() { T=$(mktemp -d "$KAFKA_TMP/t.XXXXXX"); }
# a member a test started in the background, stopped even when the test failed midway
teardown() { [ -z "${pid:-}" ] || kill "$pid" 2>/dev/null || true; }

# wait_lines FILE N [SECONDS]
wait_lines() {
	local i
	for ((i = 0; i < ${3:-60} * 10; i++)); do
		[ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ] && return 0
		sleep 0.1
	done
	echo "timed out waiting for $2 lines in $1 (have $(wc -l <"$1"))" >&2
	return 1
}

# rebalances GROUP: how often the broker has prepared a rebalance of GROUP (its log)
rebalances() {
	grep -c "Preparing to rebalance group $1 " "$KAFKA_TMP/broker1/kafka.log" || true
}

@test "-L: the broker, its controller role and cluster id; partitions with leader, replicas, isr, watermarks" {
	t=$(kafka_topic_name)
	kafka_create_topic "$t" 3
	for p in 0 0 2; do echo "{\"p\":$p}"; done | ss-produce -b "$BROKERS" --partition .p "$t"
	run ss-consume -b "$BROKERS" -L "$t"
	assert_success
	[ "${#lines[@]}" -eq 4 ]
	echo "${lines[0]}" | jq -e --argjson port "${BROKERS##*:}" '
		.brokers == [{id:1,host:"127.0.0.1",port:$port}] and .controller == 1
		and (.cluster | type == "string" and length > 10)'
	printf '%s\n' "${lines[@]:1}" | jq -e -s --arg t "$t" '. == [
		{topic:$t,partition:0,leader:1,replicas:[1],isr:[1],low:0,high:2},
		{topic:$t,partition:1,leader:1,replicas:[1],isr:[1],low:0,high:0},
		{topic:$t,partition:2,leader:1,replicas:[1],isr:[1],low:0,high:1}]'
	# kcat -L agrees on the partitions
	[ "$(kcat -L -b "$BROKERS" -t "$t" | grep -c 'partition .*leader 1, replicas: 1, isrs: 1')" -eq 3 ]
}

@test "-L without a topic: no __consumer_offsets unless named" {
	t=$(kafka_topic_name)
	kafka_create_topic "$t" 1
	echo '{}' | ss-produce -b "$BROKERS" "$t"
	ss-consume -b "$BROKERS" -G "g-$t" -e "$t" >/dev/null   # makes __consumer_offsets exist
	run ss-consume -b "$BROKERS" -L
	assert_success
	assert_output --partial "\"topic\":\"$t\""
	refute_output --partial '"topic":"__'
	run ss-consume -b "$BROKERS" -L __consumer_offsets
	assert_success
	[ "$(echo "$output" | jq -s '.[1:] | map(select(.topic == "__consumer_offsets")) | length')" -gt 0 ]
	run --separate-stderr ss-consume -b "$BROKERS" -L "nosuch-$t"
	[ "$status" -eq 1 ]
	[ "$stderr" = "ss-consume: nosuch-$t: no such topic on $BROKERS" ]
}

@test "--offsets-at: the first offset at or after the time, the high watermark where none is that late; as kcat -Q" {
	t=$(kafka_topic_name)
	kafka_create_topic "$t" 2
	for h in 10 11 12; do echo "{\"t\":\"2023-01-01T$h:00:00Z\"}"; done |
		ss-produce -b "$BROKERS" --timestamp .t --partition 0 "$t"
	at() {
		ss-consume -b "$BROKERS" --offsets-at "$1" "$t" | jq -c '[.partition, .offset]' | tr '\n' ' '
	}
	[ "$(at 2023-01-01T09:00:00Z)" = '[0,0] [1,0] ' ]
	[ "$(at 2023-01-01T11:00:00Z)" = '[0,1] [1,0] ' ]
	[ "$(at 2023-01-01T11:00:00.001Z)" = '[0,2] [1,0] ' ]
	[ "$(at 2023-01-01T12:30:00Z)" = '[0,3] [1,0] ' ]
	# kcat -Q finds the same offsets, and -1 where ss-consume gives the high watermark
	ms=$(date -d 2023-01-01T11:00:00.001Z +%s%3N)
	run kcat -Q -b "$BROKERS" -t "$t:0:$ms" -t "$t:1:$ms"
	assert_line "$t [0] offset 2"
	assert_line "$t [1] offset -1"
	# -o @TIME starts where --offsets-at says
	[ "$(ss-consume -b "$BROKERS" -e -o @2023-01-01T11:00:00.001Z "$t" | jq -c .offset)" = 2 ]
	run ss-consume -b "$BROKERS" --offsets-at 2023-01-01T11:00:00Z "$t"
	echo "${lines[0]}" | jq -e --arg t "$t" '. == {topic:$t,partition:0,time:1672570800000,offset:1}'
}

@test "--lag: committed, high, lag and the owning member of a running group; its state; a table on a terminal" {
	t=$(kafka_topic_name)
	g=g-$t
	kafka_create_topic "$t" 2
	for i in $(seq 10); do echo "{\"p\":$((i % 2))}"; done | ss-produce -b "$BROKERS" --partition .p "$t"
	ss-consume -b "$BROKERS" -G "$g" -e "$t" >/dev/null
	for p in 0 0 0 1 1; do echo "{\"p\":$p}"; done | ss-produce -b "$BROKERS" --partition .p "$t"
	run ss-consume -b "$BROKERS" -G "$g" --lag "$t"
	assert_success
	echo "$output" | jq -e -s --arg t "$t" --arg g "$g" '. == [
		{topic:$t,partition:0,committed:5,high:8,lag:3,member:null},
		{topic:$t,partition:1,committed:5,high:7,lag:2,member:null},
		{group:$g,state:"Empty",members:0,partitions:2,total_lag:5}]'
	# an active member owns both partitions; it reads to the end and commits
	ss-consume -b "$BROKERS" -G "$g" "$t" >"$T/out" 2>"$T/err" &
	pid=$!
	wait_lines "$T/out" 5 60
	for _ in $(seq 50); do
		run ss-consume -b "$BROKERS" -G "$g" --lag "$t"
		[ "$(echo "$output" | jq -s '.[-1].total_lag')" = 0 ] && break
		sleep 0.2
	done
	echo "$output" | jq -e -s --arg g "$g" '
		(.[0:-1] | all(.[]; .lag == 0 and (.member.id | startswith("rdkafka-"))
		                    and .member.client_id == "rdkafka" and .member.host == "/127.0.0.1")
		 and (map(.member.id) | unique | length == 1))
		and .[-1] == {group:$g,state:"Stable",members:1,partitions:2,total_lag:0}'
	run script -qec "ss-consume -b $BROKERS -G $g --lag $t" /dev/null
	assert_line --index 0 --regexp $'^TOPIC +PARTITION +COMMITTED +HIGH +LAG +MEMBER +CLIENT +HOST\r$'
	assert_line --regexp $'^group '"$g"$' \\(Stable, 1 member\\): total lag 0 over 2 partitions\r$'
	kill "$pid"
	wait "$pid" || true
}

@test "--lag never joins: the broker records no rebalance of a running group while --lag runs" {
	t=$(kafka_topic_name)
	g=g-$t
	kafka_create_topic "$t" 2
	for i in $(seq 6); do echo "{\"p\":$((i % 2))}"; done | ss-produce -b "$BROKERS" --partition .p "$t"
	ss-consume -b "$BROKERS" -G "$g" "$t" >"$T/out" 2>"$T/err" &
	pid=$!
	wait_lines "$T/out" 6 60
	# the member commits every second, asynchronously; wait for a commit and a stable group
	for _ in $(seq 50); do
		ss-consume -b "$BROKERS" -G "$g" --lag "$t" 2>/dev/null |
			jq -e -s '.[-1] | .total_lag == 0 and .state == "Stable"' >/dev/null && break
		sleep 0.2
	done
	before=$(rebalances "$g")
	[ "$before" -ge 1 ]   # the witness: the broker logged the member's own join
	for _ in 1 2 3; do
		run ss-consume -b "$BROKERS" -G "$g" --lag
		assert_success
		echo "${lines[-1]}" | jq -e '.state == "Stable" and .members == 1'
	done
	run ss-consume -b "$BROKERS" --offsets-at now "$t"
	run ss-consume -b "$BROKERS" -L "$t"
	sleep 1
	[ "$(rebalances "$g")" -eq "$before" ]
	# and the member still reads new records
	for i in 1 2; do echo "{\"p\":$((i % 2))}"; done | ss-produce -b "$BROKERS" --partition .p "$t"
	wait_lines "$T/out" 8 30
	[ "$(rebalances "$g")" -eq "$before" ]
	kill "$pid"
	wait "$pid" || true
}
