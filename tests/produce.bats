#!/usr/bin/env bats
# ss-produce against the mock cluster (ss-mock-broker); kcat and ss-consume read back.
load helpers
load kafka
bats_require_minimum_version 1.5.0

setup_file() {
	mock_start --topic plain:1 --topic expr:3 --topic env-src:1 --topic env-dst:1 \
		--topic trickle:1 --topic dry:1 --topic bad-fail:1 --topic bad-skip:1 --topic bad-dl:1 \
		--topic term:1 --topic parts:2 --topic raw:1 \
		--topic murmur2:2 --topic murmur3:3 --topic murmur7:7 --topic murmur16:16 \
		--topic crc7:7 --topic crc16:16 --topic textkeys:5 --topic order:1 --topic quiet:1 \
		--topic spread:4 --topic order4:4
}
teardown_file() { mock_stop; }

@test "default: the whole line is the value, the key is null" {
	printf '{"a":1}\n[1,2]\n"text"\n\n   \n{"b":{"c":null}}\n' >"$T/in"
	run ss-produce -b "$B" plain <"$T/in"
	assert_success
	kcat -C -b "$B" -t plain -e -q -f '%K|%s\n' >"$T/back"
	run cat "$T/back"
	assert_output $'-1|{"a":1}\n-1|[1,2]\n-1|"text"\n-1|{"b":{"c":null}}'
}

@test "--key, --value, --headers, --partition, --timestamp: plain paths and jq expressions" {
	echo '{"id":"u1","n":2,"t":"2024-05-01T12:00:00Z","body":{"x":1},"meta":{"src":"a","bin":{"base64":"aGk="}}}' |
		ss-produce -b "$B" --key .id --value .body --headers .meta --partition '.n' --timestamp .t expr
	echo '{"id":7,"n":1,"t":1714564800}' |
		ss-produce -b "$B" --key '.id * 2' --value '{sum: (.n + .id)}' --partition '.n - 1' --timestamp .t expr
	run kcat -C -b "$B" -t expr -p 2 -e -q -f '%k|%s|%T|%h\n'
	assert_output 'u1|{"x":1}|1714564800000|src=a,bin=hi'
	run kcat -C -b "$B" -t expr -p 0 -e -q -f '%k|%s|%T\n'
	assert_output '14|{"sum":8}|1714564800000'
	run ss-consume -b "$B" -e -p 2 expr
	assert_output --partial '"headers":{"src":"a","bin":"hi"}'
	test_must_fail 3 ss-produce -b "$B" --key '.id |||' expr </dev/null
}

@test "--envelope copies key, value, headers and timestamp; binary and tombstones survive" {
	printf 'k1|{"a":1}\n' | kcat -P -b "$B" -t env-src -K '|' -H h=1 -H h=2 -H other=x
	printf 'k2|plain text\n' | kcat -P -b "$B" -t env-src -K '|'
	printf 'k3|\xff\x00\x01' | kcat -P -b "$B" -t env-src -K '|' -D '#'
	printf 'k4|' | kcat -P -b "$B" -t env-src -K '|' -D '#' -Z
	ss-consume -b "$B" -e env-src >"$T/src"
	run ss-produce -b "$B" --envelope env-dst <"$T/src"
	assert_success
	fmt='%k|%s|%h|%T|%S\n'
	kcat -C -b "$B" -t env-src -e -q -f "$fmt" >"$T/a"
	kcat -C -b "$B" -t env-dst -e -q -f "$fmt" >"$T/b"
	cmp "$T/a" "$T/b"
	grep -q '^k4||.*|-1$' "$T/b"   # a tombstone: NULL value, length -1
	ss-consume -b "$B" -e env-dst | jq -c 'del(.topic)' >"$T/c"
	jq -c 'del(.topic)' "$T/src" | cmp - "$T/c"
}

