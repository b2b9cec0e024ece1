#!/usr/bin/env bats
# ss-consume and ss-produce against a real Apache Kafka broker (scripts/kafka-up), with kcat
# as the independent client.
load helpers

setup_file() { kafka_setup_file; }
teardown_file() { kafka_teardown_file; }
setup() { T=$(mktemp -d "$KAFKA_TMP/t.XXXXXX"); }

# slow_reader: copy stdin to stdout at about 10,000 lines a second
slow_reader() {
	python3 -c '
import sys, time
for i, line in enumerate(sys.stdin):
    sys.stdout.write(line)
    if i % 100 == 0:
        sys.stdout.flush()
        time.sleep(0.01)'
}

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

@test "kcat -> ss-consume: keys, headers as an object, JSON, text and binary values" {
	t=$(kafka_topic_name)
	kafka_create_topic "$t" 2
	printf 'k1|{"a":1}\nk2|just text\n' | kcat -P -b "$BROKERS" -t "$t" -p 0 -K '|' -H src=kcat -H n=1
	printf 'k3|\xff\x00\x80' | kcat -P -b "$BROKERS" -t "$t" -p 1 -K '|' -D '#'
	run ss-consume -b "$BROKERS" -e "$t"
	assert_success
	echo "$output" | jq -e -s --arg t "$t" --arg bin "$(printf '\xff\x00\x80' | base64)" '
		length == 3 and all(.[]; .topic == $t)
		and (map(select(.partition == 0)) | .[0].key == "k1" and .[0].value == {a:1}
		     and .[0].headers == {src:"kcat",n:"1"} and .[1].value == "just text")
		and (map(select(.partition == 1)) | .[0].key == "k3" and .[0].value == {base64:$bin}
		     and .[0].headers == {})'
}

@test "ss-produce -> kcat: keys, headers, binary values via --envelope, tombstones" {
	t=$(kafka_topic_name)
	kafka_create_topic "$t" 1
	printf '%s\n' \
		'{"key":"a","value":{"x":1},"headers":{"h":"1","r":["2","3"]}}' \
		'{"key":null,"value":"text"}' \
		'{"key":"b","value":{"base64":"/wCA"}}' \
		'{"key":"a","value":null}' | ss-produce -b "$BROKERS" --envelope "$t"
	run kcat -C -b "$BROKERS" -t "$t" -e -q -f '%k|%s|%h|%S\n'
	assert_success
	assert_line --index 0 'a|{"x":1}|h=1,r=2,r=3|7'
	assert_line --index 1 '|text||4'
	[ "$(kcat -C -b "$BROKERS" -t "$t" -o 2 -c 1 -e -q -f '%s' | od -An -tx1 | tr -d ' ')" = ff0080 ]
	assert_line --index 3 'a|||-1'
}

@test "round trip: kcat -> ss-consume | ss-produce --envelope -> kcat is byte for byte" {
	a=$(kafka_topic_name a) b=$(kafka_topic_name b)
	kafka_create_topic "$a" 3
	kafka_create_topic "$b" 3
	python3 -c '
import os, sys
for i in range(500):
    sys.stdout.buffer.write(b"k%d|" % i + os.urandom(i % 50).replace(b"\x01", b"") + b"\x01")' |
		kcat -P -b "$BROKERS" -t "$a" -K '|' -D '\x01' -H origin=kcat
	ss-consume -b "$BROKERS" -e "$a" | ss-produce -b "$BROKERS" --envelope --partition .partition "$b"
	for p in 0 1 2; do
		cmp <(kcat -C -b "$BROKERS" -t "$a" -p $p -e -q -f '%k|%h|%S|%T|%s\x01') \
		    <(kcat -C -b "$BROKERS" -t "$b" -p $p -e -q -f '%k|%h|%S|%T|%s\x01')
	done
}

