#!/usr/bin/env bats
# ss-cache: the ordered state store (Slipstream's Cache) as a tool.
load helpers
bats_require_minimum_version 1.5.0

weather() { printf '%s\n' \
	'{"timestamp":"2023-01-01T10:00:00Z","value":"🌞"}' \
	'{"timestamp":"2023-01-01T12:00:00Z","value":"⛅"}' \
	'{"timestamp":"2023-01-01T13:00:00Z","value":"🌧"}'; }

@test "put then get returns the stored record" {
	weather | ss-cache "$T/st.db" put --key .timestamp
	run ss-cache "$T/st.db" get '"2023-01-01T12:00:00Z"'
	assert_success
	assert_output '{"timestamp":"2023-01-01T12:00:00Z","value":"⛅"}'
}

@test "get of a missing key says so and exits 1, printing the keys it found" {
	weather | ss-cache "$T/st.db" put --key .timestamp
	run ss-cache "$T/st.db" get '"nope"' '"2023-01-01T10:00:00Z"'
	assert_failure 1
	assert_line --partial '"value":"🌞"'
	assert_line --partial 'ss-cache: "nope": no such key'
}

@test "--value stores an expression of the record" {
	weather | ss-cache "$T/st.db" put --key .timestamp --value .value
	run ss-cache "$T/st.db" scan --values
	assert_success
	assert_output "$(printf '"🌞"\n"⛅"\n"🌧"')"
}

@test "--value of a projection stores what jq prints, from the record's bytes" {
	printf '%s\n' '{"key":"a","n":1.0,"s":"x\/y","o":{"p" : [1e2]}}' '{"key":"b","n":5}' |
		ss-cache "$T/st.db" put --value '{n: .n, s: .s, o: .o, none: .o.q, lit: [true, -0]}'
	run ss-cache "$T/st.db" scan --values
	assert_success
	assert_output '{"n":1,"s":"x/y","o":{"p":[100]},"none":null,"lit":[true,-0]}
{"n":5,"s":null,"o":null,"none":null,"lit":[true,-0]}'
	printf '%s\n' '{"key":"c","n":1}' >"$T/in"
	test_must_fail 1 ss-cache "$T/st.db" put --value '[.n.x]' <"$T/in"
	assert_output --partial '--value [.n.x]: Cannot index number with string "x"'
}

@test "the seed's as-of lookup: scan --backwards --from T --limit 1" {
	weather | ss-cache "$T/st.db" put --key '.timestamp | fromdate'
	for t in 10:30 11:30 12:30 13:10; do
		ts=$(jq -n "\"2023-01-01T$t:00Z\" | fromdate")
		ss-cache "$T/st.db" scan --backwards --from "$ts" --limit 1 --values | jq -r .value
	done >"$T/got"
	printf '%s\n' 🌞 🌞 ⛅ 🌧 | diff - "$T/got"
}

@test "scan bounds: --from and --to are inclusive, --backwards reverses" {
	seq 1 10 | jq -c '{key: ., v: (. * 10)}' | ss-cache "$T/st.db" put
	run ss-cache "$T/st.db" scan --from 3 --to 5 --keys
	assert_output "$(printf '3\n4\n5')"
	run ss-cache "$T/st.db" scan --backwards --from 5 --to 3 --keys
	assert_output "$(printf '5\n4\n3')"
	run ss-cache "$T/st.db" scan --backwards --from 4.5 --limit 1
	assert_output '{"key":4,"value":{"key":4,"v":40}}'
}

