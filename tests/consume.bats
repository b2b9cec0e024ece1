#!/usr/bin/env bats
# ss-consume against the mock cluster (ss-mock-broker), kcat and ss-produce as producers.
load helpers
load kafka

setup_file() {
	mock_start --topic env:1 --topic fmt:1 --topic bin:1 --topic offs:3 --topic empty:4 \
		--topic live:2 --topic count:2 --topic until:1 --topic grp:2 --topic sig:1 \
		--topic pipe:1 --topic bp:4 --topic resume:2 --topic seek:1 --topic multi1:1 \
		--topic multi2:2 --topic trickle:1 --topic offdir:3 --topic handover:2 \
		--topic nonblock:1 --topic endf:2 --topic quiet:1 --topic quietg:1 --topic prog:2 \
		--topic deep:1
}
teardown_file() { mock_stop; }

@test "envelope: topic, partition, offset, timestamp in ms, key, value as JSON, headers object" {
	printf 'k1|{"a":1}\nk2|{"a":2}\n' | kcat -P -b "$B" -t env -K '|' -H src=test -H v=1
	run ss-consume -b "$B" -e env
	assert_success
	[ "${#lines[@]}" -eq 2 ]
	echo "$output" | jq -e -s '
		.[0] == {topic:"env",partition:0,offset:0,timestamp:.[0].timestamp,key:"k1",
		         value:{a:1},headers:{src:"test",v:"1"}}
		and .[1].offset == 1 and .[1].value == {a:2}
		and (.[0].timestamp | type == "number" and . > 1600000000000 and . < 4102444800000)
		and (.[0] | keys_unsorted) == ["topic","partition","offset","timestamp","key","value","headers"]'
}

@test "auto format: JSON as itself, other text as a string, empty as \"\", null as null, binary in base64 form" {
	printf '{"x":[1,2]}\n42\nhello world\n[1, 2]\n' | kcat -P -b "$B" -t fmt
	printf '{"value":""}\n{"value":null}\n' | ss-produce -b "$B" --envelope fmt
	for p in '\xff\xfe\x00bin' '{"base64":"aGk="}' '"quoted"' ' {"a":1} ' '{"a":1}\n' '{"a":\n1}' 'null'; do
		printf "$p" | kcat -P -b "$B" -t fmt -D '#'
	done
	run ss-consume -b "$B" -e fmt
	assert_success
	assert_line --index 3 --partial '"value":[1, 2],'   # the payload's own text, spaces kept
	echo "$output" | jq -c .value >"$T/values"
	run cat "$T/values"
	assert_line --index 0 '{"x":[1,2]}'
	assert_line --index 1 '42'
	assert_line --index 2 '"hello world"'
	assert_line --index 4 '""'
	assert_line --index 5 'null'
	assert_line --index 6 "{\"base64\":\"$(printf '\xff\xfe\x00bin' | base64)\"}"
	# JSON that would read back as other bytes is a string of its text: a payload that
	# looks like the base64 form, a JSON string, whitespace around JSON, a line break in
	# it, and the bytes null (not a tombstone)
	assert_line --index 7 '"{\"base64\":\"aGk=\"}"'
	assert_line --index 8 '"\"quoted\""'
	assert_line --index 9 '" {\"a\":1} "'
	assert_line --index 10 '"{\"a\":1}\n"'
	assert_line --index 11 '"{\"a\":\n1}"'
	assert_line --index 12 '"null"'
}

