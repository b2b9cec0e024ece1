#!/usr/bin/env bats
# ss-checkpoint: heartbeat, pulse, status; downtime, pause, recovery, seek requests.
load helpers

# envl OFFSET HH:MM VALUE [PARTITION]: an activity envelope as ss-consume writes it
envl() {
	printf '{"topic":"activity","partition":%d,"offset":%d,"timestamp":0,"key":null,"value":{"timestamp":"2023-01-01T%s:00Z","value":"%s"},"headers":{}}\n' \
		"${4:-0}" "$1" "$2" "$3"
}
# wth HH:MM [VALUE]: a weather record
wth() { printf '{"timestamp":"2023-01-01T%s:00Z","value":"%s"}\n' "$1" "${2:-sun}"; }
act() { printf '{"timestamp":"2023-01-01T%s:00Z","value":"%s"}\n' "$1" "${2:-x}"; }

hb() { ss-checkpoint "$T/st.db" heartbeat "$@"; }
# pulse_bg ARGS...: pulse on activity reading the fifo $T/in (kept open on fd 8), output
# in $T/out, events in $T/events; sets PULSE
pulse_bg() {
	mkfifo "$T/in"
	ss-checkpoint "$T/st.db" pulse activity --ts .value.timestamp --events "$T/events" "$@" \
		<"$T/in" >"$T/out" 2>"$T/err" &
	PULSE=$!
	exec 8>"$T/in"
}
# wait_until CMD...: poll for up to 10 s (foreground pulses run under timeout: a pause
# where none belongs fails the test instead of hanging it)
wait_until() {
	for _ in $(seq 100); do "$@" && return 0; sleep 0.1; done
	echo "timed out waiting for: $*" >&2
	return 1
}
lines() { [ "$(wc -l <"$1" 2>/dev/null)" = "$2" ]; }
count_events() { grep -c "\"event\":\"$1\"" "$T/events" 2>/dev/null || true; }
has_events() { [ "$(count_events "$1")" = "$2" ]; }
q() { sqlite3 "$T/st.db" "$1"; }
finish_pulse() {
	exec 8>&-
	wait_until not_running "$PULSE"
	wait "$PULSE"
}
not_running() { ! kill -0 "$1" 2>/dev/null; }
teardown() {
	[ -n "${PULSE:-}" ] && kill "$PULSE" 2>/dev/null
	common_teardown
}

@test "-h prints the usage; misuse exits 2" {
	run ss-checkpoint -h
	assert_success
	assert_line --partial "ss-checkpoint DB pulse CHECKPOINT --dependency NAME[=THRESHOLD]..."
	test_must_fail 2 ss-checkpoint "$T/st.db"
	test_must_fail 2 ss-checkpoint "$T/st.db" frobnicate
	test_must_fail 2 ss-checkpoint "$T/st.db" heartbeat onlyone
	test_must_fail 2 ss-checkpoint "$T/st.db" pulse activity
	test_must_fail 2 ss-checkpoint "$T/st.db" pulse activity --dependency weather=soon
	test_must_fail 2 ss-checkpoint "$T/st.db" pulse activity --dependency w --threshold x
	test_must_fail 2 ss-checkpoint "$T/st.db" pulse activity --dependency w --dependency w=1h
	test_must_fail 2 ss-checkpoint "$T/st.db" pulse activity --dependency w --idle soon
	test_must_fail 2 ss-checkpoint "$T/st.db" heartbeat activity w --idle 0s
	test_must_fail 3 ss-checkpoint "$T/st.db" pulse activity --dependency w --ts '.a |'
	test_must_fail 3 ss-checkpoint "$T/st.db" heartbeat activity w --ts '.a |'
	[ ! -e "$T/st.db" ] # misuse leaves no state file behind
}

@test "status reads a state file whose writer was killed mid-transaction (a hot journal)" {
	wth 10:00 | hb activity weather >/dev/null
	leave_hot_journal "$T/st.db" ss_checkpoint_dependency
	run ss-checkpoint "$T/st.db" status activity --json
	assert_success
	[ "$(jq -r '.dependencies[0].marker' <<<"$output")" = "2023-01-01T10:00:00Z" ]
}

@test "heartbeat passes records unchanged and keeps the max event time" {
	{ wth 10:00; wth 11:00; wth 10:30; } >"$T/w"
	hb activity weather <"$T/w" >"$T/out"
	cmp "$T/w" "$T/out"
	run ss-checkpoint "$T/st.db" status activity --json
	assert_success
	[ "$(jq -r '.dependencies[0] | .dependency + " " + .marker' <<<"$output")" = "weather 2023-01-01T11:00:00Z" ]
	# a later, older heartbeat does not move it back
	wth 09:00 | hb activity weather >/dev/null
	[ "$(q "select marker from ss_checkpoint_dependency")" = 1672570800000000000 ]
}

@test "records of more members than are noted: --ts and the envelope found as jq finds them" {
	# 75 members a line (64 are noted while it is validated); "t" and "offset" repeated
	# at the end, which jq keeps
	python3 -c '
f = ",".join("\"f%d\":%d" % (j, j) for j in range(70))
for i, t in enumerate((1672567200, 1672567260)):
    print("{\"topic\":\"weather\",\"partition\":1,\"offset\":%d,\"t\":1,%s,\"t\":%d,\"offset\":%d}" % (i, f, t, 7 + i))
' >"$T/w"
	hb activity weather --ts .t <"$T/w" >"$T/out"
	cmp "$T/w" "$T/out"
	[ "$(q "select topic, partition, offset from ss_offsets")" = "weather|1|8" ]
	[ "$(q "select marker from ss_checkpoint_dependency")" = "$(jq -s 'map(.t) | max * 1000000000' "$T/w")" ]
}

@test "heartbeat records envelope offsets in ss_offsets" {
	printf '{"topic":"weather","partition":1,"offset":%d,"value":{"t":%d}}\n' 5 1672567200 6 1672567260 |
		hb activity weather --ts .value.t >/dev/null
	[ "$(q "select topic, partition, offset from ss_offsets")" = "weather|1|6" ]
}

@test "pulse passes everything while the dependency keeps up; lag equal to the threshold is no downtime" {
	{ wth 10:00; wth 11:00; } | hb activity weather >/dev/null
	{ envl 0 10:30 a; envl 1 11:30 b; envl 2 12:00 c; } >"$T/a"
	timeout 20 ss-checkpoint "$T/st.db" pulse activity --dependency weather --threshold 1h \
		--ts .value.timestamp <"$T/a" >"$T/out" 2>"$T/err"
	cmp "$T/a" "$T/out"
	[ ! -s "$T/err" ]
	run ss-checkpoint "$T/st.db" status activity --json
	[ "$(jq -r '.state, .marker, .dependencies[0].lag, .dependencies[0].threshold' <<<"$output" | paste -sd' ')" = \
		"up 2023-01-01T12:00:00Z 3600 3600" ]
}

@test "pulse: default threshold is 10m" {
	wth 10:00 | hb activity weather >/dev/null
	pulse_bg --dependency weather
	envl 0 10:10 ok >&8
	envl 1 10:11 late >&8
	envl 2 10:12 held >&8
	wait_until has_events downtime 1
	wait_until lines "$T/out" 2
	[ "$(jq -r .value.value "$T/out" | paste -sd' ')" = "ok late" ]
	[ "$(jq -r '.lag, .threshold' "$T/events" | paste -sd' ')" = "660 600" ]
}