@test "key order is exactly jq's sort order over keys of every type" {
	cat >"$T/keys" <<-'K'
	null
	false
	true
	0
	-1
	-0.5
	1e300
	-1e300
	2.5
	10
	9
	1672531200
	""
	"a"
	"ab"
	"b"
	"B"
	"é"
	"z\u0000"
	"z"
	"🌞"
	[]
	["s1",1672531200]
	["s1",1672531199]
	["s1"]
	["s10",0]
	["s2",-1]
	[null]
	[[1]]
	[1,2,3]
	{}
	{"a":1}
	{"a":0}
	{"b":0}
	{"a":1,"b":2}
	{"a":[1]}
	K
	jq -c '{key: ., value: 1}' "$T/keys" | ss-cache "$T/st.db" put
	ss-cache "$T/st.db" scan --keys | jq -c . >"$T/got"
	jq -s -c 'sort | .[]' "$T/keys" >"$T/want"
	diff "$T/want" "$T/got"
}

@test "key order matches jq sort on a random mix of numbers and composite keys" {
	python3 -c '
import json, random
random.seed(7)
for i in range(2000):
    r = random.random()
    if r < 0.3: k = random.choice([random.randint(-10**6, 10**6), random.uniform(-1e6, 1e6), random.randint(-3, 3) / 4])
    elif r < 0.6: k = ["s%d" % random.randint(0, 20), random.randint(0, 100)]
    elif r < 0.8: k = "".join(random.choice("aZ09é🌞\u0001") for _ in range(random.randint(0, 4)))
    else: k = [random.choice([None, True, False, 1, "x"]), [random.randint(0, 2)]]
    print(json.dumps({"key": k, "value": i}))' >"$T/in"
	ss-cache "$T/st.db" put <"$T/in"
	ss-cache "$T/st.db" scan --keys | jq -c . >"$T/got"
	jq -c .key "$T/in" | jq -s -c 'unique | .[]' >"$T/want"
	diff "$T/want" "$T/got"
}

@test "prefix scans work forwards and backwards" {
	for s in s1 s2 s10; do for t in 1 2 3; do echo "{\"s\":\"$s\",\"t\":$t}"; done; done |
		ss-cache "$T/st.db" put --key '[.s, .t]'
	run ss-cache "$T/st.db" scan --prefix '["s1"]' --keys
	assert_output "$(printf '["s1",1]\n["s1",2]\n["s1",3]')"
	run ss-cache "$T/st.db" scan --prefix '["s1"]' --backwards --keys
	assert_output "$(printf '["s1",3]\n["s1",2]\n["s1",1]')"
	run ss-cache "$T/st.db" scan --prefix '["s1"]' --backwards --from '["s1",2]' --limit 1 --keys
	assert_output '["s1",2]'
	run ss-cache "$T/st.db" scan --prefix '"s1"' --keys
	assert_output ''
}

@test "string prefixes: --prefix '\"ab\"' matches ab, abc but not b" {
	printf '"%s"\n' a ab abc abd b | jq -c '{key: ., value: 0}' | ss-cache "$T/st.db" put
	run ss-cache "$T/st.db" scan --prefix '"ab"' --backwards --keys
	assert_output "$(printf '"abd"\n"abc"\n"ab"')"
}

@test "del removes keys" {
	weather | ss-cache "$T/st.db" put --key .timestamp
	ss-cache "$T/st.db" del '"2023-01-01T10:00:00Z"'
	run ss-cache "$T/st.db" scan --keys
	assert_output "$(printf '"2023-01-01T12:00:00Z"\n"2023-01-01T13:00:00Z"')"
}

@test "--tee passes records on, unchanged, once stored" {
	weather >"$T/in"
	run ss-cache "$T/st.db" put --key .timestamp --tee <"$T/in"
	assert_success
	assert_output "$(cat "$T/in")"
}

@test "--tee delivers a trickle at once, not when input ends" {
	mkfifo "$T/in"
	ss-cache "$T/st.db" put --key .n --tee <"$T/in" >"$T/out" &
	exec 7>"$T/in"
	echo '{"n":1}' >&7
	for _ in $(seq 50); do [ -s "$T/out" ] && break; sleep 0.02; done
	run cat "$T/out"
	assert_output '{"n":1}'
	# and it is committed: a reader sees it while the writer still runs
	run ss-cache "$T/st.db" get 1
	assert_output '{"n":1}'
	exec 7>&-
	wait
}