@test "keys go to the partition Kafka's Java producer picks (murmur2), for any partition count" {
	python3 "$ROOT/tests/partition-ref.py" keys >"$T/keys"
	for n in 2 3 7 16; do
		run ss-produce -b "$B" --envelope "murmur$n" <"$T/keys"
		assert_success
		kcat -C -b "$B" -t "murmur$n" -e -q -f '%p %s\n' >"$T/got$n"
		run python3 "$ROOT/tests/partition-ref.py" check murmur2 $n <"$T/got$n"
		assert_success
	done
	# text keys from an expression, as most pipelines give them
	users=()
	for i in $(seq 0 40); do users+=("user-$i"); done
	for i in "${!users[@]}"; do echo "{\"user\":\"${users[$i]}\",\"i\":$i}"; done |
		ss-produce -b "$B" --key .user --value .i textkeys
	kcat -C -b "$B" -t textkeys -e -q -f '%p %s\n' | sort -k2n >"$T/text"
	python3 "$ROOT/tests/partition-ref.py" partitions murmur2 5 "${users[@]}" | diff - "$T/text"
}

@test "-X partitioner=consistent overrides the default: librdkafka's CRC32 partitions" {
	python3 "$ROOT/tests/partition-ref.py" keys >"$T/keys"
	for n in 7 16; do
		run ss-produce -b "$B" --envelope -X partitioner=consistent "crc$n" <"$T/keys"
		assert_success
		kcat -C -b "$B" -t "crc$n" -e -q -f '%p %s\n' >"$T/got"
		run python3 "$ROOT/tests/partition-ref.py" check crc32 $n <"$T/got"
		assert_success
		# the two hashes disagree on these keys, so the check above tells them apart
		run python3 "$ROOT/tests/partition-ref.py" check murmur2 $n <"$T/got"
		assert_failure
	done
}

@test "records sent in batches and alone keep their input order; null and empty keys and values survive" {
	# plain records go to librdkafka in batches, those with a timestamp, headers or a
	# partition alone, after the batch before them
	{
		printf '{"key":"a","value":1}\n{"key":"","value":2}\n'
		printf '{"key":null,"value":3,"timestamp":1714564800000}\n{"key":"b","value":null}\n'
		printf '{"key":"c","value":5,"headers":{"h":"x"}}\n{"key":"d","value":6,"p":0}\n'
		printf '{"key":"e","value":""}\n'
		seq 8 3000 | sed 's/.*/{"key":"k&","value":&}/'
	} >"$T/in"
	run ss-produce -b "$B" --envelope --partition .p order <"$T/in"
	assert_success
	kcat -C -b "$B" -t order -e -q -f '%K:%k|%S:%s|%h\n' >"$T/back"
	run head -7 "$T/back"
	assert_output $'1:a|1:1|\n0:|1:2|\n-1:|1:3|\n1:b|-1:|\n1:c|1:5|h=x\n1:d|1:6|\n1:e|0:|'
	run kcat -C -b "$B" -t order -o 2 -c 1 -e -q -f '%T\n'
	assert_output 1714564800000
	[ "$(tail -n +8 "$T/back" | cut -d'|' -f2 | cut -d: -f2 | tr '\n' ' ')" = "$(seq 8 3000 | tr '\n' ' ')" ]
}

@test "a trickle is sent as each line is read, not at end of input" {
	mkfifo "$T/in"
	ss-produce -b "$B" trickle <"$T/in" 2>"$T/err" &
	pid=$!
	exec 7>"$T/in"
	echo '{"first":1}' >&7
	for _ in $(seq 50); do
		n=$(kcat -C -b "$B" -t trickle -e -q | wc -l)
		[ "$n" -ge 1 ] && break
		sleep 0.1
	done
	[ "$n" -eq 1 ]    # delivered within 5 s while the input stays open
	echo '{"second":2}' >&7
	exec 7>&-
	wait_exit $pid
	[ "$wait_status" -eq 0 ]
	[ "$(kcat -C -b "$B" -t trickle -e -q | wc -l)" -eq 2 ]
}

