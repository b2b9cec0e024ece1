#!/usr/bin/env bats
# ss-asof --state-dir: one partition-join, with its own state file DIR/partition-P.db
# and lock, per partition number of co-partitioned inputs; ownership of a partition
# moves between processes with its state. And the partition-aware left time for pruning.

bats_require_minimum_version 1.5.0
load helpers

gen() { python3 "$BATS_TEST_DIRNAME/asof-statedir-gen.py" "$@"; }
ref() { python3 "$BATS_TEST_DIRNAME/asof-ref.py" "$1" "$2" backward 0 -1 1 | sort; }
part() { jq -c "select(.partition == $2)" "$1"; }
opts=(--on .t --by .k)

@test "--state-dir equals one --state run per partition and the reference (4 partitions)" {
	for seed in 1 2; do
		gen "$seed" "$T"
		rm -rf "$T/d" "$T"/s*.db
		run --separate-stderr ss-asof "${opts[@]}" --state-dir "$T/d" "$T/left" "$T/right"
		assert_success
		assert_equal "$stderr" ''
		printf '%s\n' "$output" | sort >"$T/dir"
		for p in 0 1 2 3; do
			ss-asof "${opts[@]}" --state "$T/s$p.db" <(part "$T/left" $p) <(part "$T/right" $p)
		done | sort >"$T/parts"
		diff -u "$T/parts" "$T/dir"
		ref "$T/left" "$T/right" | diff -u - "$T/dir"
		# each file holds its partition of both topics, and the same state as --state's
		for p in 0 1 2 3; do
			q='SELECT topic, partition, offset FROM ss_offsets ORDER BY topic'
			assert_equal "$(sqlite3 "$T/d/partition-$p.db" "$q")" "$(sqlite3 "$T/s$p.db" "$q")"
			assert_equal "$(sqlite3 "$T/d/partition-$p.db" "$q" | cut -d'|' -f1,2 | tr '\n' ' ')" "act|$p wx|$p "
		done
		# a second run applies nothing twice
		run --separate-stderr ss-asof "${opts[@]}" --state-dir "$T/d" "$T/left" "$T/right"
		assert_success
		assert_output ''
		[[ "$stderr" == *"left 0 (emitted 0, "*"replayed 1"[0-9][0-9][0-9]"), right 0 (late 0)"* ]]
	done
}

@test "--state-dir: kill -9 mid-run, restart after the applied offsets: latest results equal one run" {
	gen 3 "$T" 4 20000
	ss-asof "${opts[@]}" --emit revise --state-dir "$T/d0" "$T/left" "$T/right" >"$T/clean" 2>/dev/null
	latest "$T/clean" >"$T/want"
	# = the exact answers (the right file is read whole first: one revision each)
	ss-asof "${opts[@]}" "$T/left" "$T/right" | sort | diff -u - "$T/want"
	# the left arrives over time, so that it is committed while the run goes on
	ss-asof "${opts[@]}" --emit revise --state-dir "$T/d" <(trickle "$T/left" 400) "$T/right" >"$T/out1" 2>/dev/null &
	pid=$!
	# killed once some left records are committed (not by a count of lines: under a
	# sanitizer the trickle outruns the join, which then commits only every 10000)
	for _ in $(seq 1500); do
		[ "$(sqlite3 "$T/d/partition-0.db" "SELECT count(*) FROM ss_offsets WHERE topic = 'act'" 2>/dev/null)" = 1 ] && break
		sleep 0.02
	done
	kill -9 "$pid"
	wait "$pid" || true
	n1=$(wc -l <"$T/out1")
	[ "$n1" -lt "$(wc -l <"$T/clean")" ]
	after "$T/left" "$T/left2" "$T"/d/partition-*.db
	after "$T/right" "$T/right2" "$T"/d/partition-*.db
	[ -s "$T/left2" ] && [ "$(wc -l <"$T/left2")" -lt 80000 ]
	run --separate-stderr ss-asof "${opts[@]}" --emit revise --allow-empty-right --state-dir "$T/d" "$T/left2" "$T/right2"
	assert_success
	printf '%s\n' "$output" >"$T/out2"
	latest "$T/out1" "$T/out2" | diff -u "$T/want" -
	# every right record applied once: the partition-joins' right counters add up
	run sqlite3 "$T/d/partition-0.db" "SELECT value FROM asof_meta WHERE name = 'rseq'"
	assert_output 20000
}