@test "exact copy: corpus and hand-made keys, values, headers, timestamps and partitions, byte for byte" {
	a=$(kafka_topic_name a) b=$(kafka_topic_name b)
	# old timestamps: no retention, or the broker may delete them while the test runs
	kafka_create_topic "$a" 3 --config retention.ms=-1
	kafka_create_topic "$b" 3 --config retention.ms=-1
	python3 "$SS_ROOT/tests/copy-ref.py" gen "$T/in" "$T/expected" "$SS_ROOT"/tests/fuzz/corpus/payload/*
	ss-produce -b "$BROKERS" --envelope --partition .partition "$a" <"$T/in"
	ss-consume -b "$BROKERS" -e "$a" | ss-produce -b "$BROKERS" --envelope --partition .partition "$b"
	kcat -C -b "$BROKERS" -t "$a" -e -q -J | python3 "$SS_ROOT/tests/copy-ref.py" dump >"$T/a"
	kcat -C -b "$BROKERS" -t "$b" -e -q -J | python3 "$SS_ROOT/tests/copy-ref.py" dump >"$T/b"
	cmp "$T/expected" "$T/a"
	cmp "$T/a" "$T/b"
}

@test "keys land in the partitions Kafka's Java producer picks: ss and Java topics are co-partitioned" {
	j=$(kafka_topic_name java) s=$(kafka_topic_name ss)
	kafka_create_topic "$j" 6
	kafka_create_topic "$s" 6
	# KEY|I lines: text keys, the empty key, and keys that are JSON text
	{ for i in $(seq 0 199); do echo "user-$i"; done
	  printf '%s\n' '' 'é' 's17' 'a b' '{"id":1}' '"quoted"' '42' 'null'
	} | awk '{ printf "%s|%d\n", $0, NR - 1 }' >"$T/lines"
	lib=$("$SS_SCRIPTS/kafka-fetch")
	java -cp "$lib/*" -Dlog4j2.level=ERROR org.apache.kafka.tools.ConsoleProducer \
		--bootstrap-server "$BROKERS" --topic "$j" \
		--reader-property parse.key=true --reader-property 'key.separator=|' <"$T/lines" 2>"$T/java.err" ||
		{ cat "$T/java.err" >&2; false; }
	# the same keys and values through ss-produce, keys as bytes (a JSON string each)
	python3 -c '
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    k, i = line.rstrip("\n").rsplit("|", 1)
    print(json.dumps({"key": k, "value": int(i)}))' "$T/lines" | ss-produce -b "$BROKERS" --envelope "$s"
	kcat -C -b "$BROKERS" -t "$j" -e -q -f '%p %s\n' | sort -k2n >"$T/java"
	kcat -C -b "$BROKERS" -t "$s" -e -q -f '%p %s\n' | sort -k2n >"$T/ss"
	[ "$(wc -l <"$T/java")" -eq 208 ]
	diff "$T/java" "$T/ss"
	# the keys are spread: every partition holds some
	[ "$(cut -d' ' -f1 "$T/ss" | sort -u | wc -l)" -eq 6 ]
}

@test "--from TIME starts at the first record at or after TIME; -o @TIME too" {
	t=$(kafka_topic_name)
	kafka_create_topic "$t" 2
	for h in 10 11 12 13; do echo "{\"t\":\"2023-01-01T$h:00:00Z\",\"h\":$h}"; done |
		ss-produce -b "$BROKERS" --timestamp .t --partition '.h % 2' "$t"
	run ss-consume -b "$BROKERS" -e --from 2023-01-01T11:00:00Z "$t"
	assert_success
	[ "$(echo "$output" | jq .value.h | sort -n | tr '\n' ' ')" = '11 12 13 ' ]
	run ss-consume -b "$BROKERS" -e -o @2023-01-01T12:30:00Z "$t"
	[ "$(echo "$output" | jq .value.h | sort -n | tr '\n' ' ')" = '13 ' ]
	run ss-consume -b "$BROKERS" -e --from 2023-01-01T11:00:00Z --until 2023-01-01T12:00:00Z "$t"
	[ "$(echo "$output" | jq .value.h | sort -n | tr '\n' ' ')" = '11 12 ' ]
}

@test "-e ends at the snapshot of end offsets while a producer keeps writing (with and without -G)" {
	t=$(kafka_topic_name)
	kafka_create_topic "$t" 3
	seq 1 3000 | jq -c '{n: .}' | ss-produce -b "$BROKERS" "$t"
	( i=0; while :; do echo "{\"more\":$i}"; i=$((i + 1)); sleep 0.005; done ) |
		ss-produce -b "$BROKERS" "$t" 2>/dev/null &
	writer=$!
	sleep 2
	run timeout 60 ss-consume -b "$BROKERS" -e "$t"
	st1=$status
	n1=$(echo "$output" | jq -c 'select(.value.n)' | wc -l)
	run timeout 60 ss-consume -b "$BROKERS" -G "g-$t" -e "$t"
	st2=$status
	n2=$(echo "$output" | jq -c 'select(.value.n)' | wc -l)
	kill $writer
	[ "$st1" -eq 0 ] && [ "$n1" -eq 3000 ]
	[ "$st2" -eq 0 ] && [ "$n2" -eq 3000 ]
}

@test "consumer group: SIGTERM then restart is exactly once; kill -9 then restart loses nothing" {
	t=$(kafka_topic_name)
	kafka_create_topic "$t" 4
	# 1 kB records: the 8 MB the consumer buffers at most are far from the whole topic
	python3 -c '
import json
for i in range(1, 30001): print(json.dumps({"n": i, "pad": "x" * 1000}))' | ss-produce -b "$BROKERS" "$t"
	g="g-$t"
	# a slow reader, so that the signal comes while records still flow
	mkfifo "$T/fifo"
	ss-consume -b "$BROKERS" -G "$g" "$t" >"$T/fifo" 2>"$T/a.err" &
	pid=$!
	slow_reader <"$T/fifo" >"$T/a" &
	reader=$!
	wait_lines "$T/a" 5000
	kill -TERM $pid
	wait $pid || [ $? -eq 143 ]
	wait $reader
	[ "$(wc -l <"$T/a")" -lt 30000 ]
	timeout 60 ss-consume -b "$BROKERS" -G "$g" -e "$t" >"$T/b"
	[ "$(cat "$T/a" "$T/b" | wc -l)" -eq 30000 ]
	[ "$(cat "$T/a" "$T/b" | jq .value.n | sort -u | wc -l)" -eq 30000 ]
	# kill -9: commits lag behind the output, so records may repeat but none is lost
	seq 30001 40000 | jq -c '{n: .}' | ss-produce -b "$BROKERS" "$t"
	rm "$T/fifo" && mkfifo "$T/fifo"
	ss-consume -b "$BROKERS" -G "$g" -X session.timeout.ms=6000 "$t" >"$T/fifo" 2>/dev/null &
	pid=$!
	slow_reader <"$T/fifo" >"$T/c" &
	reader=$!
	wait_lines "$T/c" 3000
	sleep 1.5   # past a commit interval
	kill -9 $pid
	wait $pid || true
	wait $reader
	timeout 90 ss-consume -b "$BROKERS" -G "$g" -e "$t" >"$T/d"
	[ "$(cat "$T/c" "$T/d" | jq .value.n | sort -u | wc -l)" -eq 10000 ]
	# what was committed is not read again
	[ "$(wc -l <"$T/d")" -lt 10000 ]
}

@test "broker stopped mid-produce and restarted: every acknowledged record present exactly once" {
	t=$(kafka_topic_name)
	kafka_create_topic "$t" 2
	mkfifo "$T/in"
	ss-produce -b "$BROKERS" --timeout 120s "$t" <"$T/in" 2>"$T/err" &
	prod=$!
	( for i in $(seq 1 4000); do echo "{\"n\":$i}"; [ $((i % 100)) -eq 0 ] && sleep 0.1; done ) >"$T/in" &
	writer=$!
	sleep 1.5
	"$SS_SCRIPTS/kafka-down" "$KAFKA_TMP/broker1"
	sleep 2
	"$SS_SCRIPTS/kafka-up" "$KAFKA_TMP/broker1" >/dev/null
	wait $writer
	wait $prod
	run timeout 60 ss-consume -b "$BROKERS" -e "$t"
	assert_success
	[ "${#lines[@]}" -eq 4000 ]
	[ "$(echo "$output" | jq .value.n | sort -u | wc -l)" -eq 4000 ]
}

@test "backpressure: a reader stalled beyond max.poll.interval.ms does not cost group membership" {
	t=$(kafka_topic_name)
	kafka_create_topic "$t" 2
	python3 -c '
import json
for i in range(80000): print(json.dumps({"n": i, "pad": "x" * 200}))' | ss-produce -b "$BROKERS" "$t"
	mkfifo "$T/fifo"
	ss-consume -b "$BROKERS" -G "g-$t" -X session.timeout.ms=6000 -X max.poll.interval.ms=6000 -e "$t" \
		>"$T/fifo" 2>"$T/err" &
	pid=$!
	( exec <"$T/fifo"; sleep 15; cat >"$T/out" ) &
	reader=$!
	wait $pid
	wait $reader
	run cat "$T/err"
	refute_output --partial 'poll'
	[ "$(wc -l <"$T/out")" -eq 80000 ]
	[ "$(jq .value.n "$T/out" | sort -u | wc -l)" -eq 80000 ]
	# the group committed the end: a new run has nothing to read
	run timeout 60 ss-consume -b "$BROKERS" -G "g-$t" -e "$t"
	assert_success
	assert_output ''
}

@test "cross-cluster: copy a topic between two brokers; the seed's nearby join across clusters" {
	kafka_start_second
	w=$(kafka_topic_name weather) a=$(kafka_topic_name activity) out=$(kafka_topic_name out)
	kafka_create_topic "$w" 1 "$BROKERS"
	kafka_create_topic "$w" 1 "$BROKERS2"
	kafka_create_topic "$a" 1 "$BROKERS2"
	kafka_create_topic "$out" 1 "$BROKERS2"
	printf '%s\n' '{"timestamp":"2023-01-01T10:00:00Z","value":"🌞"}' \
		'{"timestamp":"2023-01-01T12:00:00Z","value":"⛅"}' \
		'{"timestamp":"2023-01-01T13:00:00Z","value":"🌧"}' | ss-produce -b "$BROKERS" "$w"
	printf '%s\n' '{"timestamp":"2023-01-01T10:30:00Z","value":"swimming"}' \
		'{"timestamp":"2023-01-01T11:30:00Z","value":"walking home"}' \
		'{"timestamp":"2023-01-01T12:30:00Z","value":"shopping"}' \
		'{"timestamp":"2023-01-01T13:10:00Z","value":"lunch"}' | ss-produce -b "$BROKERS2" "$a"
	# copy weather from cluster 1 to cluster 2 with key, value, headers and timestamps
	ss-consume -b "$BROKERS" -e "$w" | ss-produce -b "$BROKERS2" --envelope "$w"
	diff <(kcat -C -b "$BROKERS" -t "$w" -e -q -f '%k|%s|%T\n') <(kcat -C -b "$BROKERS2" -t "$w" -e -q -f '%k|%s|%T\n')
	command -v ss-asof >/dev/null || skip "ss-asof not built in this tree"
	ss-asof <(ss-consume -b "$BROKERS2" -e "$a") <(ss-consume -b "$BROKERS" -e "$w") \
		--on .value.timestamp --select '[.left.value.value, .right.value.value]' |
		ss-produce -b "$BROKERS2" "$out"
	run ss-consume -b "$BROKERS2" -e "$out"
	assert_success
	[ "$(echo "$output" | jq -c .value | tr '\n' ' ')" = '["swimming","🌞"] ["walking home","🌞"] ["shopping","⛅"] ["lunch","🌧"] ' ]
}