@test "downtime: one event per episode, pause until recovery, seek back to the checkpoint offsets" {
	{ wth 10:00; wth 11:00; } | hb activity weather >/dev/null
	pulse_bg --dependency weather --threshold 1h
	envl 0 10:30 swimming >&8
	envl 1 11:30 walking >&8
	envl 2 12:30 shopping >&8
	envl 3 13:10 lunch >&8
	envl 4 13:20 coffee >&8
	wait_until has_events downtime 1
	sleep 0.5 # records keep waiting: the pulse is paused, not slow
	[ "$(jq -r .value.value "$T/out" | paste -sd' ')" = "swimming walking shopping" ]
	has_events downtime 1
	run jq -c '{event, checkpoint, dependency, dependent_marker, dependency_marker, lag, threshold, offsets}' "$T/events"
	assert_output '{"event":"downtime","checkpoint":"activity","dependency":"weather","dependent_marker":"2023-01-01T12:30:00Z","dependency_marker":"2023-01-01T11:00:00Z","lag":5400,"threshold":3600,"offsets":[{"topic":"activity","partition":0,"offset":2}]}'
	# catching up partly is not enough: 12:00 has not passed the 12:30 marker
	wth 12:00 cloud | hb activity weather >/dev/null
	sleep 0.5
	has_events recovery 0
	lines "$T/out" 3
	{ wth 13:00 rain; wth 14:00 sun; } | hb activity weather >/dev/null
	wait_until has_events recovery 1
	finish_pulse
	[ "$(jq -r .value.value "$T/out" | paste -sd' ')" = "swimming walking shopping lunch coffee" ]
	run jq -c 'select(.event == "recovery") | {checkpoint, dependencies, dependent_marker, seek}' "$T/events"
	assert_output '{"checkpoint":"activity","dependencies":[{"dependency":"weather","dependency_marker":"2023-01-01T14:00:00Z"}],"dependent_marker":"2023-01-01T12:30:00Z","seek":[{"topic":"activity","partition":0,"offset":2}]}'
	has_events downtime 1
	# ss-consume --checkpoint re-reads from here; ss-consume --offsets-from resumes after 4
	[ "$(q "select checkpoint, topic, partition, offset from ss_seek_request")" = "activity|activity|0|2" ]
	[ "$(q "select topic, partition, offset from ss_offsets")" = "activity|0|4" ]
}

@test "edge-triggered: a second episode gets its own downtime event" {
	wth 10:00 | hb activity weather >/dev/null
	pulse_bg --dependency weather --threshold 30m
	envl 0 10:45 a >&8
	envl 1 10:50 b >&8
	wait_until has_events downtime 1
	wth 11:00 | hb activity weather >/dev/null
	wait_until has_events recovery 1
	wait_until lines "$T/out" 2
	envl 2 11:20 c >&8
	envl 3 11:40 d >&8
	envl 4 11:45 e >&8
	wait_until has_events downtime 2
	wth 12:00 | hb activity weather >/dev/null
	wait_until has_events recovery 2
	finish_pulse
	[ "$(jq -r .event "$T/events" | paste -sd' ')" = "downtime recovery downtime recovery" ]
	[ "$(jq -r 'select(.event == "downtime") | .dependent_marker' "$T/events" | paste -sd' ')" = \
		"2023-01-01T10:45:00Z 2023-01-01T11:40:00Z" ]
	lines "$T/out" 5
}

@test "several dependencies, each with its own threshold" {
	wth 10:00 | hb activity weather >/dev/null
	wth 10:00 | hb activity traffic >/dev/null
	pulse_bg --dependency weather --dependency traffic=5m --threshold 1h
	envl 0 10:04 a >&8
	envl 1 10:06 b >&8
	wait_until has_events downtime 1
	[ "$(jq -r '.dependency, .threshold' "$T/events" | paste -sd' ')" = "traffic 300" ]
	run ss-checkpoint "$T/st.db" status activity --json
	[ "$(jq -c '[.dependencies[] | [.dependency, .state, .threshold]]' <<<"$output")" = \
		'[["traffic","down",300],["weather","up",3600]]' ]
	# weather catching up does not end traffic's downtime
	wth 11:00 | hb activity weather >/dev/null
	sleep 0.5
	has_events recovery 0
	wth 10:07 | hb activity traffic >/dev/null
	wait_until has_events recovery 1
	finish_pulse
	lines "$T/out" 2
}

@test "both dependencies late at once: one downtime event each, one recovery when both caught up" {
	wth 10:00 | hb activity weather >/dev/null
	wth 10:00 | hb activity traffic >/dev/null
	pulse_bg --dependency weather=10m --dependency traffic=20m
	envl 0 11:00 a >&8
	wait_until has_events downtime 2
	[ "$(jq -r .dependency "$T/events" | sort | paste -sd' ')" = "traffic weather" ]
	wth 11:01 | hb activity weather >/dev/null
	sleep 0.5
	has_events recovery 0
	wth 11:01 | hb activity traffic >/dev/null
	wait_until has_events recovery 1
	[ "$(jq -c 'select(.event == "recovery") | [.dependencies[].dependency]' "$T/events")" = '["weather","traffic"]' ]
	finish_pulse
}

@test "a dependency that never sent a heartbeat counts from the first dependent record" {
	pulse_bg --dependency weather --threshold 1h
	envl 0 10:00 a >&8
	envl 1 10:59 b >&8
	envl 2 11:00 c >&8
	envl 3 11:01 d >&8
	wait_until has_events downtime 1
	[ "$(jq -c '[.dependency_marker, .lag]' "$T/events")" = '[null,3660]' ]
	wait_until lines "$T/out" 4
	run ss-checkpoint "$T/st.db" status activity --json
	[ "$(jq -c '.dependencies[0] | [.marker, .lag, .state]' <<<"$output")" = '[null,3660,"down"]' ]
	wth 11:02 | hb activity weather >/dev/null
	wait_until has_events recovery 1
	finish_pulse
}

@test "callbacks run with the event in their environment; their stdout stays out of the data" {
	wth 10:00 | hb activity weather >/dev/null
	mkdir "$T/hooks"
	pulse_bg --dependency weather --threshold 1h \
		--on-downtime 'echo "down $SS_CHECKPOINT $SS_DEPENDENCY"; printf "%s\n" "$SS_EVENT" >"$T/hooks/down.json"' \
		--on-recovery 'echo "up ${SS_DEPENDENCY-unset}"; printf "%s\n" "$SS_EVENT" >"$T/hooks/up.json"; exit 3'
	envl 0 11:30 a >&8
	wait_until test -s "$T/hooks/down.json"
	wth 12:00 | hb activity weather >/dev/null
	wait_until test -s "$T/hooks/up.json"
	finish_pulse
	[ "$(jq -r .value.value "$T/out")" = a ]
	grep -qx "down activity weather" "$T/err"
	grep -qx "up unset" "$T/err"
	grep -q "on-recovery: exit status 3" "$T/err"
	# SS_EVENT is the same JSON as the event written to --events
	jq -c . "$T/hooks/down.json" "$T/hooks/up.json" >"$T/hookevents"
	jq -c . "$T/events" | cmp - "$T/hookevents"
}

@test "events go to stderr by default" {
	wth 10:00 | hb activity weather >/dev/null
	envl 0 12:00 a | ss-checkpoint "$T/st.db" pulse activity --dependency weather=1h \
		--ts .value.timestamp >"$T/out" 2>"$T/err" &
	PULSE=$!
	wait_until grep -q '"event":"downtime"' "$T/err"
	lines "$T/out" 1
	# the other line: a pipe from the shell does not say which partitions it has
	grep -q "nothing says which partitions it has" "$T/err"
	grep '^{' "$T/err" | jq -e 'select(.event == "downtime") | .checkpoint == "activity"'
}