# a pipe kept open on fd $2 (read-write, so it never ends by itself)
fifo() { mkfifo "$1"; eval "exec $2<>\"$1\""; }

@test "--state-dir: partitions move between processes with their state (a rebalance)" {
	gen 4 "$T" 4 200
	for f in left right; do
		jq -c 'select(.offset < 100)' "$T/$f" >"$T/$f.1"
		jq -c 'select(.offset >= 100 and .partition < 2)' "$T/$f" >"$T/$f.a2"
		jq -c 'select(.partition >= 2)' "$T/$f" >"$T/$f.b" # from offset 0: replays skipped
	done
	fifo "$T/la" 7
	fifo "$T/ra" 8
	ss-asof "${opts[@]}" --idle 2s --state-dir "$T/d" "$T/la" "$T/ra" >"$T/a.out" 2>"$T/a.err" 7>&- 8>&- &
	a=$!
	cat "$T/left.1" >&7
	cat "$T/right.1" >&8
	# A owns partitions 0-3; wait until it has committed the first half of them all
	applied() { sqlite3 "$T/d/partition-$1.db" "SELECT count(*) FROM ss_offsets WHERE offset = 99" 2>/dev/null; }
	for _ in $(seq 100); do
		[ "$(applied 0)$(applied 1)$(applied 2)$(applied 3)" = 2222 ] && break
		sleep 0.1
	done
	# B takes partitions 2 and 3: it waits until A releases them (silent for 2s)
	run --separate-stderr timeout 30 ss-asof "${opts[@]}" --idle 1s --state-dir "$T/d" "$T/left.b" "$T/right.b"
	assert_success
	printf '%s\n' "$output" >"$T/b.out"
	[[ "$stderr" == *"ss-asof: waiting for $T/d/partition-2.db, held by another process"* ]]
	[[ "$stderr" == *"replayed 400)"* ]]
	# A keeps partitions 0 and 1 and finishes
	cat "$T/left.a2" >&7
	cat "$T/right.a2" >&8
	exec 7>&- 8>&-
	wait "$a"
	assert_equal "$(cat "$T/a.err")" '' # nothing late, replayed or left held
	sort "$T/a.out" "$T/b.out" >"$T/union"
	ss-asof "${opts[@]}" --state-dir "$T/one.d" "$T/left" "$T/right" | sort >"$T/one"
	diff -u "$T/one" "$T/union"
	ref "$T/left" "$T/right" | diff -u - "$T/union"
}

@test "--state-dir: a partition held by a live process is waited for, then exit 75" {
	printf '%s\n' '{"topic":"wx","partition":1,"offset":0,"t":10}' >"$T/r"
	fifo "$T/la" 7
	ss-asof --on .t --idle 1h --state-dir "$T/d" "$T/la" "$T/r" >/dev/null 2>&1 7>&- &
	a=$!
	for _ in $(seq 100); do [ -e "$T/d/partition-1.db" ] && break; sleep 0.1; done
	printf '%s\n' '{"topic":"act","partition":1,"offset":0,"t":12}' >"$T/l"
	# the bound is twice --idle plus 10s
	run --separate-stderr timeout 30 ss-asof --on .t --idle 100ms --state-dir "$T/d" "$T/l" "$T/r"
	assert_failure 75
	assert_equal "$(printf '%s\n' "$stderr" | grep -c 'waiting for')" 1
	[[ "$stderr" == "ss-asof: waiting for $T/d/partition-1.db, held by another process"* ]]
	[[ "$stderr" == *"partition-1.db: still held by another process after 10s"* ]]
	# the owner is killed: its lock goes with it, and its state stays
	kill -9 "$a"
	wait "$a" || true
	exec 7>&-
	run --separate-stderr timeout 30 ss-asof --on .t --idle 100ms --state-dir "$T/d" --select .right.t "$T/l" "$T/r"
	assert_success
	assert_output 10
	[[ "$stderr" == *"replayed 1)"* ]]
}