@test "a quiet input is sent at once: a trickle does not wait for linger.ms" {
	# a linger.ms of a minute: only the flush once the input is quiet sends the line in time
	mkfifo "$T/in"
	ss-produce -b "$B" -X linger.ms=60000 -X message.timeout.ms=120000 quiet <"$T/in" 2>"$T/err" &
	pid=$!
	exec 7>"$T/in"
	echo '{"first":1}' >&7
	run timeout 20 kcat -C -b "$B" -t quiet -o beginning -c 1 -q
	exec 7>&-
	assert_success
	assert_output '{"first":1}'
	wait_exit $pid
	[ "$wait_status" -eq 0 ]
	run cat "$T/err"
	assert_output ''
}

@test "records without a key are spread over the partitions, each partition in input order" {
	seq 20000 | sed 's/.*/{"n":&}/' >"$T/in"
	run ss-produce -b "$B" -X batch.num.messages=1000 spread <"$T/in"
	assert_success
	kcat -C -b "$B" -t spread -e -q -f '%p %s\n' | sed 's/{"n":\(.*\)}/\1/' >"$T/back"
	run sort -n -k2 "$T/back"
	[ "$(cut -d' ' -f2 <<<"$output" | tr '\n' ' ')" = "$(seq 20000 | tr '\n' ' ')" ]
	[ "$(cut -d' ' -f1 "$T/back" | sort -u | wc -l)" -ge 2 ]
	for p in 0 1 2 3; do
		awk -v p=$p '$1 == p { print $2 }' "$T/back" >"$T/p$p"
		sort -n -c "$T/p$p"
	done
}

@test "keyed records over partitions, some sent alone, keep each key's input order" {
	# (awk, not a shell loop: bats' DEBUG trap runs per command, ~1.6 s of CPU here)
	seq 6000 | awk '{ printf "{\"key\":\"k%d\",\"value\":%d%s}\n", $1 % 10, $1,
			 $1 % 7 == 0 ? ",\"timestamp\":1714564800000" : "" }' >"$T/in"
	run ss-produce -b "$B" --envelope -X batch.num.messages=100 order4 <"$T/in"
	assert_success
	kcat -C -b "$B" -t order4 -e -q -f '%k %s\n' >"$T/back"
	[ "$(wc -l <"$T/back")" -eq 6000 ]
	for k in $(seq 0 9); do
		awk -v k=k$k '$1 == k { print $2 }' "$T/back" >"$T/k$k"
		sort -n -c "$T/k$k"
		[ "$(wc -l <"$T/k$k")" -eq 600 ]
	done
}

@test "--key and --value projections are sent as jq prints them" {
	run ss-produce -b 127.0.0.1:1 --dry-run --key '[.k, .n]' --value '{v: .v, none: .x, n: .n}' proj <<<'{"k":"a","n":1.0,"v":[1, "\u00e9"]}'
	assert_success
	assert_output '{"topic":"proj","partition":null,"timestamp":null,"key":["a",1],"value":{"v":[1,"é"],"none":null,"n":1},"headers":{}}'
	run --separate-stderr ss-produce -b 127.0.0.1:1 --dry-run --value '[.k[0]]' --on-error skip proj <<<'{"k":"a"}'
	assert_success
	assert_output ''
	[[ "$stderr" == *'<stdin>:1: --value [.k[0]]: Cannot index string with number (skipped)'* ]]
}

@test "records of more members than are noted: fields found as jq finds them, the last duplicate winning" {
	# 73 members a line (64 are noted while it is validated; beyond that, each field is
	# looked at over the line); "key" and "k" repeated at the end
	python3 -c '
for i in range(3):
    f = ",".join("\"f%d\":%s" % (j, [j, "\"x\"", "[%d]" % j][j % 3]) for j in range(69))
    print("{\"key\":\"a%d\",\"k\":%d,%s,\"value\":[%d],\"key\":\"last%d\",\"k\":{\"n\":%d}}" % (i, i, f, i, i, i))
' >"$T/in"
	run ss-produce -b 127.0.0.1:1 --dry-run --key '[.k, .f68]' --value .key proj <"$T/in"
	assert_success
	assert_output "$(jq -c '{topic: "proj", partition: null, timestamp: null, key: [.k, .f68], value: .key, headers: {}}' "$T/in")"
	run ss-produce -b 127.0.0.1:1 --dry-run --envelope proj <"$T/in"
	assert_success
	assert_output "$(jq -c '{topic: "proj", partition: null, timestamp: null, key: .key, value: .value, headers: {}}' "$T/in")"
}