@test "status: a table by default, NDJSON with --json, one line per checkpoint" {
	wth 10:00 | hb activity weather >/dev/null
	wth 10:00 | hb orders weather >/dev/null
	envl 7 10:20 a 3 | timeout 20 ss-checkpoint "$T/st.db" pulse activity --dependency weather=1h \
		--ts .value.timestamp >/dev/null
	run ss-checkpoint "$T/st.db" status
	assert_success
	assert_line "checkpoint activity: up"
	assert_line --regexp '^  offsets +activity\[3\]=7$'
	assert_line --regexp '^  weather +up +2023-01-01T10:00:00Z +1h +20m$'
	assert_line "checkpoint orders: up"
	run ss-checkpoint "$T/st.db" status --json
	assert_success
	[ "${#lines[@]}" = 2 ]
	[ "$(jq -c 'select(.checkpoint == "activity") | [.state, .marker, .offsets, .down_marker, .episode_start, .episode_end, .seek_pending]' <<<"$output")" = \
		'["up","2023-01-01T10:20:00Z",[{"topic":"activity","partition":3,"offset":7}],null,null,null,[]]' ]
	[ "$(jq -c 'select(.checkpoint == "orders") | [.marker, .dependencies[0].lag, .dependencies[0].threshold]' <<<"$output")" = \
		'[null,null,null]' ]
	test_must_fail 1 ss-checkpoint "$T/st.db" status nosuch
	assert_output --partial "no checkpoint nosuch"
	test_must_fail 1 ss-checkpoint "$T/missing.db" status
	[ ! -e "$T/missing.db" ]
}

@test "status shows the episode: start while down, start and end after recovery" {
	wth 10:00 | hb activity weather >/dev/null
	pulse_bg --dependency weather --threshold 1h
	envl 0 11:30 a >&8
	wait_until has_events downtime 1
	run ss-checkpoint "$T/st.db" status activity --json
	[ "$(jq -c '[.state, .down_marker, (.episode_start | type), .episode_end]' <<<"$output")" = \
		'["down","2023-01-01T11:30:00Z","string",null]' ]
	wth 11:31 | hb activity weather >/dev/null
	wait_until has_events recovery 1
	finish_pulse
	run ss-checkpoint "$T/st.db" status activity --json
	jq -e '.state == "up" and (.episode_end | type) == "string" and .seek_pending == [{"topic":"activity","partition":0,"offset":0}]' <<<"$output"
}

@test "restart in the middle of an episode: the new pulse starts paused and recovers" {
	wth 10:00 | hb activity weather >/dev/null
	pulse_bg --dependency weather --threshold 1h
	envl 0 10:30 a >&8
	envl 1 11:30 b >&8
	envl 2 11:40 c >&8
	wait_until has_events downtime 1
	kill -9 "$PULSE"
	wait "$PULSE" || true
	exec 8>&-
	rm "$T/in"
	run ss-checkpoint "$T/st.db" status activity --json
	jq -e '.state == "down"' <<<"$output"
	# restarted (ss-consume --offsets-from would resume after offset 1)
	[ "$(q "select offset from ss_offsets")" = 1 ]
	pulse_bg --dependency weather --threshold 1h
	envl 2 11:40 c >&8
	sleep 0.5
	lines "$T/out" 0
	has_events downtime 1 # already announced before the restart
	wth 12:00 | hb activity weather >/dev/null
	wait_until has_events recovery 1
	finish_pulse
	[ "$(jq -r .value.value "$T/out")" = c ]
	[ "$(q "select offset from ss_seek_request")" = 1 ]
}

@test "events committed but not delivered before a crash are delivered at the next start" {
	wth 10:00 | hb activity weather >/dev/null
	envl 0 12:00 a | ss-checkpoint "$T/st.db" pulse activity --dependency weather=1h \
		--ts .value.timestamp --on-downtime 'kill -9 $PPID' >/dev/null 2>"$T/err" &
	PULSE=$!
	wait_until not_running "$PULSE"
	[ "$(q "select kind from ss_checkpoint_event")" = downtime ]
	: | ss-checkpoint "$T/st.db" pulse activity --dependency weather=1h --events "$T/events" &
	PULSE=$!
	wait_until has_events downtime 1
	no_pending() { [ "$(q "select count(*) from ss_checkpoint_event")" = 0 ]; }
	wait_until no_pending
}

@test "bad timestamp: clear error with the line, records before it passed and stored" {
	wth 10:00 | hb activity weather >/dev/null
	{ envl 0 10:10 a; envl 1 10:20 b; echo '{"topic":"activity","partition":0,"offset":2,"value":{"timestamp":"yesterday"}}'; envl 3 10:30 d; } >"$T/a"
	test_must_fail 1 timeout 20 ss-checkpoint "$T/st.db" pulse activity --dependency weather=1h \
		--ts .value.timestamp <"$T/a"
	assert_output --partial "<stdin>:3:"
	assert_output --partial "--ts .value.timestamp"
	[ "$(q "select offset from ss_offsets")" = 1 ]
	run ss-checkpoint "$T/st.db" status activity --json
	[ "$(jq -r .marker <<<"$output")" = 2023-01-01T10:20:00Z ]
	# heartbeat too
	printf '%s\n' '{"timestamp":"2023-01-01T11:00:00Z"}' '{"timestamp":null}' >"$T/w"
	test_must_fail 1 ss-checkpoint "$T/st.db" heartbeat activity weather <"$T/w"
	assert_output --partial "<stdin>:2:"
	[ "$(q "select marker from ss_checkpoint_dependency")" = 1672570800000000000 ]
}

@test "bad timestamp: --on-error skip and dead-letter go on, nothing silently lost" {
	wth 10:00 | hb activity weather >/dev/null
	{ envl 0 10:10 a; echo 'not json'; echo '{"value":{"timestamp":[1]}}'; envl 3 10:30 d; } >"$T/a"
	run timeout 20 ss-checkpoint "$T/st.db" pulse activity --dependency weather=1h --ts .value.timestamp \
		--on-error skip <"$T/a"
	assert_success
	[ "$(grep -c '^{' <<<"$output")" = 2 ]
	assert_output --partial "<stdin>:2:"
	assert_output --partial "<stdin>:3:"
	timeout 20 ss-checkpoint "$T/st.db" pulse activity --dependency weather=1h --ts .value.timestamp \
		--on-error "dead-letter=$T/dead" <"$T/a" >"$T/out"
	lines "$T/out" 2
	[ "$(jq -r .line "$T/dead" | paste -sd' ')" = "2 3" ]
	[ "$(jq -r .raw "$T/dead" | head -1)" = "not json" ]
}

@test "numeric event times with --ts-unit" {
	printf '{"t":%d}\n' 1672567200000 | hb activity weather --ts .t --ts-unit ms >/dev/null
	printf '{"t":%d}\n' 1672574400000 | ss-checkpoint "$T/st.db" pulse activity \
		--dependency weather=1h --ts .t --ts-unit ms --events "$T/events" >/dev/null &
	PULSE=$!
	wait_until has_events downtime 1
	[ "$(jq -r .lag "$T/events")" = 7200 ]
}