@test "envelopes: a replayed offset is skipped and counted, not applied twice" {
	for o in 0 1 2; do echo "{\"topic\":\"w\",\"partition\":0,\"offset\":$o,\"key\":\"k$o\",\"value\":$o}"; done >"$T/in"
	ss-cache "$T/st.db" put --value .value <"$T/in"
	echo '{"topic":"w","partition":0,"offset":1,"key":"k1","value":99}' >>"$T/in"
	echo '{"topic":"w","partition":0,"offset":3,"key":"k3","value":3}' >>"$T/in"
	run ss-cache "$T/st.db" put --value .value <"$T/in"
	assert_success
	assert_output --partial '1 stored, 4 skipped as replays'
	run ss-cache "$T/st.db" get '"k1"'
	assert_output 1
	run ss-cache "$T/st.db" stats
	assert_output --partial '"offsets":[{"topic":"w","partition":0,"offset":3}]'
	assert_output --partial '"keys":4'
}

@test "retention: --retain-count keeps the newest N keys" {
	seq 1 100 | jq -c '{key: ., value: .}' | ss-cache "$T/st.db" put --retain-count 10
	run ss-cache "$T/st.db" scan --keys
	assert_output "$(seq 91 100)"
}

@test "retention: --retain-age keeps keys within the age of the newest" {
	for h in 0 1 2 3 4 5; do echo "{\"s\":\"a\",\"t\":\"2023-01-01T0$h:00:00Z\"}"; done |
		ss-cache "$T/st.db" put --key '[.s, .t]' --retain-age 2h
	run ss-cache "$T/st.db" scan --keys
	assert_output "$(printf '["a","2023-01-01T03:00:00Z"]\n["a","2023-01-01T04:00:00Z"]\n["a","2023-01-01T05:00:00Z"]')"
}

@test "--retain-age with numeric keys in milliseconds" {
	for s in 0 30 60 90 120; do echo "{\"t\":$((1672531200000 + s * 1000))}"; done |
		ss-cache "$T/st.db" put --key .t --retain-age 1m --ts-unit ms
	run ss-cache "$T/st.db" scan --keys
	assert_output "$(printf '1672531260000\n1672531290000\n1672531320000')"
}

@test "invalid JSON: message with line number, exit 1, everything before it committed" {
	printf '%s\n' '{"key":"a","v":1}' '{"key":"b","v":2}' '{"key":"c",' '{"key":"d"}' >"$T/in"
	test_must_fail 1 ss-cache "$T/st.db" put <"$T/in"
	assert_output --partial 'ss-cache: <stdin>:3:'
	run ss-cache "$T/st.db" scan --keys
	assert_output "$(printf '"a"\n"b"')"
}

@test "invalid UTF-8 and NUL bytes are data errors with line numbers" {
	printf '{"key":"a"}\n{"key":"\xff"}\n' >"$T/in"
	test_must_fail 1 ss-cache "$T/st.db" put <"$T/in"
	assert_output --partial '<stdin>:2: invalid UTF-8'
	printf '{"key":"a"}\n{"key":"b\0"}\n' >"$T/in2"
	test_must_fail 1 ss-cache "$T/st2.db" put <"$T/in2"
	assert_output --partial '<stdin>:2:'
	run ss-cache "$T/st2.db" get '"a"'
	assert_success
}

@test "a truncated last line is reported, the lines before it kept" {
	printf '{"key":"a"}\n{"key":"b"' >"$T/in"
	test_must_fail 1 ss-cache "$T/st.db" put <"$T/in"
	assert_output --partial '<stdin>:2: unexpected end of input'
	run ss-cache "$T/st.db" get '"a"'
	assert_success
}