@test "--dry-run prints what would be sent and sends nothing" {
	run ss-produce -b "$B" --dry-run --key .k --partition .p dry <<<'{"k":"a","p":0,"v":[1]}'
	assert_success
	assert_output '{"topic":"dry","partition":0,"timestamp":null,"key":"a","value":{"k":"a","p":0,"v":[1]},"headers":{}}'
	run ss-produce -b 127.0.0.1:1 --dry-run --envelope dry <<<'{"key":null,"value":null,"headers":{"h":["1","2"]}}'
	assert_success
	assert_output '{"topic":"dry","partition":null,"timestamp":null,"key":null,"value":null,"headers":{"h":["1","2"]}}'
	run kcat -C -b "$B" -t dry -e -q
	assert_output ''
}

@test "invalid JSON under --on-error fail (default): every line before it delivered, exit 1 with the line" {
	printf '{"n":1}\n{"n":2}\n{"n":3,\n{"n":4}\n' >"$T/in"
	run ss-produce -b "$B" bad-fail <"$T/in"
	[ "$status" -eq 1 ]
	assert_output --partial 'ss-produce: <stdin>:3:'
	run kcat -C -b "$B" -t bad-fail -e -q
	assert_output $'{"n":1}\n{"n":2}'
}

@test "invalid JSON under --on-error skip and dead-letter: the lines around it are delivered" {
	printf '{"n":1}\nnope\n{"n":3}\n' >"$T/in"
	run ss-produce -b "$B" --on-error skip bad-skip <"$T/in"
	assert_success
	assert_output --partial '<stdin>:2:'
	run kcat -C -b "$B" -t bad-skip -e -q
	assert_output $'{"n":1}\n{"n":3}'
	run ss-produce -b "$B" --on-error "dead-letter=$T/dl" bad-dl <"$T/in"
	assert_success
	run jq -c '[.line, .raw]' "$T/dl"
	assert_output '[2,"nope"]'
	[ "$(kcat -C -b "$B" -t bad-dl -e -q | wc -l)" -eq 2 ]
}

@test "a record whose fields cannot be built is bad input: reported with its line" {
	printf '%s\n' '{"p":0,"h":{"a":"1"}}' '{"p":"x"}' '{"p":0,"h":[1]}' '{"p":0,"v":{"base64":"%%%"}}' '{"p":0}' \
		'{"p":0,"h":"a=1"}' '{"p":0,"h":[["a"]]}' '{"p":0,"h":[[1,"x"]]}' '{"p":0,"h":[["a","1"],["b","2"],["a","3"]]}' >"$T/in"
	run ss-produce -b "$B" --dry-run --partition .p --headers .h --value '.v // .' --on-error skip bad-skip <"$T/in"
	assert_success
	assert_line --partial '<stdin>:2: --partition .p: expected an integer (skipped)'
	assert_line --partial '<stdin>:3: --headers .h: an array of headers must hold [name, value] pairs (skipped)'
	assert_line --partial '<stdin>:4: --value .v // .: invalid base64'
	assert_line --partial '<stdin>:6: --headers .h: headers must be an object or an array of [name, value] pairs (skipped)'
	assert_line --partial '<stdin>:7: --headers .h: an array of headers must hold [name, value] pairs (skipped)'
	assert_line --partial '<stdin>:8: --headers .h: a header name must be a string or {"base64":...} (skipped)'
	[ "$(echo "$output" | grep -c '^{"topic"')" -eq 3 ]
	assert_line --partial '"headers":[["a","1"],["b","2"],["a","3"]]}'
}