@test "two processes on one DB: heartbeat and pulse stream at the same time without errors" {
	seq 0 19999 | awk '{ printf "{\"timestamp\":%d}\n", 1672567200 + $1 }' >"$T/w"
	seq 0 19999 | awk '{ printf "{\"topic\":\"activity\",\"partition\":%d,\"offset\":%d,\"t\":%d}\n", $1 % 4, $1, 1672567200 + $1 }' >"$T/a"
	ss-checkpoint "$T/st.db" heartbeat activity weather <"$T/w" >"$T/wout" 2>"$T/werr" &
	local h=$!
	timeout 20 ss-checkpoint "$T/st.db" pulse activity --dependency weather=1d --ts .t <"$T/a" >"$T/out" 2>"$T/err"
	wait "$h"
	cmp "$T/w" "$T/wout"
	cmp "$T/a" "$T/out"
	[ ! -s "$T/err" ] && [ ! -s "$T/werr" ]
	[ "$(q "select partition || ':' || offset from ss_offsets order by partition" | paste -sd' ')" = \
		"0:19996 1:19997 2:19998 3:19999" ]
	[ "$(q "select marker from ss_checkpoint_dependency")" = 1672587199000000000 ]
}

@test "a paused pulse sees a trickled heartbeat promptly (commit on idle, poll while paused)" {
	wth 10:00 | hb activity weather >/dev/null
	pulse_bg --dependency weather --threshold 1h
	envl 0 12:00 a >&8
	wait_until has_events downtime 1
	mkfifo "$T/w"
	hb activity weather <"$T/w" >/dev/null &
	local h=$!
	exec 7>"$T/w"
	wth 12:01 >&7 # one record, heartbeat's input stays open
	wait_until has_events recovery 1
	exec 7>&-
	wait "$h"
	finish_pulse
}

@test "recovery seeks every partition to its offset at downtime" {
	wth 10:00 | hb activity weather >/dev/null
	pulse_bg --dependency weather --threshold 1h
	envl 10 10:10 a 0 >&8
	envl 20 10:20 b 1 >&8
	envl 11 10:30 c 0 >&8
	envl 21 11:30 d 1 >&8 # partition 0 is still at 10:30: no downtime yet
	envl 12 11:40 e 0 >&8 # now both are past 11:00
	envl 22 11:50 f 1 >&8
	wait_until has_events downtime 1
	[ "$(jq -c '[.dependent_marker, [.offsets[] | [.partition, .offset]]]' "$T/events")" = \
		'["2023-01-01T11:30:00Z",[[0,12],[1,21]]]' ]
	wth 12:00 | hb activity weather >/dev/null
	wait_until has_events recovery 1
	finish_pulse
	[ "$(q "select partition || ':' || offset from ss_seek_request order by partition" | paste -sd' ')" = "0:12 1:21" ]
	[ "$(q "select partition || ':' || offset from ss_offsets order by partition" | paste -sd' ')" = "0:12 1:22" ]
}

@test "ss_seeks_take (lib/db/seeks.h) takes and deletes the requests of one checkpoint" {
	cat >"$T/take.c" <<-'EOF'
	#include <stdio.h>
	#include "db/seeks.h"
	static void cb(const char *t, int32_t p, int64_t o, void *a) { (void)a; printf("%s %d %lld\n", t, p, (long long)o); }
	int main(int argc, char **argv) { (void)argc; printf("n=%d\n", ss_seeks_take(argv[1], argv[2], cb, NULL)); return 0; }
	EOF
	local san=
	built_sanitized && san=-fsanitize=address,undefined # make SANITIZE=1
	cc $san -I"$ROOT/lib" -o "$T/take" "$T/take.c" "$LIBSS" -lrdkafka -lsqlite3 -ljq -lm -lpthread
	run "$T/take" "$T/st.db" activity
	assert_output "n=0"
	[ ! -e "$T/st.db" ]
	wth 10:00 | hb activity weather >/dev/null
	run "$T/take" "$T/st.db" activity
	assert_output "n=0"
	q "insert into ss_seek_request values('activity','activity',0,5),('activity','activity',1,7),('other','activity',0,1)"
	run "$T/take" "$T/st.db" activity
	assert_output "$(printf 'activity 0 5\nactivity 1 7\nn=2')"
	run "$T/take" "$T/st.db" activity
	assert_output "n=0"
	[ "$(q "select checkpoint from ss_seek_request")" = other ]
}

# Partitions. envp TOPIC PARTITION OFFSET HH:MM: an envelope with the event time in
# .value.timestamp
envp() {
	printf '{"topic":"%s","partition":%d,"offset":%d,"timestamp":0,"key":null,"value":{"timestamp":"2023-01-01T%s:00Z"},"headers":{}}\n' \
		"$1" "$2" "$3" "$4"
}
hbp() { hb activity weather --ts .value.timestamp "$@"; }
status_json() { ss-checkpoint "$T/st.db" status activity --json; }

@test "partitions: a fast partition of the dependent stream raises no downtime the slow ones would not" {
	wth 11:00 | hb activity weather >/dev/null
	# partition 0 runs to 12:30, 1..3 lag behind at 10:xx: the stream is at 10:50
	local fast=(10:00 10:30 11:00 11:30 12:00 12:30) slow=(10:00 10:10 10:20 10:30 10:40 10:50)
	for i in 0 1 2 3 4 5; do
		envp activity 0 "$i" "${fast[i]}"
		for p in 1 2 3; do envp activity "$p" "$i" "${slow[i]}"; done
	done >"$T/a"
	pulse_bg --dependency weather --threshold 1h
	cat "$T/a" >&8
	wait_until lines "$T/out" 24
	commit_marker() { [ "$(status_json | jq -r .marker)" = 2023-01-01T10:50:00Z ]; }
	wait_until commit_marker
	has_events downtime 0
	run status_json
	[ "$(jq -c '[.state, [.partitions[] | [.partition, .marker[11:16], .idle]]]' <<<"$output")" = \
		'["up",[[0,"12:30",false],[1,"10:50",false],[2,"10:50",false],[3,"10:50",false]]]' ]
	[ "$(jq -r '.dependencies[0].lag' <<<"$output")" = -600 ]
	# the slow partitions pass 12:00 too: now the whole stream is late
	for p in 1 2 3; do envp activity "$p" 6 12:05 >&8; done
	envp activity 1 7 12:10 >&8
	wait_until has_events downtime 1
	[ "$(jq -r '[.dependent_marker, .lag] | @tsv' "$T/events")" = "$(printf '2023-01-01T12:05:00Z\t3900')" ]
	wth 12:30 | hb activity weather >/dev/null
	wait_until has_events recovery 1
	finish_pulse
	cmp "$T/out" <(cat "$T/a"; for p in 1 2 3; do envp activity "$p" 6 12:05; done; envp activity 1 7 12:10)
	[ "$(q "select partition || ':' || offset from ss_seek_request order by partition" | paste -sd' ')" = "0:5 1:6 2:6 3:6" ]
}

@test "partitions: a dependency is only as fresh as its slowest live partition" {
	{ envp weather 0 0 13:00; envp weather 1 0 13:00; envp weather 2 0 13:00; envp weather 3 0 10:00; } | hbp >/dev/null
	run status_json
	[ "$(jq -c '.dependencies[0] | [.marker, [.partitions[] | [.partition, .marker[11:16]]]]' <<<"$output")" = \
		'["2023-01-01T10:00:00Z",[[0,"13:00"],[1,"13:00"],[2,"13:00"],[3,"10:00"]]]' ]
	# the max is still in ss_checkpoint_dependency, for records without envelope
	[ "$(q "select marker from ss_checkpoint_dependency")" = 1672578000000000000 ]
	pulse_bg --dependency weather --threshold 1h
	envl 0 11:30 a >&8
	wait_until has_events downtime 1
	[ "$(jq -r '[.dependency_marker, .lag] | @tsv' "$T/events")" = "$(printf '2023-01-01T10:00:00Z\t5400')" ]
	envp weather 3 1 11:00 | hbp >/dev/null
	sleep 0.5
	has_events recovery 0
	envp weather 3 2 11:31 | hbp >/dev/null
	wait_until has_events recovery 1
	finish_pulse
	[ "$(jq -c 'select(.event == "recovery") | .dependencies' "$T/events")" = \
		'[{"dependency":"weather","dependency_marker":"2023-01-01T11:31:00Z"}]' ]
}