@test "a key expression that errors or gives null is a data error" {
	printf '%s\n' '{"key":"a"}' '{"key":{"x":1}}' >"$T/in"
	test_must_fail 1 ss-cache "$T/st.db" put --key '.key | ascii_downcase' <"$T/in"
	assert_output --partial '<stdin>:2: --key .key | ascii_downcase:'
	printf '%s\n' '{"key":"a"}' '{"nokey":1}' >"$T/in"
	test_must_fail 1 ss-cache "$T/st2.db" put <"$T/in"
	assert_output --partial '<stdin>:2: --key .key: no such field'
	# an explicit null is a key like any other
	echo '{"key":null,"v":1}' | ss-cache "$T/st3.db" put
	run ss-cache "$T/st3.db" get null
	assert_output '{"key":null,"v":1}'
}

@test "--on-error skip goes on; dead-letter keeps the raw line with source, line and reason" {
	printf '%s\n' '{"key":"a"}' 'oops' '{"key":"b"}' >"$T/in"
	run ss-cache "$T/st.db" put --on-error skip <"$T/in"
	assert_success
	run ss-cache "$T/st.db" scan --keys
	assert_output "$(printf '"a"\n"b"')"
	printf '{"key":"c"}\nbad\xff\n' >"$T/in2"
	run ss-cache "$T/st.db" put --on-error dead-letter="$T/dl" <"$T/in2"
	assert_success
	run jq -c '[.source, .line, .reason, .raw, .raw_base64]' "$T/dl"
	assert_output "$(jq -nc '["<stdin>",2,"unexpected character","bad\ufffd","YmFk/w=="]')"
	# the exact bytes come back from raw_base64
	jq -r .raw_base64 "$T/dl" | base64 -d | cmp - <(printf 'bad\xff')
}

@test "a bad jq expression exits 3 with jq's message" {
	test_must_fail 3 ss-cache "$T/st.db" put --key '.a |||'
	assert_output --partial 'ss-cache: --key: '
	assert_output --partial 'syntax error'
}

@test "usage: -h prints the synopsis and exits 0; misuse exits 2" {
	run ss-cache -h
	assert_success
	assert_line --index 0 --partial 'usage: ss-cache DB put'
	test_must_fail 2 ss-cache "$T/st.db"
	assert_output --partial 'no command given'
	test_must_fail 2 ss-cache "$T/st.db" frobnicate
	test_must_fail 2 ss-cache "$T/st.db" scan --limit x
	test_must_fail 2 ss-cache "$T/st.db" get 'not json'
	test_must_fail 2 ss-cache "$T/st.db" put --on-error sometimes
}

@test "reading a missing file is a clear error" {
	test_must_fail 1 ss-cache "$T/none.db" scan
	assert_output --partial 'No such file'
}

@test "a full disk for the tee output is a clear error, exit 1" {
	echo '{"key":"a"}' >"$T/in"
	test_must_fail 1 sh -c "ss-cache '$T/st.db' put --tee <'$T/in' >/dev/full"
	assert_output --partial 'ss-cache: <stdout>: write: No space left on device'
}

@test "a closed pipe ends --tee quietly; the batch it could not pass on stays uncommitted for a re-run" {
	seq 1 200000 | jq -c '{topic: "t", partition: 0, offset: ., key: .}' >"$T/in"
	run bash -c "ss-cache '$T/st.db' put --tee <'$T/in' | head -1"
	assert_success
	assert_output '{"topic":"t","partition":0,"offset":1,"key":1}'
	run ss-cache "$T/st.db" get 200000
	assert_failure 1
	# the re-run passes everything on that was not committed
	run bash -c "ss-cache '$T/st.db' put --tee <'$T/in' | wc -l"
	assert_output 200000
	run ss-cache "$T/st.db" get 200000
	assert_success
}

@test "a reader works while a writer holds the file" {
	mkfifo "$T/in"
	ss-cache "$T/st.db" put <"$T/in" &
	exec 7>"$T/in"
	for i in $(seq 1 2000); do echo "{\"key\":$i}"; done >&7
	sleep 0.3
	run ss-cache "$T/st.db" scan --backwards --limit 1 --keys
	assert_success
	assert_output 2000
	exec 7>&-
	wait
}