@test "random payloads: every line is valid JSON and decodes back to exactly the same bytes" {
	python3 -c '
import json, os, random, sys
rnd = random.Random(3)
def value(d):
    c = rnd.randrange(6 if d < 3 else 4)
    if c == 4:
        return [value(d + 1) for _ in range(rnd.randrange(3))]
    if c == 5:
        return {"k%d" % i: value(d + 1) for i in range(rnd.randrange(3))}
    return [None, rnd.random() < 0.5, rnd.randrange(-99, 99) / 2, "s\u00e9\n\"" * rnd.randrange(3)][c]
for i in range(600):
    if i % 3 == 0:
        p = os.urandom(1 + i % 40)
    elif i % 3 == 1:  # JSON-like text, JSON now and then
        p = "".join(rnd.choice(["{", "}", "[", "]", ",", ":", "\"a\"", "1", "-2.5", "null",
                                "true", " ", "\t", "\n", "\"", "\\"]) for _ in range(rnd.randrange(1, 8))).encode()
    else:  # JSON of every type, compact or spaced, sometimes on several lines or padded
        text = json.dumps(value(0), separators=rnd.choice([(",", ":"), (", ", ": ")]),
                          indent=rnd.choice([None, None, None, 1]), ensure_ascii=False)
        p = (rnd.choice(["", "", " ", "\t"]) + text + rnd.choice(["", "", "\n", " "])).encode()
    sys.stdout.buffer.write(p.replace(b"\x01", b"\x02") + b"\x01")' >"$T/payloads"
	kcat -P -b "$B" -t bin -D '\x01' "$T/payloads" -l
	ss-consume -b "$B" -e bin >"$T/out"
	jq -e . "$T/out" >/dev/null
	[ "$(wc -l <"$T/out")" -eq 600 ]
	# decode with the documented rules: the base64 form gives the bytes, a string its
	# UTF-8, any other value is the payload itself, byte for byte
	python3 -c '
import base64, json, sys
payloads = open(sys.argv[2], "rb").read().split(b"\x01")[:-1]
lines = open(sys.argv[1], "rb").read().split(b"\n")[:-1]
assert len(lines) == len(payloads)
embedded = 0
for line, p in zip(lines, payloads):
    v = json.loads(line)["value"]
    if isinstance(v, dict) and list(v) == ["base64"]:
        assert base64.b64decode(v["base64"]) == p, (line, p)
    elif isinstance(v, str):
        assert v.encode("utf-8") == p, (line, p)
    else:
        assert b"\"value\":" + p + b",\"headers\":" in line, (line, p)
        embedded += 1
assert embedded >= 25, embedded' "$T/out" "$T/payloads"
}

@test "a JSON payload nested as deep as jq parses it, but not a level down in the envelope: a string" {
	# 254 levels of arrays in an object: jq parses it alone; as the envelope's "value"
	# it would be two slots deeper than jq parses (an object counts twice)
	deep() { python3 -c "import sys; d = int(sys.argv[1]); print('{\"n\":%s1%s}' % ('[' * d, ']' * d))" "$1"; }
	{ deep 252; deep 254; } >"$T/in"
	jq -e . "$T/in" >/dev/null
	ss-produce -b "$B" deep <"$T/in"
	run ss-consume -b "$B" -e deep
	assert_success
	[ "${#lines[@]}" -eq 2 ]
	# every line parses; the first payload is in it as JSON, the second as its text
	jq -e . <<<"$output" >/dev/null
	[ "$(jq -c '.value.n | [type, length]' <<<"${lines[0]}")" = '["array",1]' ]
	[ "$(jq -r '.value' <<<"${lines[1]}")" = "$(sed -n 2p "$T/in")" ]
	# and read back by ss-produce --envelope as the same bytes
	ss-produce -b 127.0.0.1:1 --dry-run --envelope deep <<<"${lines[1]}" | jq -r .value | cmp - <(sed -n 2p "$T/in")
}

@test "--value-format string, base64, json; --key-format" {
	printf 'key|{"a":1}\nkey|plain\n' | kcat -P -b "$B" -t fmt -K '|' -p 0
	run ss-consume -b "$B" -o -2 -e --value-format string --key-format base64 fmt
	assert_success
	assert_line --index 0 --partial '"key":{"base64":"a2V5"},"value":"{\"a\":1}"'
	run ss-consume -b "$B" -o -2 -e --value-format base64 fmt
	assert_line --index 1 --partial "\"value\":{\"base64\":\"$(printf plain | base64)\"}"
	run ss-consume -b "$B" -o -2 -e --value-format json fmt
	assert_success
	assert_line --partial '"value":{"a":1}'
	assert_line --partial 'value is not JSON'
	test_must_fail 2 ss-consume -b "$B" --value-format xml fmt
}