@test "partitions: a silent dependency partition stops holding the heartbeat back after --idle" {
	mkfifo "$T/w"
	hbp --idle 1s <"$T/w" >/dev/null &
	local h=$!
	exec 7>"$T/w"
	for p in 0 1 2 3; do envp weather "$p" 0 10:00; done >&7
	# the heartbeat has its four markers before the pulse looks (a loaded machine)
	four_markers() { [ "$(q 'SELECT count(*) FROM ss_checkpoint_dependency_partition' 2>/dev/null)" = 4 ]; }
	wait_until four_markers
	pulse_bg --dependency weather --threshold 1h
	envl 0 11:30 a >&8
	wait_until has_events downtime 1
	# partitions 0..2 catch up, 3 says nothing more
	for p in 0 1 2; do envp weather "$p" 1 12:00; done >&7
	wait_until has_events recovery 1
	run status_json
	[ "$(jq -c '.dependencies[0] | [.marker, .partitions[3].idle]' <<<"$output")" = '["2023-01-01T12:00:00Z",true]' ]
	run ss-checkpoint "$T/st.db" status activity
	assert_line --regexp '^    weather\[3\] +idle +2023-01-01T10:00:00Z$'
	# it speaks again, still behind: it holds the heartbeat back again
	envp weather 3 1 10:30 >&7
	back_to_1030() { [ "$(status_json | jq -r '.dependencies[0].marker')" = 2023-01-01T10:30:00Z ]; }
	wait_until back_to_1030
	exec 7>&-
	finish_pulse # it holds a copy of fd 7: the heartbeat ends after it
	wait "$h"
}

@test "partitions: a silent partition of the dependent stream stops holding its marker back after --idle" {
	wth 10:00 | hb activity weather >/dev/null
	pulse_bg --dependency weather --threshold 1h --idle 3s
	envp activity 3 0 10:00 >&8
	for p in 0 1 2; do envp activity "$p" 0 11:20; done >&8
	wait_until lines "$T/out" 4
	sleep 2
	for p in 0 1 2; do envp activity "$p" 1 11:30; done >&8
	wait_until lines "$T/out" 7
	has_events downtime 0 # partition 3 (10:00) still holds the marker back
	# it turns idle with no record after it: the pulse looks between records
	wait_until has_events downtime 1
	[ "$(jq -r .dependent_marker "$T/events")" = 2023-01-01T11:30:00Z ]
	run status_json
	[ "$(jq -c '[.partitions[] | [.partition, .idle]]' <<<"$output")" = '[[0,false],[1,false],[2,false],[3,true]]' ]
	wth 12:00 | hb activity weather >/dev/null
	wait_until has_events recovery 1
	finish_pulse
}

@test "partitions: a restart keeps the per-partition markers" {
	wth 11:00 | hb activity weather >/dev/null
	{ envp activity 1 0 10:30; envp activity 0 0 12:30; } >"$T/a"
	# through a pipe that does not tell its partitions (a file says that both ended:
	# the stream would be at 12:30)
	cat "$T/a" | timeout 20 ss-checkpoint "$T/st.db" pulse activity --dependency weather=1h \
		--ts .value.timestamp --partitions 2 >/dev/null
	[ "$(q "select partition || ':' || marker from ss_checkpoint_offset order by partition" | paste -sd' ')" = \
		"0:1672576200000000000 1:1672569000000000000" ]
	# only the fast partition has records now: the slow one, restored, still holds it back
	envp activity 0 1 12:40 >"$T/b"
	cat "$T/b" | timeout 20 ss-checkpoint "$T/st.db" pulse activity --dependency weather=1h \
		--ts .value.timestamp --partitions 2 --events "$T/events" >"$T/out"
	cmp "$T/b" "$T/out"
	has_events downtime 0
	run status_json
	[ "$(jq -c '[.marker, [.partitions[] | .marker[11:16]]]' <<<"$output")" = '["2023-01-01T10:30:00Z",["12:40","10:30"]]' ]
	# heartbeat: a run that reads one partition keeps the others' markers
	{ envp weather 0 0 11:00; envp weather 1 0 11:10; } | hbp >/dev/null
	envp weather 0 1 11:20 | hbp >/dev/null
	run status_json
	[ "$(jq -c '.dependencies[0] | [.marker, [.partitions[] | .marker[11:16]]]' <<<"$output")" = \
		'["2023-01-01T11:10:00Z",["11:20","11:10"]]' ]
}

@test "partitions: a state file from the version before partitions still opens" {
	sqlite3 "$T/st.db" <<-'EOF'
	PRAGMA journal_mode=WAL;
	CREATE TABLE ss_checkpoint(name TEXT PRIMARY KEY, marker INTEGER, down_marker INTEGER, episode_start INTEGER, episode_end INTEGER);
	CREATE TABLE ss_checkpoint_dependency(checkpoint TEXT NOT NULL, name TEXT NOT NULL, marker INTEGER, since INTEGER, threshold INTEGER, down INTEGER NOT NULL DEFAULT 0, PRIMARY KEY(checkpoint, name));
	CREATE TABLE ss_checkpoint_offset(checkpoint TEXT NOT NULL, topic TEXT NOT NULL, partition INTEGER NOT NULL, offset INTEGER NOT NULL, saved INTEGER, PRIMARY KEY(checkpoint, topic, partition));
	CREATE TABLE ss_checkpoint_event(seq INTEGER PRIMARY KEY AUTOINCREMENT, checkpoint TEXT NOT NULL, kind TEXT NOT NULL, dependency TEXT, json TEXT NOT NULL);
	CREATE TABLE ss_seek_request(checkpoint TEXT NOT NULL, topic TEXT NOT NULL, partition INTEGER NOT NULL, offset INTEGER NOT NULL, PRIMARY KEY(checkpoint, topic, partition));
	CREATE TABLE ss_offsets(topic TEXT NOT NULL, partition INTEGER NOT NULL, offset INTEGER NOT NULL, PRIMARY KEY(topic, partition)) WITHOUT ROWID;
	INSERT INTO ss_checkpoint VALUES('activity', 1672569000000000000, NULL, NULL, NULL);
	INSERT INTO ss_checkpoint_dependency VALUES('activity', 'weather', 1672570800000000000, 1672567200000000000, 3600000000000, 0);
	INSERT INTO ss_checkpoint_offset VALUES('activity', 'activity', 0, 4, NULL);
	EOF
	run ss-checkpoint "$T/st.db" status --json
	assert_success
	[ "$(jq -c '[.marker, .partitions, .offsets[0].offset, .dependencies[0].marker, .dependencies[0].lag, .dependencies[0].partitions]' <<<"$output")" = \
		'["2023-01-01T10:30:00Z",[],4,"2023-01-01T11:00:00Z",-1800,[]]' ]
	{ envp activity 0 5 10:40; envp activity 1 0 10:50; } | timeout 20 ss-checkpoint "$T/st.db" pulse activity \
		--dependency weather=1h --ts .value.timestamp >/dev/null
	envp weather 2 0 11:30 | hbp >/dev/null
	run status_json
	[ "$(jq -c '[.marker, [.partitions[] | .marker[11:16]], .dependencies[0].marker]' <<<"$output")" = \
		'["2023-01-01T10:40:00Z",["10:40","10:50"],"2023-01-01T11:30:00Z"]' ]
}