@test "kill -9 mid-put: the file opens, holds a prefix, and a re-run applies the rest once" {
	N=2000000
	python3 -c '
for i in range(2000000):
    print("{\"topic\":\"t\",\"partition\":0,\"offset\":%d,\"key\":%d,\"value\":%d}" % (i, i, i))' >"$T/in"
	ss-cache "$T/st.db" put <"$T/in" &
	pid=$!
	# kill it once the first batches are committed, in the middle of the input
	for _ in $(seq 200); do
		n=$(ss-cache "$T/st.db" stats 2>/dev/null | jq .keys) || n=0
		[ "${n:-0}" -gt 0 ] && break
		sleep 0.02
	done
	kill -9 "$pid"
	wait "$pid" || true
	n=$(ss-cache "$T/st.db" stats | jq .keys)
	[ "$n" -lt "$N" ]
	# a prefix: the keys are exactly 0..n-1
	[ "$(ss-cache "$T/st.db" scan --backwards --limit 1 --keys)" = "$((n - 1))" ] || [ "$n" = 0 ]
	run ss-cache "$T/st.db" put <"$T/in"
	assert_success
	assert_output "ss-cache: $((N - n)) stored, $n skipped as replays, 0 rejected"
	[ "$(ss-cache "$T/st.db" stats | jq .keys)" = "$N" ]
	[ "$(ss-cache "$T/st.db" stats | jq -c .offsets)" = '[{"topic":"t","partition":0,"offset":1999999}]' ]
}

@test "a writer killed mid-transaction left a hot journal: a reader rolls it back and reads" {
	weather | ss-cache "$T/st.db" put --key .timestamp
	# tests/torture/pipeline.py met it (SEED=2)
	leave_hot_journal "$T/st.db" ss_kv
	run ss-cache "$T/st.db" get '"2023-01-01T12:00:00Z"'
	assert_success
	assert_output --partial '"value":"⛅"'
	[ ! -s "$T/st.db-journal" ]
}

@test "the state file is plain SQLite: sqlite3 can read it" {
	weather | ss-cache "$T/st.db" put --key .timestamp
	run sqlite3 "$T/st.db" 'SELECT count(*) FROM ss_kv; PRAGMA journal_mode;'
	assert_output "$(printf '3\nwal')"
}

@test "--state-dir: one file per topic-partition; scans merge them in key order" {
	for o in 0 1 2 3 4 5; do
		echo "{\"topic\":\"w\",\"partition\":$((o % 3)),\"offset\":$o,\"key\":[\"s$((o % 3))\",$o],\"value\":$o}"
	done >"$T/in"
	ss-cache --state-dir "$T/dir" put <"$T/in"
	run ls "$T/dir"
	assert_output --regexp 'w-0\.db'
	assert_output --regexp 'w-1\.db'
	assert_output --regexp 'w-2\.db'
	run ss-cache --state-dir "$T/dir" scan --keys
	assert_output "$(printf '["s0",0]\n["s0",3]\n["s1",1]\n["s1",4]\n["s2",2]\n["s2",5]')"
	run ss-cache --state-dir "$T/dir" scan --backwards --limit 2 --keys
	assert_output "$(printf '["s2",5]\n["s2",2]')"
	run ss-cache --state-dir "$T/dir" get '["s1",4]'
	assert_output '{"topic":"w","partition":1,"offset":4,"key":["s1",4],"value":4}'
	run ss-cache --state-dir "$T/dir" stats
	assert_output --partial '"keys":6'
	assert_output --partial '{"topic":"w","partition":2,"offset":5}'
	ss-cache --state-dir "$T/dir" del '["s1",4]'
	run ss-cache --state-dir "$T/dir" stats
	assert_output --partial '"keys":5'
}