@test "--envelope: a timestamp that is not Kafka's integer names the field and what it takes" {
	printf '%s\n' '{"key":null,"value":1,"timestamp":"2023-01-01T00:00:00Z","headers":{}}' >"$T/in"
	test_must_fail 1 ss-produce --dry-run --envelope t <"$T/in"
	assert_output "ss-produce: <stdin>:1: envelope .timestamp: expected an integer, Kafka's milliseconds since the epoch (--timestamp EXPR takes a time in any form)"
	run ss-produce --dry-run --envelope --timestamp .timestamp t <"$T/in"
	assert_success
	assert_output --partial '"timestamp":1672531200000'
}

@test "headers: an object when each name's headers are adjacent, else [name, value] pairs in order" {
	printf '%s\n' '{"value":1,"headers":{"a":["1","2"],"b":null}}' \
		'{"value":2,"headers":[["a","1"],["a","2"],["b",null]]}' \
		'{"value":3,"headers":[["a","1"],["b","2"],["a",{"base64":"/w=="}]]}' \
		'{"value":4,"headers":[[{"base64":"/w=="},"x"]]}' \
		'{"value":5,"headers":[]}' '{"value":6,"headers":{}}' '{"value":7,"headers":null}' >"$T/in"
	run ss-produce --dry-run --envelope t <"$T/in"
	assert_success
	echo "$output" | jq -c .headers >"$T/h"
	run cat "$T/h"
	assert_output "$(printf '%s\n' '{"a":["1","2"],"b":null}' '{"a":["1","2"],"b":null}' \
		'[["a","1"],["b","2"],["a",{"base64":"/w=="}]]' '[[{"base64":"/w=="},"x"]]' '{}' '{}' '{}')"
}

@test "--raw sends lines that are not JSON as they are" {
	printf 'not json\n{"a":1}\n' | ss-produce -b "$B" --raw raw
	run kcat -C -b "$B" -t raw -e -q
	assert_output $'not json\n{"a":1}'
	test_must_fail 2 ss-produce -b "$B" --raw --key .a raw </dev/null
}

@test "a record that cannot be delivered is reported with its line number; non-zero exit" {
	printf '{"p":0}\n{"p":5}\n{"p":1}\n' >"$T/in"
	run ss-produce -b "$B" --partition .p parts <"$T/in"
	[ "$status" -ne 0 ]
	assert_output --partial '<stdin>:2:'
	[ "$(kcat -C -b "$B" -t parts -e -q | wc -l)" -eq 2 ]
}

@test "records not delivered after the broker went away are named by their lines, those sent alone too" {
	ss-mock-broker --no-stdin --topic gone:1 </dev/null >"$T/m.out" 2>"$T/m.err" 3>&- &
	mpid=$!
	wait_lines "$T/m.out" 1
	B2=$(sed -n 's/^BROKERS=//p' "$T/m.out")
	mkfifo "$T/in"
	ss-produce -b "$B2" -X message.timeout.ms=2000 --envelope gone <"$T/in" 2>"$T/err" &
	pid=$!
	exec 7>"$T/in"
	printf '{"value":1}\n{"value":2,"timestamp":1714564800000}\n' >&7
	run timeout 20 kcat -C -b "$B2" -t gone -o beginning -c 2 -q
	assert_success
	kill $mpid
	wait $mpid || true
	# a record sent alone (it has a timestamp) and one through its partition's lane
	printf '{"value":3,"timestamp":1714564800000}\n{"value":4}\n' >&7
	exec 7>&-
	wait_exit $pid 30
	[ "$wait_status" -ne 0 ]
	run grep -c 'not delivered' "$T/err"
	assert_output 2
	run cat "$T/err"
	assert_output --partial '<stdin>:3: not delivered'
	assert_output --partial '<stdin>:4: not delivered'
}

@test "unreachable broker: a clear message and exit 75" {
	run timeout 20 ss-produce -b 127.0.0.1:1 --timeout 2s plain <<<'{"a":1}'
	[ "$status" -eq 75 ]
	assert_output --partial 'ss-produce: cannot reach brokers 127.0.0.1:1'
}

