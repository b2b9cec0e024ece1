#!/usr/bin/env bats
# ss-asof's partition-aware right watermark: enveloped right records advance one
# watermark per topic-partition, the join's watermark is the minimum over them (silent
# partitions ignored after --idle), and lateness is judged in a record's own partition.

bats_require_minimum_version 1.5.0
load helpers

gen() { python3 "$BATS_TEST_DIRNAME/asof-parts-gen.py" "$@"; }

# check SEED DIRECTION RIGHT_INPUT [OPTION...]: defer equals the reference, nothing is late
check() {
	local seed=$1 dir=$2 right=$3
	shift 3
	ss-asof --by .k --on .t --direction "$dir" --grace 5s --late-file "$T/late" "$@" \
		"$T/left" "$right" >"$T/out" 2>"$T/err" || { cat "$T/err"; return 1; }
	[ ! -s "$T/err" ] || { echo "seed $seed $dir: $(cat "$T/err")"; return 1; }
	[ ! -s "$T/late" ] || { echo "seed $seed $dir: late: $(head -3 "$T/late")"; return 1; }
	python3 "$BATS_TEST_DIRNAME/asof-ref.py" "$T/left" "$T/right" "$dir" 0 -1 1 | sort >"$T/want"
	sort "$T/out" | diff -u "$T/want" - || { echo "seed $seed $dir"; return 1; }
}

@test "4 partitions at different speeds: defer equals the reference, none late (files)" {
	for seed in 1 2 3 4 5; do
		gen "$seed" "$T" 5
		for dir in backward forward nearest; do check "$seed" "$dir" "$T/right"; done
	done
}

@test "4 partitions at different speeds: defer equals the reference, none late (pipes)" {
	for seed in 6 7 8; do
		gen "$seed" "$T" 5
		for dir in backward nearest; do check "$seed" "$dir" <(cat "$T/right") --right-partitions 4; done
	done
}

@test "300 partitions at different speeds: defer equals the reference, none late (pipes, --right-partitions)" {
	# the watermark is kept record by record over the partitions (stream/partwm.h's fold)
	for seed in 1 2; do
		gen "$seed" "$T" 5 300
		for dir in backward nearest; do check "$seed" "$dir" <(cat "$T/right") --right-partitions 300; done
	done
}

@test "enveloped right records from a writer that does not tell its partitions: exact at its end, said once" {
	gen 9 "$T" 5
	run --separate-stderr ss-asof --by .k --on .t --grace 5s "$T/left" <(cat "$T/right")
	assert_success
	python3 "$BATS_TEST_DIRNAME/asof-ref.py" "$T/left" "$T/right" backward 0 -1 1 | sort >"$T/want"
	diff -u "$T/want" <(printf '%s\n' "$output" | sort)
	[ "$(printf '%s\n' "$stderr" | grep -c 'nothing says which partitions it has')" = 1 ]
}

@test "the same records without envelopes share one watermark: the slow partitions are late" {
	gen 1 "$T" 5
	run --separate-stderr ss-asof --by .k --on .t --grace 5s --late-file "$T/late" "$T/left" <(cat "$T/right.bare")
	assert_success
	[ -s "$T/late" ]
	[[ "$stderr" == *"(late $(wc -l <"$T/late"))"* ]]
	# and with envelopes, a record older than its own partition's watermark is late
	printf '%s\n' '{"topic":"wx","partition":0,"offset":0,"t":100}' \
		'{"topic":"wx","partition":1,"offset":0,"t":10}' \
		'{"topic":"wx","partition":0,"offset":1,"t":94}' \
		'{"topic":"wx","partition":1,"offset":1,"t":6}' >"$T/r"
	printf '{"t":5000}\n' >"$T/l" # held until the right input ends: all of it is read
	run --separate-stderr ss-asof --on .t --grace 5s --late-file "$T/late2" "$T/l" <(cat "$T/r")
	assert_success
	run cat "$T/late2"
	assert_output '{"topic":"wx","partition":0,"offset":1,"t":94}'
}