@test "--state-dir: a partition's file moves to another instance with its offsets" {
	for o in 0 1 2 3; do echo "{\"topic\":\"w\",\"partition\":$((o % 2)),\"offset\":$o,\"key\":$o}"; done >"$T/in"
	ss-cache --state-dir "$T/a" put <"$T/in"
	mkdir "$T/b"
	mv "$T/a/w-1.db" "$T/b/"
	# instance b now owns partition 1: a replay of it is skipped, new offsets applied
	printf '%s\n' '{"topic":"w","partition":1,"offset":3,"key":3}' '{"topic":"w","partition":1,"offset":5,"key":5}' |
		ss-cache --state-dir "$T/b" put 2>"$T/err"
	run cat "$T/err"
	assert_output 'ss-cache: 1 stored, 1 skipped as replays, 0 rejected'
	run ss-cache --state-dir "$T/b" scan --keys
	assert_output "$(printf '1\n3\n5')"
}

@test "--state-dir: a record without an envelope is a data error" {
	test_must_fail 1 sh -c "echo '{\"key\":1}' | ss-cache --state-dir '$T/dir' put"
	assert_output --partial '<stdin>:1: --state-dir: record has no envelope'
}

@test "puts are applied in key order at the commit, the last put of a key winning, across batches too" {
	# 250,000 puts of 1,000 keys (more than one batch), each key's last value its last index
	python3 -c '
import json, random
random.seed(7)
for i in range(250000):
    print(json.dumps({"k": ["s%d" % random.randrange(50), random.randrange(20)], "i": i}, separators=(",", ":")))
' >"$T/in"
	ss-cache "$T/st.db" put --key .k --value .i <"$T/in"
	python3 -c '
import json, sys
last = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    last[tuple(r["k"])] = r["i"]
for k in sorted(last):
    print(json.dumps({"key": list(k), "value": last[k]}, separators=(",", ":")))
' "$T/in" >"$T/want"
	ss-cache "$T/st.db" scan >"$T/got"
	cmp "$T/want" "$T/got"
}

@test "get --json pairs each key with its value and says which are missing, in the order given" {
	printf '%s\n' '{"key":"k1","v":1}' '{"key":["k",3],"v":3}' | ss-cache "$T/st.db" put
	run --separate-stderr ss-cache "$T/st.db" get --json '"k1"' '"nope"' '["k", 3]'
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = '{"key":"k1","value":{"key":"k1","v":1}}' ]
	[ "${lines[1]}" = '{"key":"nope","missing":true}' ]
	[ "${lines[2]}" = '{"key":["k",3],"value":{"key":["k",3],"v":3}}' ]
	[ "${#lines[@]}" -eq 3 ]
	[[ "$stderr" == *'"nope": no such key'* ]]
	run ss-cache "$T/st.db" get '"k1"' --json
	assert_success
	assert_output '{"key":"k1","value":{"key":"k1","v":1}}'
}

@test "put: a live line on a terminal (records, rate, share, time left), taken back at the end" {
	# long enough to outlast the first redraw (250 ms): 400,000 records took 0.29 s on
	# a machine of 2026-12, and the line was drawn or not by a few milliseconds
	seq 2000000 | awk '{printf "{\"key\":%d,\"v\":\"xxxxxxxxxxxxxxxxxxxxxxxx\"}\n", $1}' >"$T/in"
	on_tty "ss-cache '$T/st.db' put <'$T/in'" >"$T/tty"
	grep -aqE 'ss-cache: [0-9]+ records, [0-9]+/s, [0-9]+%, [0-9hms]+ left' "$T/tty"
	# the last thing on the terminal takes the line back
	[ "$(tail -c 4 "$T/tty" | od -An -c | tr -d ' ')" = '\r033[K' ]
	[ "$(ss-cache "$T/st.db" stats | jq .keys)" -eq 2000000 ]
	# a pipe: records and rate, no share
	on_tty "(echo '{\"key\":1}'; sleep 0.6; echo '{\"key\":2}') | ss-cache '$T/st2.db' put" >"$T/tty2"
	grep -aqE 'ss-cache: 2 records, [0-9]+/s.\[K' "$T/tty2"
	# --no-progress: nothing on the terminal
	on_tty "(echo '{\"key\":1}'; sleep 0.6; echo '{\"key\":2}') | ss-cache '$T/st3.db' put --no-progress" >"$T/tty3"
	[ ! -s "$T/tty3" ]
}