@test "-o beginning, end, N, -N, P:OFFSET and -p" {
	for p in 0 1 2; do seq_json 5 | kcat -P -b "$B" -t offs -p $p; done
	run ss-consume -b "$B" -e -o beginning offs
	[ "${#lines[@]}" -eq 15 ]
	run ss-consume -b "$B" -e -o end offs
	assert_success
	assert_output ''
	run ss-consume -b "$B" -e -o 3 -p 1 offs
	[ "$(echo "$output" | jq -c '[.partition,.offset]' | tr -d '\n')" = '[1,3][1,4]' ]
	run ss-consume -b "$B" -e -o -1 offs
	[ "$(echo "$output" | jq -c .offset | sort -u)" = 4 ]
	[ "${#lines[@]}" -eq 3 ]
	run ss-consume -b "$B" -e -o 0:4,2:beginning offs
	[ "$(echo "$output" | jq -r '"\(.partition):\(.offset)"' | sort | tr '\n' ' ')" = '0:4 2:0 2:1 2:2 2:3 2:4 ' ]
	run ss-consume -b "$B" -e -p 0-1 -o 4 offs
	[ "$(echo "$output" | jq -r '"\(.partition):\(.offset)"' | sort | tr '\n' ' ')" = '0:4 1:4 ' ]
	test_must_fail 2 ss-consume -b "$B" -o sideways offs
	test_must_fail 2 ss-consume -b "$B" -o stored offs
	test_must_fail 1 ss-consume -b "$B" -e -p 7 offs
}

@test "-e on empty partitions exits at once" {
	run timeout 10 ss-consume -b "$B" -e empty
	assert_success
	assert_output ''
}

@test "-e ends at the end offsets of its start while a producer keeps writing" {
	seq_json 1000 | ss-produce -b "$B" live
	( i=0; while :; do echo "{\"more\":$i}"; i=$((i+1)); sleep 0.01; done ) |
		ss-produce -b "$B" live 2>/dev/null &
	prod=$!
	sleep 1
	run timeout 20 ss-consume -b "$B" -e live
	kill $prod
	assert_success
	# everything produced before the start, nothing (or little) after: the run ended
	[ "$(echo "$output" | jq -c 'select(.value.n != null)' | wc -l)" -eq 1000 ]
}

@test "a trickle is written out at once, not when a buffer fills" {
	ss-consume -b "$B" -o end trickle >"$T/out" 2>"$T/err" &
	pid=$!
	sleep 1
	echo '{"one":1}' | ss-produce -b "$B" trickle
	wait_lines "$T/out" 1 5    # within 5 s, while the consumer keeps running
	echo '{"two":2}' | ss-produce -b "$B" trickle
	wait_lines "$T/out" 2 5
	kill -INT $pid
	wait_exit $pid
	[ "$wait_status" -eq 130 ]
	[ "$(jq -c .value "$T/out" | tr '\n' ' ')" = '{"one":1} {"two":2} ' ]
}

@test "-c COUNT stops after COUNT records" {
	seq_json 50 | ss-produce -b "$B" count
	run ss-consume -b "$B" -c 7 count
	assert_success
	[ "${#lines[@]}" -eq 7 ]
	run timeout 10 ss-consume -b "$B" -c 0 count
	assert_success
	assert_output ''
}

@test "--until stops each partition before the first record after TIME" {
	for t in 2023-01-01T00:00:00Z 2023-01-01T00:00:01Z 2023-01-01T00:00:02Z 2023-01-01T00:00:03Z; do
		echo "{\"t\":\"$t\"}"
	done | ss-produce -b "$B" --timestamp .t until
	run timeout 20 ss-consume -b "$B" --until 2023-01-01T00:00:01Z until
	assert_success
	[ "$(echo "$output" | jq -r .value.t | tr '\n' ' ')" = '2023-01-01T00:00:00Z 2023-01-01T00:00:01Z ' ]
	[ "$(echo "$output" | jq -r .timestamp | head -1)" = 1672531200000 ]
}

@test "-G: commits what was written; a second run resumes after it; -e works with a group" {
	seq_json 40 | ss-produce -b "$B" --key '.n % 5' grp
	run timeout 30 ss-consume -b "$B" -G g1 -X session.timeout.ms=6000 -c 15 grp
	assert_success
	[ "${#lines[@]}" -eq 15 ]
	echo "$output" >"$T/first"
	run timeout 30 ss-consume -b "$B" -G g1 -X session.timeout.ms=6000 -e grp
	assert_success
	echo "$output" >"$T/second"
	# together exactly the 40 records, none twice
	[ "$(cat "$T/first" "$T/second" | jq -c '[.partition,.offset]' | sort | uniq | wc -l)" -eq 40 ]
	[ "$(cat "$T/first" "$T/second" | wc -l)" -eq 40 ]
}