# right partitions 0-3 on a pipe kept open; partition 3 falls silent at t=10 while the
# others reach t=100; the left record at t=50 waits for partition 3
idle_setup() {
	mkfifo "$T/r"
	exec 7<>"$T/r"
	for p in 0 1 2 3; do printf '{"topic":"wx","partition":%d,"offset":0,"t":10,"v":"r%d"}\n' "$p" "$p" >&7; done
	for p in 0 1 2; do printf '{"topic":"wx","partition":%d,"offset":1,"t":100,"v":"s%d"}\n' "$p" "$p" >&7; done
}

@test "--idle: a silent partition stops holding the watermark back" {
	idle_setup
	# the left input ends; ss-asof exits once its record is released
	run --separate-stderr timeout 20 ss-asof --on .t --idle 1s --right-partitions 4 --select .right.v <(printf '{"t":50}\n') "$T/r"
	exec 7>&-
	assert_success
	assert_output '"r3"'
}

@test "--idle: before it, the slowest partition holds the record back" {
	idle_setup
	run --separate-stderr timeout 3 ss-asof --on .t --idle 1h --right-partitions 4 --select .right.v <(printf '{"t":50}\n') "$T/r"
	exec 7>&-
	assert_failure 124
	assert_output ''
}

@test "--state keeps the watermark of each partition across restarts" {
	printf '%s\n' '{"topic":"wx","partition":0,"offset":0,"t":100}' \
		'{"topic":"wx","partition":1,"offset":0,"t":1000}' >"$T/r1"
	printf '%s\n' '{"topic":"wx","partition":0,"offset":1,"t":96}' \
		'{"topic":"wx","partition":1,"offset":1,"t":900}' >"$T/r2"
	printf '{"t":5000}\n' >"$T/l" # held until the right input ends: all of it is read
	run --separate-stderr ss-asof --on .t --grace 5s --state "$T/db" --late-file "$T/late" "$T/l" <(cat "$T/r1")
	assert_success
	run --separate-stderr ss-asof --on .t --grace 5s --state "$T/db" --late-file "$T/late" "$T/l" <(cat "$T/r2")
	assert_success
	run cat "$T/late"
	assert_output '{"topic":"wx","partition":1,"offset":1,"t":900}'
	run sqlite3 "$T/db" 'SELECT topic, partition, maxt FROM asof_partition ORDER BY partition'
	assert_output "wx|0|100000000000
wx|1|1000000000000"
}

@test "--idle: usage" {
	test_must_fail 2 ss-asof --on .t --idle soon /dev/null /dev/null
}

@test "--right-partitions: the watermark waits for partitions not seen yet" {
	# partition 0 arrives whole before partition 1's first record
	printf '%s\n' '{"topic":"wx","partition":0,"offset":0,"t":10,"v":"a"}' \
		'{"topic":"wx","partition":0,"offset":1,"t":100,"v":"b"}' \
		'{"topic":"wx","partition":1,"offset":0,"t":40,"v":"c"}' >"$T/r"
	printf '{"t":50}\n' >"$T/l"
	run --separate-stderr ss-asof --on .t --right-partitions 2 --select .right.v "$T/l" <(cat "$T/r")
	assert_success
	assert_output '"c"'
	# without it (and without a writer that tells), nothing is released before the end
	run --separate-stderr ss-asof --on .t --select .right.v "$T/l" <(cat "$T/r")
	assert_output '"c"'
	[[ "$stderr" == *"--right-partitions N says how many"* ]]
}

@test "--right-partitions: a partition never seen is waited for --idle at most" {
	printf '%s\n' '{"topic":"wx","partition":0,"offset":0,"t":10,"v":"a"}' '{"topic":"wx","partition":0,"offset":1,"t":100,"v":"b"}' >"$T/r"
	mkfifo "$T/rf"
	exec 7<>"$T/rf"
	cat "$T/r" >&7
	run --separate-stderr timeout 20 ss-asof --on .t --right-partitions 2 --idle 1s --select .right.v <(printf '{"t":50}\n') "$T/rf"
	exec 7>&-
	assert_success
	assert_output '"a"'
}