@test "--state-dir: two processes that swap partitions do not wait for each other" {
	fifo "$T/la" 5
	fifo "$T/ra" 6
	fifo "$T/lb" 7
	fifo "$T/rb" 8
	o=(--on .t --idle 2s --state-dir "$T/d" --select '[.left.v, .right.v]')
	ss-asof "${o[@]}" "$T/la" "$T/ra" >"$T/a.out" 2>"$T/a.err" 5>&- 6>&- 7>&- 8>&- &
	a=$!
	ss-asof "${o[@]}" "$T/lb" "$T/rb" >"$T/b.out" 2>"$T/b.err" 5>&- 6>&- 7>&- 8>&- &
	b=$!
	echo '{"topic":"wx","partition":0,"offset":0,"t":10,"v":"w0"}' >&6
	echo '{"topic":"wx","partition":1,"offset":0,"t":10,"v":"w1"}' >&8
	for _ in $(seq 100); do [ -e "$T/d/partition-0.db" ] && [ -e "$T/d/partition-1.db" ] && break; sleep 0.1; done
	# A is given partition 1 and B partition 0: each gets the other's state
	echo '{"topic":"act","partition":1,"offset":0,"t":12,"v":"a1"}' >&5
	echo '{"topic":"act","partition":0,"offset":0,"t":12,"v":"a0"}' >&7
	exec 5>&- 6>&- 7>&- 8>&-
	wait "$a"
	wait "$b"
	assert_equal "$(cat "$T/a.out")" '["a1","w1"]'
	assert_equal "$(cat "$T/b.out")" '["a0","w0"]'
	[[ "$(cat "$T/a.err")" == "ss-asof: waiting for $T/d/partition-1.db, held by another process" ]]
	[[ "$(cat "$T/b.err")" == "ss-asof: waiting for $T/d/partition-0.db, held by another process" ]]
}

@test "--state-dir: usage" {
	test_must_fail 2 ss-asof --on .t --state "$T/s.db" --state-dir "$T/d" /dev/null /dev/null
	assert_output --partial '--state excludes --state-dir'
	test_must_fail 2 ss-asof --on .t /dev/null /dev/null --state-dir
	run ss-asof -h
	assert_output --partial '[--state DB | --state-dir DIR]'
}

@test "--state-dir: a record without envelope is a data error (--on-error fail, skip)" {
	printf '%s\n' '{"topic":"wx","partition":0,"offset":0,"t":10,"v":"a"}' >"$T/r"
	printf '%s\n' '{"topic":"act","partition":0,"offset":0,"t":11}' '{"t":12}' '{"topic":"act","partition":0,"offset":1,"t":13}' >"$T/l"
	test_must_fail 1 ss-asof --on .t --state-dir "$T/d" --select .left.t "$T/l" "$T/r"
	assert_output --partial "$T/l:2: left: --state-dir needs enveloped records"
	# state committed up to the last good record
	run sqlite3 "$T/d/partition-0.db" "SELECT topic, offset FROM ss_offsets ORDER BY topic"
	assert_output 'act|0
wx|0'
	rm -rf "$T/d"
	run --separate-stderr ss-asof --on .t --state-dir "$T/d" --on-error skip --select .left.t "$T/l" "$T/r"
	assert_success
	assert_output '11
13'
	[[ "$stderr" == *"$T/l:2: left: --state-dir needs enveloped records"* ]]
}