@test "partitions: --partitions N: no downtime from the first partitions alone, until N were heard from or --idle passed" {
	test_must_fail 2 ss-checkpoint "$T/st.db" pulse activity --dependency weather --partitions two
	wth 11:00 | hb activity weather >/dev/null
	# a consumer delivers partition 0's backlog first
	pulse_bg --dependency weather --threshold 1h --partitions 2
	envp activity 0 0 12:30 >&8
	envp activity 1 0 10:30 >&8
	wait_until lines "$T/out" 2
	has_events downtime 0
	envp activity 1 1 12:10 >&8
	wait_until has_events downtime 1
	[ "$(jq -r .dependent_marker "$T/events")" = 2023-01-01T12:10:00Z ]
	wth 13:00 | hb activity weather >/dev/null
	wait_until has_events recovery 1
	finish_pulse
	# the other partitions never come: after --idle, the ones heard from decide
	rm "$T/in" "$T/events" "$T/st.db"*
	wth 11:00 | hb activity weather >/dev/null
	pulse_bg --dependency weather --threshold 1h --partitions 4 --idle 2s
	envp activity 0 0 12:30 >&8
	wait_until lines "$T/out" 1
	sleep 1
	has_events downtime 0
	# once --idle has passed since the start, the one heard from decides (no record needed)
	wait_until has_events downtime 1
	wth 13:00 | hb activity weather >/dev/null
	wait_until has_events recovery 1
	finish_pulse
}

@test "partitions: a pipe that does not say which partitions it has is said once; --partitions N or records without envelope say nothing" {
	wth 11:00 | hb activity weather >/dev/null
	{ envp activity 0 0 10:10; envp activity 1 0 10:20; envp activity 0 1 10:30; } >"$T/a"
	cat "$T/a" | timeout 20 ss-checkpoint "$T/st.db" pulse activity --dependency weather=1h \
		--ts .value.timestamp >"$T/out" 2>"$T/err"
	cmp "$T/a" "$T/out"
	[ "$(grep -c 'nothing says which partitions it has' "$T/err")" = 1 ]
	grep -q 'raise a downtime that never happened; --partitions N waits for N' "$T/err"
	cat "$T/a" | timeout 20 ss-checkpoint "$T/st.db" pulse activity --dependency weather=1h \
		--ts .value.timestamp --partitions 2 >/dev/null 2>"$T/err"
	[ ! -s "$T/err" ]
	{ envp weather 0 0 11:10; envp weather 1 0 11:20; } | hbp >/dev/null 2>"$T/err"
	grep -q 'make the dependency look fresher than it is' "$T/err"
	{ wth 11:30; wth 11:40; } | hb activity weather >/dev/null 2>"$T/err"
	[ ! -s "$T/err" ]
}

@test "partitions: a regular file is read beforehand: each partition ends with its last record there" {
	wth 11:00 | hb activity weather >/dev/null
	# partition 1 ended at 10:30, partition 0 went on to 12:30: the stream got to 12:30
	{ envp activity 1 0 10:30; envp activity 0 0 11:30; envp activity 0 1 12:30; } >"$T/a"
	ss-checkpoint "$T/st.db" pulse activity --dependency weather=1h --ts .value.timestamp \
		--events "$T/events" <"$T/a" >"$T/out" 2>"$T/err" &
	PULSE=$!
	wait_until has_events downtime 1
	[ "$(jq -r '[.dependent_marker, .lag] | @tsv' "$T/events")" = "$(printf '2023-01-01T12:30:00Z\t5400')" ]
	cmp "$T/a" "$T/out"
	run status_json
	[ "$(jq -c '[.partitions[] | [.partition, .state]]' <<<"$output")" = '[[0,"done"],[1,"done"]]' ]
	# it pauses at its end as anywhere: it exits once the weather caught up
	wth 12:31 | hb activity weather >/dev/null
	wait_until has_events recovery 1
	wait "$PULSE"
	[ ! -s "$T/err" ]
	# a heartbeat on a file: the dependency is as far as its last record
	{ envp weather 0 0 13:00; envp weather 1 0 12:40; } >"$T/w"
	hbp <"$T/w" >/dev/null
	run status_json
	[ "$(jq -c '.dependencies[0] | [.marker, .waiting, [.partitions[] | .state]]' <<<"$output")" = \
		'["2023-01-01T13:00:00Z",0,["done","done"]]' ]
}

# many_pulse MODE THRESHOLD NPARTS: a pulse on $T/a, read as a file or through a pipe
# with --partitions NPARTS, against the weather heartbeat; prints the dependent marker of
# its first downtime (then lets it recover) or "none"; every record passes in the end
many_pulse() {
	local in="$T/a" parts=()
	if [ "$1" = pipe ]; then
		mkfifo "$T/in.$$"
		cat "$T/a" >"$T/in.$$" &
		in="$T/in.$$" parts=(--partitions "$3")
	fi
	ss-checkpoint "$T/st.db" pulse activity --dependency "weather=$2s" --ts .value.timestamp \
		"${parts[@]}" --events "$T/events" <"$in" >"$T/out" 2>"$T/err" &
	PULSE=$!
	wait_until eval 'not_running $PULSE || has_events downtime 1' >&2
	if has_events downtime 1; then
		jq -r .dependent_marker "$T/events"
		wth 23:59 | hb activity weather >/dev/null
	else
		echo none
	fi
	wait "$PULSE"
	rm -f "$T/in.$$"
	[ ! -s "$T/err" ] && cmp "$T/a" "$T/out" >&2
}

@test "partitions: hundreds of them in random order: the first downtime starts where a brute force says (a file, a pipe)" {
	local seed n dep thr_file want_file thr_pipe want_pipe
	# seeds 1..SS_CHECKPOINT_MANY (default 12): 1 to 600 partitions, up to 12 records each
	for seed in $(seq "${SS_CHECKPOINT_MANY:-12}"); do
		python3 "$BATS_TEST_DIRNAME/checkpoint-many-gen.py" "$seed" "$T"
		read -r n dep thr_file want_file thr_pipe want_pipe <"$T/expect"
		for mode in file pipe; do
			rm -f "$T"/st.db* "$T/events"
			printf '{"timestamp":"%s","value":"sun"}\n' "$dep" | hb activity weather >/dev/null
			local thr=$thr_file want=$want_file
			[ "$mode" = file ] || thr=$thr_pipe want=$want_pipe
			got=$(many_pulse "$mode" "$thr" "$n")
			[ "$got" = "$want" ] || {
				echo "seed $seed, $mode, $n partitions, --dependency weather=${thr}s: first downtime at $got, want $want" >&2
				return 1
			}
		done
	done
}