@test "SIGTERM: flush, commit, leave; exit 143; restart neither loses nor repeats" {
	seq_json 30 | ss-produce -b "$B" sig
	ss-consume -b "$B" -G g2 -X session.timeout.ms=6000 sig >"$T/a" 2>"$T/err" &
	pid=$!
	wait_lines "$T/a" 30
	kill -TERM $pid
	wait_exit $pid
	[ "$wait_status" -eq 143 ]
	seq_json 5 | ss-produce -b "$B" sig
	run timeout 30 ss-consume -b "$B" -G g2 -X session.timeout.ms=6000 -e sig
	assert_success
	[ "${#lines[@]}" -eq 5 ]
	[ "$(echo "$output" | jq .offset | head -1)" -eq 30 ]
}

@test "a closed pipe exits 141 without committing records it could not write" {
	seq_json 20000 | ss-produce -b "$B" pipe
	run bash -c "ss-consume -b '$B' -G g3 -X session.timeout.ms=6000 pipe | head -n 5 >'$T/head'; echo \${PIPESTATUS[0]}"
	[ "${lines[-1]}" = 141 ]
	[ "$(wc -l <"$T/head")" -eq 5 ]
	run timeout 30 ss-consume -b "$B" -G g3 -X session.timeout.ms=6000 -e pipe
	assert_success
	first=$(echo "${lines[0]}" | jq .offset)
	# resumed at or after the 5 read, well before what was fetched but never written
	[ "$first" -ge 5 ] && [ "$first" -lt 5000 ]
	[ "$(echo "$output" | jq .offset | tail -1)" -eq 19999 ]
}

# reader_gone_exit ARGS...: ss-consume ARGS | head -1 on a topic with one record; sets
# $gone_status and $gone_ms (how long ss-consume ran on after head exited)
reader_gone_exit() {
	mkfifo "$T/fifo"
	ss-consume -b "$B" "$@" >"$T/fifo" 2>"$T/err" &
	pid=$!
	head -1 <"$T/fifo" >"$T/line"
	start=$(date +%s%N)
	wait_exit $pid 20
	gone_ms=$(ms_since "$start")
	gone_status=$wait_status
	[ -s "$T/line" ]
}

@test "a reader gone while the topic is quiet: noticed within a second, exit 141" {
	printf '{"n":1}\n' | ss-produce -b "$B" quiet
	reader_gone_exit quiet
	[ "$gone_status" -eq 141 ]
	[ "$gone_ms" -lt 1500 ]
}

@test "-G: a reader gone while the topic is quiet: leaves the group at once, exit 141" {
	printf '{"n":1}\n' | ss-produce -b "$B" quietg
	reader_gone_exit -G gone -X session.timeout.ms=6000 -X debug=cgrp quietg
	[ "$gone_status" -eq 141 ]
	[ "$gone_ms" -lt 1500 ]
	grep -q 'LeaveGroup response' "$T/err"
	# its committed offset is after the record it wrote
	run timeout 30 ss-consume -b "$B" -G gone -X session.timeout.ms=6000 -e quietg
	assert_success
	assert_output ''
}

@test "the consumers of an interrupted ss-asof notice at once that it is gone" {
	printf '{"n":1}\n' | ss-produce -b "$B" quiet
	bash -c "ss-asof <(ss-consume -b '$B' quiet; echo \$? >'$T/l') \
		<(ss-consume -b '$B' quiet; echo \$? >'$T/r') --on .timestamp --ts-unit ms >/dev/null 2>&1 &
		echo \$! >'$T/asof'; wait" &
	sleep 2
	[ ! -e "$T/l" ] && [ ! -e "$T/r" ]
	kill -INT "$(cat "$T/asof")"
	start=$(date +%s%N)
	for _ in $(seq 50); do [ -s "$T/l" ] && [ -s "$T/r" ] && break; sleep 0.05; done
	[ "$(ms_since "$start")" -lt 1500 ]
	[ "$(cat "$T/l")" -eq 141 ] && [ "$(cat "$T/r")" -eq 141 ]
}

@test "unreachable broker on a terminal: said at once; silent when stderr is not one" {
	start=$(date +%s%N)
	on_terminal "$T/tty" ss-consume -b 127.0.0.1:1 --timeout 4s -e quiet
	for _ in $(seq 20); do grep -q 'connecting' "$T/tty" && break; sleep 0.05; done
	[ "$(ms_since "$start")" -lt 1000 ]
	grep -q 'ss-consume: connecting to 127.0.0.1:1' "$T/tty"
	wait_exit $tty_pid 20
	[ "$wait_status" -eq 75 ]
	grep -q 'cannot reach brokers' "$T/tty"
	run timeout 20 ss-consume -b 127.0.0.1:1 --timeout 1s -e quiet
	[ "$status" -eq 75 ]
	refute_output --partial 'connecting'
	# a broker that answers takes the line back: nothing is left of it
	on_terminal "$T/tty2" ss-consume -b "$B" -e quiet
	wait_exit $tty_pid 20
	[ "$wait_status" -eq 0 ]
	! grep -q connecting "$T/tty2"
}