@test "left partitions far apart in event time need no big --retain" {
	# left partition 0 is far behind partition 3 at any moment; no --state-dir
	for seed in 5 6; do
		gen "$seed" "$T"
		run --separate-stderr ss-asof "${opts[@]}" --right-partitions 4 "$T/left" "$T/right"
		assert_success
		assert_equal "$stderr" ''
		printf '%s\n' "$output" | sort | diff -u <(ref "$T/left" "$T/right") -
	done
	# records without envelope, so with one left time: exact as well (the right history
	# is kept whole by default; --retain would bound it, visibly)
	jq -c 'del(.topic, .partition, .offset)' "$T/left" >"$T/left.bare"
	run --separate-stderr ss-asof "${opts[@]}" <(cat "$T/left.bare") <(cat "$T/right")
	assert_success
	printf '%s\n' "$output" | jq -c 'del(.revision)' | sort >"$T/got"
	ref "$T/left" "$T/right" | jq -c 'del(.left.topic, .left.partition, .left.offset)' | sort | diff -u - "$T/got"
}

# interleave OUT FILE...: the lines of the files merged in a random order that keeps
# each file's own order, as one consumer of several topics delivers them
interleave() {
	python3 -c 'import random, sys
rng = random.Random(7)
qs = [open(f).read().splitlines() for f in sys.argv[2:]]
with open(sys.argv[1], "w") as out:
    while any(qs):
        q = rng.choice([q for q in qs if q])
        out.write(q.pop(0) + "\n")' "$@"
}

@test "one input of both topics (--left-topic, --right-topic) equals two inputs and the reference" {
	gen 3 "$T"
	interleave "$T/both" "$T/left" "$T/right"
	run --separate-stderr ss-asof "${opts[@]}" --state-dir "$T/d2" "$T/left" "$T/right"
	assert_success
	printf '%s\n' "$output" | sort >"$T/two"
	# from a file, and from a pipe, with the state directory of the group recipe
	run --separate-stderr ss-asof "${opts[@]}" --state-dir "$T/d1" --left-topic act --right-topic wx "$T/both"
	assert_success
	assert_equal "$stderr" ''
	printf '%s\n' "$output" | sort >"$T/one"
	diff -u "$T/two" "$T/one"
	ref "$T/left" "$T/right" | diff -u - "$T/one"
	# without --state-dir: one watermark over the 4 right partitions, all awaited
	ss-asof "${opts[@]}" --right-partitions 4 --left-topic act --right-topic wx <(cat "$T/both") | sort | diff -u "$T/two" -
	# a second run over the same input applies nothing twice
	run --separate-stderr ss-asof "${opts[@]}" --state-dir "$T/d1" --left-topic act --right-topic wx - <"$T/both"
	assert_success
	assert_output ''
}

@test "one input: a record of another topic or without envelope is a data error; usage" {
	printf '%s\n' '{"topic":"wx","partition":0,"offset":0,"t":10,"v":"a"}' \
		'{"topic":"act","partition":0,"offset":0,"t":11}' '{"topic":"other","partition":0,"offset":0,"t":12}' \
		'{"t":12}' '{"topic":"act","partition":0,"offset":1,"t":13}' >"$T/in"
	test_must_fail 1 ss-asof --on .t --left-topic act --right-topic wx --select .left.t "$T/in"
	assert_output --partial "$T/in:3: other: a topic neither --left-topic nor --right-topic"
	run --separate-stderr ss-asof --on .t --left-topic act --right-topic wx --on-error skip --select '[.left.t, .right.v]' "$T/in"
	assert_success
	assert_output '[11,"a"]
[13,"a"]'
	[[ "$stderr" == *"$T/in:4: --left-topic needs enveloped records"* ]]
	test_must_fail 2 ss-asof --on .t --left-topic act "$T/in"
	assert_output --partial '--left-topic and --right-topic go together'
	test_must_fail 2 ss-asof --on .t --left-topic act --right-topic wx "$T/in" "$T/in"
	assert_output --partial 'expected one INPUT'
	test_must_fail 2 ss-asof --on .t --left-topic act --right-topic act "$T/in"
	assert_output --partial 'must differ'
}
