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
	test_must_fail 3 ss-checkpoint "$T/st.db" pulse activity --dependency w --ts '.a |'
	test_must_fail 3 ss-checkpoint "$T/st.db" heartbeat activity w --ts '.a |'
	[ ! -e "$T/st.db" ] # misuse leaves no state file behind
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
	jq -e 'select(.event == "downtime") | .checkpoint == "activity"' "$T/err"
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

@test "ss_checkpoint_take_seeks takes and deletes the requests of one checkpoint" {
	cat >"$T/take.c" <<-'EOF'
	#include <stdio.h>
	#include "checkpoint.h"
	static void cb(const char *t, int32_t p, int64_t o, void *a) { (void)a; printf("%s %d %lld\n", t, p, (long long)o); }
	int main(int argc, char **argv) { (void)argc; printf("n=%d\n", ss_checkpoint_take_seeks(argv[1], argv[2], cb, NULL)); return 0; }
	EOF
	local san=
	[ -e "$ROOT/build/variant.san" ] && san=-fsanitize=address,undefined # make SANITIZE=1
	cc $san -I"$ROOT/lib" -o "$T/take" "$T/take.c" "$ROOT/lib/libss.a" -lrdkafka -lsqlite3 -ljq -lm -lpthread
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