@test "backpressure: a reader stalled beyond max.poll.interval.ms keeps the group; nothing lost or repeated" {
	# 11 MB spread evenly, 2.8 MB a partition: the mock keeps 5 MB per partition and drops
	# the oldest message sets beyond that (the log start moves; ss-consume rightly starts
	# there). Null keys went to one random partition for 10 ms at a time, and now and then
	# one partition got over 5 MB: its first records were gone before the test read.
	python3 -c '
import json
for i in range(60000): print(json.dumps({"n": i, "pad": "x" * 150}))' | ss-produce -b "$B" --partition '.n % 4' bp
	mkfifo "$T/fifo"
	ss-consume -b "$B" -G g4 -X session.timeout.ms=6000 -X max.poll.interval.ms=6000 -e bp \
		>"$T/fifo" 2>"$T/err" &
	pid=$!
	# the reader opens the pipe, stalls for 12 s (twice the poll interval), then reads all
	( exec <"$T/fifo"; sleep 12; cat >"$T/out" ) &
	reader=$!
	wait_exit $pid 90
	[ "$wait_status" -eq 0 ]
	wait $reader
	run cat "$T/err"
	refute_output --partial 'poll'
	[ "$(wc -l <"$T/out")" -eq 60000 ]
	[ "$(jq .value.n "$T/out" | sort -n | uniq | wc -l)" -eq 60000 ]
}

@test "O_NONBLOCK on the output pipe stays private: stderr and the shell sharing the pipe still block" {
	seq_json 10 | ss-produce -b "$B" nonblock
	{
		ss-consume -b "$B" nonblock 2>/dev/null &
		pid=$!
		wait_lines "$T/out" 10
		# the flags of the pipe this group shares with ss-consume's stdout, as 2>&1 would
		sed -n 's/^flags:[[:space:]]*//p' /proc/$BASHPID/fdinfo/1 >"$T/flags"
		kill $pid
		wait $pid || true
	} | cat >"$T/out"
	[ -s "$T/flags" ]
	assert_equal "$(( 8#$(cat "$T/flags") & 8#4000 ))" 0
	[ "$(wc -l <"$T/out")" -eq 10 ]
}

@test "--offsets-from resumes after the offsets a state file recorded as applied" {
	seq_json 10 | ss-produce -b "$B" --partition '.n % 2' resume
	ss-consume -b "$B" -e -c 6 resume | tee "$T/first" | ss-cache "$T/state.db" put --key .value.n
	run ss-consume -b "$B" -e --offsets-from "$T/state.db" resume
	assert_success
	echo "$output" >"$T/second"
	# the second run starts right after what the state file applied, per partition
	for p in 0 1; do
		applied=$(sqlite3 "$T/state.db" "SELECT offset FROM ss_offsets WHERE topic='resume' AND partition=$p")
		[ -n "$applied" ] || applied=-1
		first=$(jq "select(.partition == $p) | .offset" "$T/second" | head -1)
		[ -z "$first" ] || [ "$first" -eq $((applied + 1)) ]
	done
	[ "$(wc -l <"$T/second")" -eq 4 ]
	[ "$(cat "$T/first" "$T/second" | jq -c '[.partition,.offset]' | sort -u | wc -l)" -eq 10 ]
	# a state file that does not exist yet: start as -o says
	run ss-consume -b "$B" -e --offsets-from "$T/none.db" resume
	[ "${#lines[@]}" -eq 10 ]
}