@test "no input: exit 0 at once, no broker needed" {
	start=$(date +%s%N)
	run timeout 20 ss-produce -b 127.0.0.1:1 plain </dev/null
	assert_success
	assert_output ''
	run timeout 20 ss-produce -b 127.0.0.1:1 plain < <(printf '\n\n')
	assert_success
	[ "$(ms_since "$start")" -lt 2000 ]
}

@test "waiting for input, an unreachable broker still ends the run after --timeout" {
	start=$(date +%s%N)
	run timeout 20 bash -c "sleep 5 | ss-produce -b 127.0.0.1:1 --timeout 1s plain"
	[ "$status" -eq 75 ]
	assert_output --partial 'cannot reach brokers'
}

@test "unreachable broker on a terminal: a record waiting says so at once" {
	start=$(date +%s%N)
	on_terminal "$T/tty" "echo '{}' | ss-produce -b 127.0.0.1:1 --timeout 4s plain"
	for _ in $(seq 20); do grep -q 'connecting' "$T/tty" && break; sleep 0.05; done
	[ "$(ms_since "$start")" -lt 1000 ]
	grep -q 'ss-produce: connecting to 127.0.0.1:1' "$T/tty"
	wait_exit $tty_pid 20
	[ "$wait_status" -eq 75 ]
	run timeout 20 ss-produce -b 127.0.0.1:1 --timeout 1s plain <<<'{}'
	[ "$status" -eq 75 ]
	refute_output --partial 'connecting'
}

@test "SIGTERM delivers every line read, then exits 143" {
	mkfifo "$T/in"
	ss-produce -b "$B" term <"$T/in" 2>"$T/err" &
	pid=$!
	exec 7>"$T/in"
	# the signal must find it running (a SIGTERM before it catches signals kills it
	# outright; CI saw that under ASan): its first line delivered says it is
	seq_json 100 | head -1 >&7
	for ((i = 0; i < 200; i++)); do
		[ "$(kcat -C -b "$B" -t term -e -q 2>/dev/null | wc -l)" -ge 1 ] && break
		sleep 0.1
	done
	seq_json 100 | tail -n +2 >&7
	kill -TERM $pid
	wait_exit $pid
	exec 7>&-
	[ "$wait_status" -eq 143 ]
	[ "$(kcat -C -b "$B" -t term -e -q | jq .n | sort -n | uniq | wc -l)" -eq 100 ]
}

@test "usage: -h prints the synopsis, misuse exits 2" {
	run ss-produce -h
	assert_success
	assert_output --partial 'usage: ss-produce'
	test_must_fail 2 ss-produce
	test_must_fail 2 ss-produce a b
	test_must_fail 2 ss-produce --on-error maybe t
	test_must_fail 2 ss-produce --ts-unit days t
	test_must_fail 2 ss-produce --timeout soon t
	test_must_fail 2 ss-produce -b '' t
	assert_output --partial "ss-produce: -b '': no brokers"
}

@test "kcat's options are answered with the ss way to say them, exit 2" {
	test_must_fail 2 ss-produce -b "$B" -t plain
	assert_output --partial 'ss-produce: -t is kcat'"'"'s option: the topic is the argument here: ss-produce [-b brokers] plain'
	test_must_fail 2 ss-produce -b "$B" -P plain
	assert_output --partial 'ss-produce only produces: drop -P'
	test_must_fail 2 ss-produce -b "$B" -C plain
	assert_output --partial 'to consume, use ss-consume'
	test_must_fail 2 ss-produce -b "$B" -K: plain
	assert_output --partial '--key .id --value .payload'
	test_must_fail 2 ss-produce -b "$B" -q plain
	assert_output --partial 'quiet already'
	# the -K answer works as written
	printf 'k1:v1\n' | jq -cR 'split(":") | {key: .[0], value: .[1]}' | ss-produce -b "$B" --key .key --value .value plain
	kcat -C -b "$B" -t plain -e -q -f '%k=%s\n' | grep -qx 'k1=v1'
}