@test "put: no live line when stderr is not a terminal, unless --progress" {
	(echo '{"key":1}'; sleep 0.6; echo '{"key":2}') | ss-cache "$T/st.db" put 2>"$T/err"
	[ ! -s "$T/err" ]
	(echo '{"key":1}'; sleep 0.6; echo '{"key":2}') | ss-cache "$T/st2.db" put --progress 2>"$T/err2"
	grep -aq 'ss-cache: 2 records' "$T/err2"
}

@test "put: SIGINT or SIGTERM stops it at a record, commits what came before, exits 128+N" {
	for sig in INT TERM; do
		rm -f "$T"/st.db* "$T/in"
		mkfifo "$T/in"
		ss-cache "$T/st.db" put --key .timestamp --on-error skip <"$T/in" 2>"$T/err" &
		pid=$!
		exec 7>"$T/in"
		{ weather; echo 'not json'; } >&7
		for _ in $(seq 100); do grep -q 'skipped' "$T/err" && break; sleep 0.1; done
		kill -"$sig" "$pid"
		for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
		st=0
		wait "$pid" || st=$?
		exec 7>&-
		assert_equal "$st" $((128 + $(kill -l "$sig")))
		run ss-cache "$T/st.db" scan --values
		assert_output "$(weather)"
		# an exit, not a death: the summary says what was done
		grep -q 'ss-cache: 3 stored, 0 skipped as replays, 1 rejected' "$T/err"
	done
}

@test "key paths: the last of duplicate members wins, and a record of many members is searched whole" {
	{
		echo '{"m":{"s":"a"},"t":1,"m":{"s":"b"},"t":2,"v":"dup"}'
		python3 -c 'import json; d = {"f%d" % i: i for i in range(40)}; d["m"] = {"s": "c"}; d["t"] = 3; d["v"] = "wide"; print(json.dumps(d))'
		echo '{"m":{"s":"d"},"t":4,"v":"x","m":{"x":1}}'
		echo '{"t":5,"m":[1],"v":"bad"}'
	} >"$T/in"
	run ss-cache "$T/st.db" put --key '[.m.s, .t]' --value .v --on-error skip <"$T/in"
	assert_success
	assert_output --partial 'rejected'
	run ss-cache "$T/st.db" scan
	assert_output '{"key":[null,4],"value":"x"}
{"key":["b",2],"value":"dup"}
{"key":["c",3],"value":"wide"}'
	# jq agrees on every key but the rejected one's
	jq -c '[.m.s, .t]?' "$T/in" | cmp - <(printf '%s\n' '["b",2]' '["c",3]' '[null,4]')
}

@test "--retain-age over batches applied many rows to a statement: each row keeps its own time" {
	# 1,000 puts in one batch (seven statements of 128 rows, 104 of one row), times
	# 0..999 s in shuffled order
	python3 -c '
import json, random
random.seed(3)
rows = [{"s": "s%d" % (i % 3), "t": i, "v": i} for i in range(1000)]
random.shuffle(rows)
for r in rows:
    print(json.dumps(r))
' >"$T/in"
	ss-cache "$T/st.db" put --key '[.s, .t]' --value .v --retain-age 100s <"$T/in"
	run ss-cache "$T/st.db" scan --values
	assert_output "$(for s in 0 1 2; do seq 899 999 | awk -v s=$s '$1 % 3 == s'; done)"
	[ "$(sqlite3 "$T/st.db" 'SELECT count(*) FROM ss_kv WHERE t IS NULL OR t != CAST(value AS INTEGER) * 1000000000')" -eq 0 ]
}