@test "--offsets-from DIR: the largest applied offset per topic-partition over its *.db files" {
	seq_json 12 | ss-produce -b "$B" --partition '.n % 3' offdir
	# partition files as ss-cache --state-dir writes them, and two older single files
	ss-consume -b "$B" -e -p 0 -c 2 offdir | ss-cache --state-dir "$T/dir" put --key .value.n
	ss-consume -b "$B" -e -p 1 offdir | ss-cache --state-dir "$T/dir" put --key .value.n
	ss-consume -b "$B" -e -p 0 -c 3 offdir | ss-cache "$T/dir/old.db" put --key .value.n
	ss-consume -b "$B" -e -p 1 -c 1 offdir | ss-cache "$T/dir/older.db" put --key .value.n
	echo 'not a state file' >"$T/dir/notes.txt"
	run ss-cache --state-dir "$T/dir" stats
	assert_output --partial '"offsets":[{"topic":"offdir","partition":0,"offset":1},{"topic":"offdir","partition":1,"offset":3}]'
	# partition 0: max(1, 2) + 1; partition 1: max(3, 0) + 1 = its end; partition 2: no state
	run ss-consume -b "$B" -e --offsets-from "$T/dir" offdir
	assert_success
	[ "$(echo "$output" | jq -r '"\(.partition):\(.offset)"' | sort | tr '\n' ' ')" = '0:3 2:0 2:1 2:2 2:3 ' ]
	# an empty directory: nothing applied, also where a group has committed offsets
	mkdir "$T/empty"
	run ss-consume -b "$B" -e --offsets-from "$T/empty" offdir
	[ "${#lines[@]}" -eq 12 ]
	ss-consume -b "$B" -G g7 -X session.timeout.ms=6000 -e offdir | wc -l >"$T/n7"
	[ "$(cat "$T/n7")" -eq 12 ]
	ss-consume -b "$B" -G g7 -X session.timeout.ms=6000 -e --offsets-from "$T/empty" offdir >"$T/g7"
	[ "$(wc -l <"$T/g7")" -eq 12 ]
}

# member NAME: a group member piping to ss-cache --state-dir, whose sink starts once the
# file $T/NAME.go exists; the consumer's pid in $T/NAME.pid, what it wrote in $T/NAME.out.
member() {
	{
		ss-consume -b "$B" -G g6 -o beginning -X session.timeout.ms=6000 -X heartbeat.interval.ms=500 \
			--offsets-from "$T/dir" handover 2>"$T/$1.err" &
		echo $! >"$T/$1.pid"
		wait $!
	} | tee "$T/$1.out" | { until [ -e "$T/$1.go" ]; do sleep 0.1; done; exec ss-cache --state-dir "$T/dir" put --key .value.n 2>"$T/$1.sink"; }
}

# wait_keys N: until the state directory holds N keys (20 s at most)
wait_keys() {
	for _ in $(seq 200); do
		[ "$(ss-cache --state-dir "$T/dir" stats | jq .keys)" -ge "$1" ] && return 0
		sleep 0.1
	done
	echo "state has $(ss-cache --state-dir "$T/dir" stats | jq .keys) keys, not $1" >&2
	return 1
}

@test "-G --offsets-from DIR: partitions change hands after what the sink applied, never twice" {
	seq_json 10 | ss-produce -b "$B" --partition '.n % 2' handover
	# b joins while a's sink has applied nothing: a's revoke holds the rebalance back until
	# its sink has applied what a wrote (a's sink starts 6 s on, or once b had records)
	member a &
	a=$!
	wait_lines "$T/a.out" 10
	touch "$T/b.go"
	member b &
	b=$!
	n=10
	start=$SECONDS
	for _ in $(seq 60); do
		[ -s "$T/b.out" ] || [ $((SECONDS - start)) -ge 6 ] && touch "$T/a.go"
		[ -s "$T/b.out" ] && break
		# two records at a time until b owns a partition (the group has rebalanced)
		seq $n $((n + 1)) | jq -c '{n: .}' | ss-produce -b "$B" --partition '.n % 2' handover
		n=$((n + 2))
		sleep 0.5
	done
	wait_keys $n
	[ -s "$T/b.out" ]
	# b leaves: a takes its partition over after what b's sink applied
	kill -TERM "$(cat "$T/b.pid")"
	wait_exit "$b"
	seq $n $((n + 9)) | jq -c '{n: .}' | ss-produce -b "$B" --partition '.n % 2' handover
	n=$((n + 10))
	wait_keys $n
	kill -TERM "$(cat "$T/a.pid")"
	wait_exit "$a"
	# every record written once over both members, applied once, and the state at the end
	[ "$(cat "$T/a.out" "$T/b.out" | wc -l)" -eq $n ]
	[ "$(cat "$T/a.out" "$T/b.out" | jq -c '[.partition,.offset]' | sort -u | wc -l)" -eq $n ]
	run cat "$T/a.sink" "$T/b.sink"
	assert_output ''
	run ss-cache --state-dir "$T/dir" stats
	assert_output --partial "\"keys\":$n,"
	last=$((n / 2 - 1))
	assert_output --partial "\"offsets\":[{\"topic\":\"handover\",\"partition\":0,\"offset\":$last},{\"topic\":\"handover\",\"partition\":1,\"offset\":$last}]"
}

