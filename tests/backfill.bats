#!/usr/bin/env bats
# scripts/ss-backfill on the mock broker: bounded, resumable, overlap-guarded; re-runs
# leave the state exactly as one full run would. (The mock broker does not look offsets
# up by time, so windows start at the beginning here and --from is left to real Kafka.)

bats_require_minimum_version 1.5.0
load helpers
load kafka

BACKFILL="$BATS_TEST_DIRNAME/../scripts/ss-backfill"

setup_file() {
	mock_start --topic wx:2 --topic wx2:2 --topic wx3:2
}
teardown_file() { mock_stop; }

# produce TOPIC FIRST LAST: readings i = FIRST..LAST, keyed by station, at time 2023-01-01 + i s
produce() {
	for i in $(seq "$2" "$3"); do
		printf '{"st":"s%d","i":%d,"ts":%d}\n' $((i % 5)) "$i" $((1672531200 + i))
	done | ss-produce -b "$B" --key .st --timestamp .ts "$1"
}

backfill() {
	"$BACKFILL" --offsets-from "$T/db" -b "$B" "$1" \
		-- ss-cache "$T/db" put --key '[.value.st, .value.i]' --value .value
}

# the state one full run leaves, from scratch
full_run() {
	ss-consume -b "$B" -e "$1" | ss-cache "$T/ref" put --key '[.value.st, .value.i]' --value .value
}

same_state() {
	assert_equal "$(ss-cache "$T/db" scan)" "$(ss-cache "$T/ref" scan)"
	assert_equal "$(ss-cache "$T/db" stats | jq -c .offsets)" "$(ss-cache "$T/ref" stats | jq -c .offsets)"
}

@test "a backfill twice, then a longer one after new data: state as one full run" {
	produce wx 1 20
	run --separate-stderr backfill wx
	assert_success
	assert_equal "$stderr" "ss-backfill: in 20, out 0, late 0, skipped as replays 0"
	run --separate-stderr backfill wx
	assert_failure 4 # nothing to do
	assert_equal "$stderr" "ss-backfill: in 0, out 0, late 0, skipped as replays 0"
	full_run wx
	same_state
	produce wx 21 30
	run --separate-stderr backfill wx
	assert_success
	assert_equal "$stderr" "ss-backfill: in 10, out 0, late 0, skipped as replays 0"
	rm -f "$T"/ref*
	full_run wx
	same_state
}

@test "--until bounds the window; the next window continues from the offsets" {
	produce wx2 1 20
	run --separate-stderr "$BACKFILL" --offsets-from "$T/db" \
		--until 2023-01-01T00:00:10Z -b "$B" wx2 -- ss-cache "$T/db" put --key '[.value.st, .value.i]' --value .value
	assert_success
	assert_equal "$stderr" "ss-backfill: in 10, out 0, late 0, skipped as replays 0"
	assert_equal "$(ss-cache "$T/db" scan --values | jq -s 'map(.i) | max')" 10
	run --separate-stderr backfill wx2
	assert_success
	assert_equal "$stderr" "ss-backfill: in 10, out 0, late 0, skipped as replays 0"
	full_run wx2
	same_state
}

@test "replays are skipped and counted; the sink's output is passed on and counted" {
	produce wx 1 3 # the topic may hold more from other tests: count what it holds
	n=$(ss-consume -b "$B" -e wx | wc -l)
	ss-consume -b "$B" -e wx | ss-cache "$T/db" put --key '[.value.st, .value.i]' --value .value
	# offsets from an empty file: everything comes again, and is skipped
	run --separate-stderr "$BACKFILL" --offsets-from "$T/empty.db" -b "$B" wx \
		-- ss-cache "$T/db" put --key '[.value.st, .value.i]' --value .value --tee
	assert_success
	[[ "$stderr" == *"ss-backfill: in $n, out "*", late 0, skipped as replays $n" ]]
}

@test "another run in progress: retry later (75), nothing touched" {
	produce wx 1 1
	flock "$T/db.lock" sleep 5 &
	for _ in $(seq 50); do flock -n "$T/db.lock" true || break; sleep 0.1; done
	run --separate-stderr backfill wx
	assert_failure 75
	[[ "$stderr" == *"another run is in progress"* ]]
	[ ! -e "$T/db" ]
	kill %1
}

@test "brokers unavailable: retry later (75)" {
	run --separate-stderr "$BACKFILL" --offsets-from "$T/db" --from 2023-01-01T00:00:00Z \
		-b 127.0.0.1:1 --timeout 2s wx -- ss-cache "$T/db" put
	assert_failure 75
}

@test "usage" {
	test_must_fail 2 "$BACKFILL" wx -- cat
	run "$BACKFILL" -h
	assert_success
	assert_output --partial "usage: ss-backfill"
}

@test "on a terminal: ss-consume's live line shows how far the run is, taken back before the summary; none in a log" {
	seq 100000 | awk '{printf "{\"n\":%d}\n", $1}' | ss-produce -b "$B" --key .n wx3
	sink="sh -c 'sleep 1; exec ss-cache $T/db put --key .value.n'"
	script -qec "'$BACKFILL' --offsets-from '$T/db' -b '$B' wx3 -- $sink" /dev/null </dev/null >"$T/tty"
	grep -aqE 'ss-consume: [0-9]+ records, [0-9]+/s, [0-9]+%, [0-9hms]+ left' "$T/tty"
	# the line is taken back, then the summary
	tr '\r' '\n' <"$T/tty" | sed $'s/\033\\[K//g' | grep -a . | tail -1 | grep -aq '^ss-backfill: in 100000, out 0'
	[ "$(ss-cache "$T/db" stats | jq .keys)" -eq 100000 ]
	# cron: stderr to a log, no live line and no escape codes
	seq 100001 100100 | awk '{printf "{\"n\":%d}\n", $1}' | ss-produce -b "$B" --key .n wx3
	"$BACKFILL" --offsets-from "$T/db" -b "$B" wx3 -- sh -c "sleep 1; exec ss-cache $T/db put --key .value.n" 2>"$T/log"
	run grep -c $'\033' "$T/log"
	assert_output 0
	grep -q '^ss-backfill: in 100, out 0' "$T/log"
}