@test "partitions: heartbeat --partitions N: no heartbeat before N partitions were heard from or --idle passed" {
	test_must_fail 2 ss-checkpoint "$T/st.db" heartbeat activity weather --partitions -1
	mkfifo "$T/w"
	hbp --partitions 3 --idle 3s <"$T/w" >/dev/null 2>"$T/err" &
	local h=$!
	exec 7>"$T/w"
	{ envp weather 0 0 13:00; envp weather 1 0 12:00; } >&7
	waiting() { [ "$(status_json | jq -c '.dependencies[0] | [.marker, .waiting]')" = "$1" ]; }
	wait_until waiting '[null,1]'
	# the pulse decides nothing on it meanwhile (a weather never heard from would be late)
	{ envl 0 10:00 a; envl 1 12:30 b; } | timeout 20 ss-checkpoint "$T/st.db" pulse activity \
		--dependency weather=1h --ts .value.timestamp --events "$T/events" >/dev/null 2>&1
	has_events downtime 0
	# --idle passed: the two heard from count, and both are silent since: the largest counts
	wait_until waiting '["2023-01-01T13:00:00Z",0]'
	exec 7>&-
	wait "$h"
	[ ! -s "$T/err" ]
}

@test "partitions: a state file from the version before partition states opens; heartbeat and pulse add them" {
	sqlite3 "$T/st.db" >/dev/null <<-'EOF2'
	PRAGMA journal_mode=WAL;
	CREATE TABLE ss_checkpoint(name TEXT PRIMARY KEY, marker INTEGER, down_marker INTEGER, episode_start INTEGER, episode_end INTEGER);
	CREATE TABLE ss_checkpoint_dependency(checkpoint TEXT NOT NULL, name TEXT NOT NULL, marker INTEGER, since INTEGER, threshold INTEGER, down INTEGER NOT NULL DEFAULT 0, PRIMARY KEY(checkpoint, name));
	CREATE TABLE ss_checkpoint_offset(checkpoint TEXT NOT NULL, topic TEXT NOT NULL, partition INTEGER NOT NULL, offset INTEGER NOT NULL, saved INTEGER, marker INTEGER, seen INTEGER, idle INTEGER, PRIMARY KEY(checkpoint, topic, partition));
	CREATE TABLE ss_checkpoint_event(seq INTEGER PRIMARY KEY AUTOINCREMENT, checkpoint TEXT NOT NULL, kind TEXT NOT NULL, dependency TEXT, json TEXT NOT NULL);
	CREATE TABLE ss_seek_request(checkpoint TEXT NOT NULL, topic TEXT NOT NULL, partition INTEGER NOT NULL, offset INTEGER NOT NULL, PRIMARY KEY(checkpoint, topic, partition));
	CREATE TABLE ss_offsets(topic TEXT NOT NULL, partition INTEGER NOT NULL, offset INTEGER NOT NULL, PRIMARY KEY(topic, partition)) WITHOUT ROWID;
	CREATE TABLE ss_checkpoint_dependency_partition(checkpoint TEXT NOT NULL, name TEXT NOT NULL, topic TEXT NOT NULL, partition INTEGER NOT NULL, marker INTEGER NOT NULL, seen INTEGER NOT NULL, idle INTEGER NOT NULL, PRIMARY KEY(checkpoint, name, topic, partition));
	INSERT INTO ss_checkpoint VALUES('activity', 1672569000000000000, NULL, NULL, NULL);
	INSERT INTO ss_checkpoint_dependency VALUES('activity', 'weather', 1672574400000000000, NULL, 3600000000000, 0);
	INSERT INTO ss_checkpoint_dependency_partition VALUES('activity', 'weather', 'weather', 0, 1672570800000000000, 4102444800000000000, 30000000000);
	INSERT INTO ss_checkpoint_offset VALUES('activity', 'activity', 0, 4, NULL, 1672569000000000000, 4102444800000000000, 30000000000);
	EOF2
	run ss-checkpoint "$T/st.db" status --json
	assert_success
	[ "$(jq -c '[.marker, .partitions[0].state, .dependencies[0].marker, .dependencies[0].waiting, .dependencies[0].partitions[0].state]' <<<"$output")" = \
		'["2023-01-01T10:30:00Z",null,"2023-01-01T11:00:00Z",0,null]' ]
	{ envp weather 0 1 11:10; envp weather 1 0 11:20; } >"$T/w"
	hbp <"$T/w" >/dev/null
	envp activity 0 5 10:40 >"$T/a"
	timeout 20 ss-checkpoint "$T/st.db" pulse activity --dependency weather=1h --ts .value.timestamp <"$T/a" >/dev/null
	run status_json
	# every partition done: the largest event time of the dependency counts (12:00, before)
	[ "$(jq -c '[.marker, [.partitions[] | .state], .dependencies[0].marker, [.dependencies[0].partitions[] | .state]]' <<<"$output")" = \
		'["2023-01-01T10:40:00Z",["done"],"2023-01-01T12:00:00Z",["done","done"]]' ]
}

@test "partitions: one a rebalance took holds the dependent marker until silent for --idle" {
	export SS_FEED_DIR="$T/feed"
	wth 11:00 | hb activity weather >/dev/null
	mkfifo "$T/in"
	{
		echo "feed running activity:0:-1:behind activity:1:-1:behind"
		echo "rec $(envp activity 1 0 10:00)"
		echo "rec $(envp activity 0 0 11:30)"
		echo "feed running activity:0:0:behind activity:1:0:revoked"
		echo "rec $(envp activity 0 1 12:30)"
		echo "sleep 30"
	} | python3 "$BATS_TEST_DIRNAME/feed-writer.py" "$T/in" &
	local w=$!
	ss-checkpoint "$T/st.db" pulse activity --dependency weather=1h --ts .value.timestamp \
		--idle 3s --events "$T/events" <"$T/in" >"$T/out" 2>"$T/err" &
	PULSE=$!
	wait_until lines "$T/out" 3
	# a rebalance may give it back: it still holds the stream at 10:00 for now
	sleep 1
	has_events downtime 0
	[ "$(status_json | jq -c '[.marker, [.partitions[] | .state]]')" = '["2023-01-01T10:00:00Z",["reading","revoked"]]' ]
	# silent for --idle: gone for good, the stream is at 12:30
	wait_until has_events downtime 1
	[ "$(jq -r .dependent_marker "$T/events")" = 2023-01-01T12:30:00Z ]
	kill "$w"
	[ ! -s "$T/err" ]
}

# Status on a terminal: under each dependency its last day as 48 cells of 30 minutes
# (█ down all of it, ▄ part of it, ▁ up) and how far behind it is; times of episodes
# are wall clock, so the tests place them relative to now, edges mid-cell.
H=3600000000000
now_ns() { echo $(($(date +%s) * 1000000000)); }
# cells N GLYPH: GLYPH N times
cells() { local i s=; for ((i = 0; i < $1; i++)); do s+=$2; done; printf %s "$s"; }
tty_status() { on_tty "COLUMNS=${1:-80} ss-checkpoint '$T/st.db' status activity" | tr -d '\r'; }
# two dependencies 20m behind, up, no episode yet
two_deps() {
	wth 10:00 | hb activity weather >/dev/null
	wth 10:00 | hb activity news >/dev/null
	act 10:20 | timeout 20 ss-checkpoint "$T/st.db" pulse activity --dependency weather=1h \
		--dependency news=1h >/dev/null
}
# weather: one episode ended 25h ago (not drawn), one across the left edge, one of 1h30m
# mid-cell to mid-cell, one open since 45m ago
weather_episodes() {
	local n
	n=$(now_ns)
	q "INSERT INTO ss_checkpoint_episode VALUES
		('activity', 'weather', $n - 30 * $H, $n - 26 * $H),
		('activity', 'weather', $n - 25 * $H, $n - 23 * $H - $H / 4),
		('activity', 'weather', $n - 20 * $H - $H / 4, $n - 18 * $H - 3 * $H / 4),
		('activity', 'weather', $n - 3 * $H / 4, NULL)"
}