@test "--checkpoint DB:NAME seeks to the requests ss-checkpoint leaves and deletes them" {
	seq_json 10 | ss-produce -b "$B" seek
	sqlite3 "$T/cp.db" 'CREATE TABLE ss_seek_request(checkpoint TEXT NOT NULL, topic TEXT NOT NULL,
		partition INTEGER NOT NULL, offset INTEGER NOT NULL, PRIMARY KEY(checkpoint, topic, partition))'
	ss-consume -b "$B" --checkpoint "$T/cp.db:weather" seek >"$T/out" &
	pid=$!
	wait_lines "$T/out" 10
	sqlite3 "$T/cp.db" "INSERT INTO ss_seek_request VALUES('other','seek',0,0),('weather','seek',0,6)"
	wait_lines "$T/out" 14
	kill -TERM $pid
	wait_exit $pid
	[ "$(jq -c .offset "$T/out" | tr '\n' ' ')" = '0 1 2 3 4 5 6 7 8 9 6 7 8 9 ' ]
	run sqlite3 "$T/cp.db" 'SELECT checkpoint FROM ss_seek_request'
	assert_output other
}

@test "several topics at once" {
	echo '{"a":1}' | ss-produce -b "$B" multi1
	echo '{"b":2}' | ss-produce -b "$B" multi2
	run ss-consume -b "$B" -e multi1 multi2
	assert_success
	[ "$(echo "$output" | jq -r .topic | sort | tr '\n' ' ')" = 'multi1 multi2 ' ]
}

@test "brokers from \$SS_BROKERS and from -F; -X errors are usage errors" {
	SS_BROKERS=$B run ss-consume -e env
	assert_success
	[ "${#lines[@]}" -ge 2 ]
	printf '# comment\nbootstrap.servers = %s\n\nfetch.wait.max.ms=50\n' "$B" >"$T/conf"
	run ss-consume -F "$T/conf" -e env
	assert_success
	[ "${#lines[@]}" -ge 2 ]
	test_must_fail 2 ss-consume -b "$B" -X fetch.wait.max.ms=soon env
	test_must_fail 2 ss-consume -b "$B" -X novalue env
	test_must_fail 2 ss-consume -b "$B" -F "$T/missing" env
}

@test "unreachable broker: a clear message and exit 75 after --timeout" {
	run timeout 20 ss-consume -b 127.0.0.1:1 --timeout 2s -e env
	[ "$status" -eq 75 ]
	assert_output --partial 'ss-consume: cannot reach brokers 127.0.0.1:1'
}

@test "brokers lost in the middle of a run: exit 75 after --timeout, output written" {
	ss-mock-broker --no-stdin --topic gone:1 >"$T/mock.out" 2>/dev/null 3>&- &
	mock=$!
	for _ in $(seq 100); do b=$(sed -n 's/^BROKERS=//p' "$T/mock.out"); [ -n "$b" ] && break; sleep 0.1; done
	seq_json 3 | ss-produce -b "$b" gone
	ss-consume -b "$b" --timeout 3s gone >"$T/out" 2>"$T/err" &
	pid=$!
	wait_lines "$T/out" 3
	kill $mock
	wait_exit $pid 30
	[ "$wait_status" -eq 75 ]
	[ "$(wc -l <"$T/out")" -eq 3 ]
	grep -q 'lost the brokers' "$T/err"
}

@test "--end-file: written at an end asked for, with the last offset per partition; not after a kill" {
	printf '{"n":%d}\n' 1 2 3 | ss-produce -b "$B" --partition 0 endf
	# -e: the last offset written of each partition, null where there was none
	ss-consume -b "$B" -e --end-file "$T/end" endf >/dev/null
	run cat "$T/end"
	assert_output '{"topic":"endf","partition":0,"last":2}
{"topic":"endf","partition":1,"last":null}'
	# resumed after the end: nothing written in this run
	ss-consume -b "$B" -e -o 0:3,1:0 --end-file "$T/end" endf >/dev/null
	run cat "$T/end"
	assert_output '{"topic":"endf","partition":0,"last":null}
{"topic":"endf","partition":1,"last":null}'
	# a live consumer killed: the file of the run before is gone from its start
	ss-consume -b "$B" -c 100 --end-file "$T/end" endf >"$T/out" 2>/dev/null &
	pid=$!
	wait_lines "$T/out" 3
	[ ! -e "$T/end" ]
	kill -9 $pid
	wait $pid || true
	[ ! -e "$T/end" ]
	# -c: the count reached is an end asked for
	ss-consume -b "$B" -c 2 --end-file "$T/end" endf >/dev/null
	[ "$(wc -l <"$T/end")" -eq 2 ]
	test_must_fail 2 ss-consume -b "$B" --end-file "$T/end" endf
	assert_output --partial '--end-file needs an end'
}