@test "status on a terminal: each dependency's last day in cells, how far behind it is" {
	two_deps
	weather_episodes
	run tty_status
	assert_success
	assert_line "  weather          up    2023-01-01T10:00:00Z     1h        20m"
	assert_line "    █▄$(cells 5 ▁)▄██▄$(cells 35 ▁)▄█  20m behind"
	assert_line "    $(cells 48 ▁)  20m behind"
	assert_line "    24h ago                 12h ago              now"
	# each timeline right under its dependency, the axis once after them
	[ "${lines[6]}" = "    $(cells 48 ▁)  20m behind" ]
	[ "${lines[8]}" = "    █▄$(cells 5 ▁)▄██▄$(cells 35 ▁)▄█  20m behind" ]
	[ "${#lines[@]}" = 10 ]
}

@test "status on a terminal: --json and a pipe get what they got before, byte for byte" {
	two_deps
	weather_episodes
	ss-checkpoint "$T/st.db" status activity >"$T/piped"
	ss-checkpoint "$T/st.db" status activity --json >"$T/json"
	on_tty "ss-checkpoint '$T/st.db' status activity --json" | tr -d '\r' >"$T/json-tty"
	cmp "$T/json" "$T/json-tty"
	jq -e '.dependencies | map(.dependency) == ["news", "weather"]' "$T/json"
	[ "$(grep -c '▁\|24h ago' "$T/piped")" = 0 ]
	# the terminal's table is the pipe's with the timelines added
	tty_status | grep -v '▁\|24h ago' | cmp - "$T/piped"
	[ "$(tty_status | grep -c '▁')" = 2 ]
}

@test "status on a narrow terminal: fewer, longer cells, never wider than it" {
	two_deps
	weather_episodes
	# 1h cells: the edge episode leaves 45m of the first hour, the open one 45m of the last
	run tty_status 45
	assert_line "    ▄▁▁▄█▄$(cells 17 ▁)▄  20m behind"
	assert_line "    24h ago     12h ago  now"
	# 2h cells, the note still fits in 30 columns; in 20 it is left out
	run tty_status 30
	assert_line "    ▄▄▄$(cells 8 ▁)▄  20m behind"
	assert_line "    24h ago  now"
	run tty_status 20
	assert_line "    ▄▄▄$(cells 8 ▁)▄"
	for w in 80 45 30 20 16 15; do
		[ "$(tty_status "$w" | grep '▁\|24h ago' | python3 -c 'import sys
print(max([len(l.rstrip("\n")) for l in sys.stdin.buffer.read().decode().splitlines(True)] + [0]))')" -le "$w" ]
	done
	# too narrow for even 12 cells: the table alone
	[ "$(tty_status 15 | grep -c '▁')" = 0 ]
}

@test "status on a terminal: a downtime pulse detects runs to the right edge, its end is kept" {
	wth 10:00 | hb activity weather >/dev/null
	pulse_bg --dependency weather --threshold 1h
	envl 0 11:30 a >&8
	wait_until has_events downtime 1
	[ "$(q "SELECT dependency, ended IS NULL FROM ss_checkpoint_episode")" = "weather|1" ]
	run tty_status
	assert_line "    $(cells 47 ▁)▄  1h30m behind"
	# one that ended more than a day ago goes at the next recovery
	q "INSERT INTO ss_checkpoint_episode VALUES('activity', 'weather', $(now_ns) - 30 * $H, $(now_ns) - 26 * $H)"
	wth 11:31 | hb activity weather >/dev/null
	wait_until has_events recovery 1
	finish_pulse
	[ "$(q "SELECT count(*), min(ended >= began) FROM ss_checkpoint_episode")" = "1|1" ]
	run tty_status
	assert_line "    $(cells 47 ▁)▄  not behind"
}

@test "status on a terminal: a file from before the episodes table shows the episode in progress" {
	two_deps
	local n
	n=$(now_ns)
	q "DROP TABLE IF EXISTS ss_checkpoint_episode;
	   UPDATE ss_checkpoint SET down_marker = marker, episode_start = $n - 3 * $H / 4;
	   UPDATE ss_checkpoint_dependency SET down = 1 WHERE name = 'weather'"
	run tty_status
	assert_line "    $(cells 46 ▁)▄█  20m behind"
	assert_line "    $(cells 48 ▁)  20m behind"
	# the next pulse, started paused, records it; the heartbeat past it ends it
	wth 11:00 | hb activity weather >/dev/null
	: | timeout 20 ss-checkpoint "$T/st.db" pulse activity --dependency weather=1h \
		--dependency news=1h --events "$T/events" >/dev/null
	[ "$(q "SELECT dependency, began = $n - 3 * $H / 4, ended > began FROM ss_checkpoint_episode")" = "weather|1|1" ]
}

# stopped_cleanly SIG PID: PID exited, not died, with 128+SIG; the heartbeat $DOWN reading
# its output was told so (its stderr is $T/err2) and ended
stopped_cleanly() {
	local st=0
	wait_until not_running "$2"
	wait "$2" || st=$?
	assert_equal "$st" $((128 + $(kill -l "$1")))
	wait_until not_running "$DOWN"
	grep -q "its writer failed (exit $st)" "$T/err2"
}

# downstream: a heartbeat reading the fifo $T/mid into $T/out; sets DOWN
downstream() {
	hb activity downstream <"$T/mid" >"$T/out" 2>"$T/err2" &
	DOWN=$!
}

@test "heartbeat: SIGINT or SIGTERM stops it between records, commits and tells its reader, 128+N" {
	for sig in INT TERM; do
		# (the last round's output gone: else its 2 lines let the signal come before
		# this round's heartbeat has started, which then dies of it and tells nothing)
		rm -f "$T"/st.db* "$T/in" "$T/mid" "$T/out"
		mkfifo "$T/in" "$T/mid"
		ss-checkpoint "$T/st.db" heartbeat activity weather <"$T/in" >"$T/mid" 2>"$T/err" &
		pid=$!
		downstream
		exec 8>"$T/in"
		{ wth 10:00; wth 11:00; } >&8
		wait_until lines "$T/out" 2
		kill -"$sig" "$pid"
		stopped_cleanly "$sig" "$pid"
		exec 8>&-
		run ss-checkpoint "$T/st.db" status activity --json
		[ "$(jq -r '.dependencies[] | select(.dependency == "weather") | .marker' <<<"$output")" = "2023-01-01T11:00:00Z" ]
	done
}

@test "pulse: SIGINT or SIGTERM stops it, paused too, commits and tells its reader, 128+N" {
	for sig in INT TERM; do
		rm -f "$T"/st.db* "$T/in" "$T/mid" "$T/events" "$T/out"
		{ wth 10:00; wth 11:00; } | hb activity weather >/dev/null
		mkfifo "$T/in" "$T/mid"
		ss-checkpoint "$T/st.db" pulse activity --ts .value.timestamp --events "$T/events" \
			--dependency weather --threshold 1h <"$T/in" >"$T/mid" 2>"$T/err" &
		PULSE=$!
		downstream
		exec 8>"$T/in"
		envl 0 10:30 swimming >&8
		envl 1 12:30 shopping >&8
		envl 2 13:10 lunch >&8
		wait_until has_events downtime 1
		wait_until lines "$T/out" 2
		kill -"$sig" "$PULSE"
		stopped_cleanly "$sig" "$PULSE"
		exec 8>&-
		PULSE=
		[ "$(jq -r .value.value "$T/out" | paste -sd' ')" = "swimming shopping" ]
	done
}