@test "no live line when stderr is not a terminal" {
	run bash -c "ss-consume -b '$B' -e env 2>'$T/err' >/dev/null"
	assert_success
	[ ! -s "$T/err" ]
}

@test "usage: -h prints the synopsis, misuse exits 2" {
	run ss-consume -h
	assert_success
	assert_output --partial 'usage: ss-consume'
	test_must_fail 2 ss-consume
	test_must_fail 2 ss-consume --bogus t
	test_must_fail 2 ss-consume -b "$B" -c many t
	test_must_fail 2 ss-consume -b "$B" -G g -p 0 t
	test_must_fail 2 ss-consume -b "$B" --from yesterdayish t
	test_must_fail 2 ss-consume -b '' t
	assert_output --partial "ss-consume: -b '': no brokers (expected host:port,...)"
}

@test "kcat's options are answered with the ss way to say them, exit 2" {
	test_must_fail 2 ss-consume -b "$B" -t env
	assert_output --partial 'ss-consume: -t is kcat'"'"'s option: topics are arguments here: ss-consume [-b brokers] env'
	test_must_fail 2 ss-consume -b "$B" -C env
	assert_output --partial 'ss-consume only consumes: drop -C'
	test_must_fail 2 ss-consume -b "$B" -P env
	assert_output --partial 'to produce, use ss-produce TOPIC'
	test_must_fail 2 ss-consume -b "$B" -K: env
	assert_output --partial "jq -r '\"\\(.key):\\(.value)\"'"
	test_must_fail 2 ss-consume -b "$B" -q env
	assert_output --partial 'quiet already'
	test_must_fail 2 ss-consume -b "$B" -o s@1672531200000 env
	assert_output --partial 'say -o @2023-01-01T00:00:00Z, or --from 2023-01-01T00:00:00Z'
	test_must_fail 2 ss-consume -b "$B" -o e@1672531200000 env
	assert_output --partial 'say --until 2023-01-01T00:00:00Z'
	# what they suggest works
	run timeout 30 ss-consume -b "$B" -e -o @2023-01-01T00:00:00Z env
	[ "$status" -ne 2 ]
}

@test "-e on a terminal: a live line (records, rate, share of the offsets, time left), taken back; none in a file" {
	seq 100000 | awk '{printf "{\"n\":%d}\n", $1}' | ss-produce -b "$B" --key .n prog
	# stderr the terminal, a reader slower than the consumer: the line, taken back at the end
	script -qec "ss-consume -b '$B' -e prog | (sleep 1; cat >'$T/out')" /dev/null </dev/null >"$T/tty"
	[ "$(wc -l <"$T/out")" -eq 100000 ]
	grep -aqE 'ss-consume: [0-9]+ records, [0-9]+/s, [0-9]+%, [0-9hms]+ left' "$T/tty"
	[ "$(tail -c 4 "$T/tty" | od -An -c | tr -d ' ')" = '\r033[K' ]
	# stdout on the terminal too: the records' lines are not broken by it
	script -qec "ss-consume -b '$B' -e prog" /dev/null </dev/null >"$T/tty2"
	test_must_fail 1 grep -aq 'records, ' "$T/tty2"
	# stderr a file: nothing; --no-progress: nothing; --progress: the line even in a file
	ss-consume -b "$B" -e prog 2>"$T/err" | (sleep 1; cat >/dev/null)
	[ ! -s "$T/err" ]
	script -qec "ss-consume -b '$B' -e --no-progress prog | (sleep 1; cat >/dev/null)" /dev/null </dev/null >"$T/tty3"
	[ ! -s "$T/tty3" ]
	ss-consume -b "$B" -e --progress prog 2>"$T/err2" | (sleep 1; cat >/dev/null)
	grep -aqE 'ss-consume: [0-9]+ records' "$T/err2"
}
