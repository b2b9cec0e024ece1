#!/usr/bin/env bats
# The seed's Checkpoint scenario end to end on mock Kafka clusters: ss-consume,
# ss-checkpoint pulse/heartbeat, ss-asof --emit revise, ss-cache put.
bats_require_minimum_version 1.5.0
load helpers
load checkpoint-scenario

setup() {
	common_setup
	for t in ss-consume ss-produce ss-mock-broker ss-asof ss-cache ss-checkpoint; do
		[ -x "$ROOT/bin/$t" ] || skip "bin/$t not built"
	done
	PIDS=()
}
teardown() {
	local p
	for p in "${PIDS[@]}"; do kill -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null; done
	common_teardown
}

# mock NAME TOPIC [PARTITIONS]: a mock cluster with one topic (one partition unless
# told); sets brokers_NAME
mock() {
	mkfifo "$T/$1.ctl"
	ss-mock-broker --topic "$2:${3:-1}" <"$T/$1.ctl" >"$T/$1.out" 2>"$T/$1.err" &
	PIDS+=($!)
	eval "exec {fd}>\"\$T/\$1.ctl\""
	for _ in $(seq 50); do
		grep -q '^BROKERS=' "$T/$1.out" && break
		sleep 0.1
	done
	printf -v "brokers_$1" '%s' "$(sed -n 's/^BROKERS=//p' "$T/$1.out")"
}
# pipeline [ss-consume options]: the issue's pipeline in $T, in its own session (PIPELINE),
# the results kept in a cache (and a copy to look at)
pipeline() {
	cd "$T"
	setsid bash -c '
	ss-consume -b "$1" "${@:3}" activity --checkpoint st.db:activity |
	  ss-checkpoint st.db pulse activity --dependency weather --threshold 1h \
	    --ts .value.timestamp --events events.ndjson |
	  ss-asof - <(ss-consume -b "$2" weather |
	    ss-checkpoint st.db heartbeat activity weather --ts .value.timestamp) \
	    --on .value.timestamp --emit revise \
	    --select "[.left.value.value, .right.value.value, .revision]" |
	  tee -a results.ndjson | ss-cache out.db put --key ".[0]"
	' pipeline "$brokers_A" "$brokers_B" "$@" 2>>pipeline.err &
	PIPELINE=$!
	PIDS+=($PIPELINE)
}

@test "seed scenario: weather on another cluster runs late; pause, seek back, corrected results" {
	mock A activity
	mock B weather
	{ wth 10:00 🌞; wth 11:00 🌞; } | ss-produce -b "$brokers_B" weather
	{ act 10:30 swimming; act 11:30 'walking home'; act 12:30 shopping; act 13:10 lunch; } |
		ss-produce -b "$brokers_A" activity
	pipeline -G g
	wait_until has '"event":"downtime"' events.ndjson
	# shopping went out with the stale weather, then the activity stream paused
	wait_until has '"shopping","🌞"' results.ndjson
	run jq -c '[.dependency, .dependent_marker, .offsets]' events.ndjson
	assert_output '["weather","2023-01-01T12:30:00Z",[{"topic":"activity","partition":0,"offset":2}]]'
	sleep 1
	hasnt lunch results.ndjson
	# the weather catches up
	{ wth 12:00 ⛅; wth 13:00 🌧; wth 14:00 🌞; } | ss-produce -b "$brokers_B" weather
	wait_until has '"event":"recovery"' events.ndjson
	wait_until corrected
	# ss-consume took the seek request and re-read from shopping
	no_request() { [ "$(sqlite3 st.db 'select count(*) from ss_seek_request')" = 0 ]; }
	wait_until no_request
	wait_until has '"lunch","🌧"' results.ndjson
	[ "$(grep -c '"event"' events.ndjson)" = 2 ]
	[ "$(ss-cache out.db scan --keys | paste -sd' ')" = '"lunch" "shopping" "swimming" "walking home"' ]
}

@test "ss-consume --offsets-from resumes after the last record pulse passed" {
	mock A activity
	{ act 10:00 a; act 10:01 b; act 10:02 c; } | ss-produce -b "$brokers_A" activity
	wth 12:00 🌞 | ss-checkpoint "$T/st.db" heartbeat activity weather >/dev/null
	ss-consume -e -b "$brokers_A" activity |
		ss-checkpoint "$T/st.db" pulse activity --dependency weather --ts .value.timestamp >"$T/out"
	[ "$(jq -r .offset "$T/out" | paste -sd' ')" = "0 1 2" ]
	{ act 10:03 d; act 10:04 e; } | ss-produce -b "$brokers_A" activity
	ss-consume -e -b "$brokers_A" --offsets-from "$T/st.db" activity |
		ss-checkpoint "$T/st.db" pulse activity --dependency weather --ts .value.timestamp >"$T/out"
	[ "$(jq -r '"\(.offset) \(.value.value)"' "$T/out" | paste -sd' ')" = "3 d 4 e" ]
}

@test "restart in the middle of an episode: the new pipeline stays paused, then seeks back" {
	mock A activity
	mock B weather
	{ wth 10:00 🌞; wth 11:00 🌞; } | ss-produce -b "$brokers_B" weather
	{ act 10:30 swimming; act 11:30 'walking home'; act 12:30 shopping; act 13:10 lunch; } |
		ss-produce -b "$brokers_A" activity
	pipeline --offsets-from st.db
	wait_until has '"event":"downtime"' events.ndjson
	wait_until has '"shopping","🌞"' results.ndjson
	kill -- "-$PIPELINE"
	wait "$PIPELINE" || true
	[ "$(ss-checkpoint st.db status activity --json | jq -r .state)" = down ]
	[ "$(weather_of shopping)" = "🌞" ]
	# the new pipeline resumes after shopping, and waits
	pipeline --offsets-from st.db
	sleep 1
	hasnt lunch results.ndjson
	{ wth 12:00 ⛅; wth 13:00 🌧; wth 14:00 🌞; } | ss-produce -b "$brokers_B" weather
	wait_until has '"event":"recovery"' events.ndjson
	# only the seek back brings shopping to the new pipeline, and corrects it
	wait_until corrected
	[ "$(jq -r .event events.ndjson | paste -sd' ')" = "downtime recovery" ]
}

@test "a weather partition that lags holds the dependency back; it catching up ends the downtime" {
	mock A activity
	mock B weather 4
	for p in 0 1 2; do { wth 10:00 🌞; wth 13:00 🌞; } | ss-produce -b "$brokers_B" --partition "$p" weather; done
	wth 10:00 🌞 | ss-produce -b "$brokers_B" --partition 3 weather
	pipeline -G g
	# the heartbeat has read every weather partition before the activity comes
	weather_read() {
		[ "$(ss-checkpoint st.db status activity --json 2>/dev/null | jq '.dependencies[0].partitions | length')" = 4 ]
	}
	wait_until weather_read
	[ "$(ss-checkpoint st.db status activity --json | jq -r '.dependencies[0].marker')" = 2023-01-01T10:00:00Z ]
	{ act 10:30 swimming; act 11:30 'walking home'; act 12:30 shopping; } | ss-produce -b "$brokers_A" activity
	wait_until has '"event":"downtime"' events.ndjson
	run jq -c '[.dependency, .dependent_marker, .dependency_marker]' events.ndjson
	assert_output '["weather","2023-01-01T11:30:00Z","2023-01-01T10:00:00Z"]'
	sleep 1
	hasnt shopping results.ndjson
	{ wth 12:00 ⛅; wth 13:00 🌧; } | ss-produce -b "$brokers_B" --partition 3 weather
	wait_until has '"event":"recovery"' events.ndjson
	wait_until has '"shopping"' results.ndjson
	[ "$(jq -c 'select(.event == "recovery") | .seek' events.ndjson)" = '[{"topic":"activity","partition":0,"offset":1}]' ]
}

# bg CMD: CMD in $T, in its own session (killed whole at teardown); sets BG
bg() {
	setsid bash -c "cd '$T' && $1" &
	BG=$!
	PIDS+=($BG)
}
status_json() { ss-checkpoint "$T/st.db" status activity --json; }
lines() { [ "$(wc -l <"$1" 2>/dev/null)" = "$2" ]; }

@test "a 4-partition weather backlog read partition after partition: the weather is no fresher than its slowest partition" {
	mock A activity
	mock B weather 4
	# the activity runs ahead of a weather never heard from (it counts from 10:00): paused
	{ act 10:00 swimming; act 12:30 shopping; } | ss-produce -b "$brokers_A" activity
	bg "ss-consume -b $brokers_A activity | ss-checkpoint st.db pulse activity --dependency weather=1h \
		--ts .value.timestamp --events events.ndjson >out 2>pulse.err"
	wait_until has '"event":"downtime"' "$T/events.ndjson"
	# the weather comes: partition 0's backlog up to 14:00; 1-3 have delivered nothing yet
	for t in 10:00 11:00 12:00 13:00 14:00; do wth "$t" 🌞; done | ss-produce -b "$brokers_B" --partition 0 weather
	bg "ss-consume -b $brokers_B weather | ss-checkpoint st.db heartbeat activity weather \
		--ts .value.timestamp --idle 1h >/dev/null 2>heartbeat.err"
	p0_read() { [ "$(status_json | jq -r '.dependencies[0].partitions[0].marker')" = 2023-01-01T14:00:00Z ]; }
	wait_until p0_read
	sleep 1
	hasnt '"event":"recovery"' "$T/events.ndjson"
	[ "$(status_json | jq -c '.dependencies[0] | [.marker, .waiting, .state]')" = '[null,3,"down"]' ]
	# they come, one still behind the pause
	wth 12:00 ⛅ | ss-produce -b "$brokers_B" --partition 1 weather
	wth 13:00 🌧 | ss-produce -b "$brokers_B" --partition 2 weather
	wth 12:40 🌧 | ss-produce -b "$brokers_B" --partition 3 weather
	at_1200() { [ "$(status_json | jq -r '.dependencies[0].marker')" = 2023-01-01T12:00:00Z ]; }
	wait_until at_1200
	sleep 0.5
	hasnt '"event":"recovery"' "$T/events.ndjson"
	wth 13:10 🌧 | ss-produce -b "$brokers_B" --partition 1 weather
	wait_until has '"event":"recovery"' "$T/events.ndjson"
	[ "$(jq -r 'select(.event == "recovery") | .dependencies[0].dependency_marker' "$T/events.ndjson")" = 2023-01-01T12:40:00Z ]
	wait_until lines "$T/out" 2
	hasnt 'nothing says which partitions' "$T/pulse.err" "$T/heartbeat.err"
}

@test "a 4-partition activity backlog read partition after partition raises no downtime that never happened" {
	mock A activity 4
	mock B weather
	wth 11:00 🌞 | ss-produce -b "$brokers_B" weather
	ss-consume -e -b "$brokers_B" weather | ss-checkpoint "$T/st.db" heartbeat activity weather --ts .value.timestamp >/dev/null
	# partitions 0-2 have run ahead to 13:00, partition 3 is at 10:50: the stream is at 10:50
	for p in 0 1 2; do
		{ act 10:00 "a$p"; act 11:30 "b$p"; act 12:30 "c$p"; act 13:00 "d$p"; } |
			ss-produce -b "$brokers_A" --partition "$p" activity
	done
	{ act 10:00 a3; act 10:50 b3; } | ss-produce -b "$brokers_A" --partition 3 activity
	bg "ss-consume -b $brokers_A activity | ss-checkpoint st.db pulse activity --dependency weather=1h \
		--ts .value.timestamp --events events.ndjson >out 2>pulse.err"
	wait_until lines "$T/out" 14
	at_1050() { [ "$(status_json | jq -r .marker)" = 2023-01-01T10:50:00Z ]; }
	wait_until at_1050
	sleep 1
	hasnt '"event":"downtime"' "$T/events.ndjson"
	# partition 3 passes 12:00 too: now the whole stream is late
	act 12:10 e3 | ss-produce -b "$brokers_A" --partition 3 activity
	wait_until has '"event":"downtime"' "$T/events.ndjson"
	[ "$(jq -r '[.dependent_marker, .dependency_marker] | @tsv' "$T/events.ndjson")" = \
		"$(printf '2023-01-01T12:10:00Z\t2023-01-01T11:00:00Z')" ]
	hasnt 'nothing says which partitions' "$T/pulse.err"
}

@test "heartbeat and pulse tell ss-asof what their input's writer says: its partitions, and how it ended" {
	mock B weather 4
	for s in 1 2 3 4 5 6 7 8; do
		printf '{"station":"s%d","timestamp":"2023-01-01T10:%02d:00Z","value":"w%d"}\n' "$s" "$s" "$s"
	done | ss-produce -b "$brokers_B" --key .station weather
	printf '{"value":{"station":"s%d","timestamp":"2023-01-01T11:00:00Z"}}\n' 1 2 3 4 5 6 7 8 >"$T/left"
	cd "$T"
	ss-consume -e -b "$brokers_B" weather >weather.ndjson
	ss-asof left weather.ndjson --on .value.timestamp --by .value.station >want
	# the right input is a pipe from the heartbeat: ss-asof knows its four partitions
	ss-asof left <(ss-consume -e -b "$brokers_B" weather |
		ss-checkpoint st.db heartbeat activity weather --ts .value.timestamp) \
		--on .value.timestamp --by .value.station >got 2>asof.err
	cmp want got
	hasnt 'nothing says which partitions' asof.err
	# a failed consumer is a failed right input, not an ended one
	run --separate-stderr ss-asof left <(ss-consume -e -b "$brokers_B" -p 9 weather |
		ss-checkpoint st.db heartbeat activity weather --ts .value.timestamp) --on .value.timestamp
	[ "$status" = 75 ]
	[[ "$stderr" == *"its writer failed (exit 1)"* ]]
	# and through the pulse, on the left
	run --separate-stderr bash -c "ss-consume -e -b '$brokers_B' -p 9 weather |
		ss-checkpoint st.db pulse activity --dependency weather --ts .value.timestamp |
		ss-asof - <(cat weather.ndjson) --on .value.timestamp"
	[ "$status" = 75 ]
	[[ "$stderr" == *"ss-checkpoint: <stdin>: its writer failed (exit 1)"* ]]
	[[ "$stderr" == *"ss-asof: -: its writer failed (exit 1)"* ]]
}

# readme_block HEADING: the first ```sh block after "## HEADING" in README.md
readme_block() {
	awk -v h="## $1" '$0 == h {f=1; next} f && /^```sh/ {b=1; next} b && /^```/ {exit} b' "$ROOT/README.md"
}

@test "README's downtime pipeline, as written: a replayed activity is the next revision, never a second result" {
	mock A activity
	mock B weather
	readme_block 'Downtime, pause and reprocessing' >"$T/readme.sh"
	# the brokers A and B of the README are the two mock clusters
	sed -i "s/-b A /-b $brokers_A /; s/-b B /-b $brokers_B /" "$T/readme.sh"
	{ wth 10:00 🌞; wth 11:00 🌞; } | ss-produce -b "$brokers_B" weather
	{ act 10:30 swimming; act 11:30 'walking home'; act 12:30 shopping; act 13:10 lunch; } |
		ss-produce -b "$brokers_A" activity
	cd "$T"
	setsid bash "$T/readme.sh" >results.ndjson 2>pipeline.err &
	PIPELINE=$!
	PIDS+=($PIPELINE)
	wait_until has '"shopping"' results.ndjson
	{ wth 12:00 ⛅; wth 13:00 🌧; wth 14:00 🌞; } | ss-produce -b "$brokers_B" weather
	latest_of() { jq -r --arg a "$1" 'select(.left.value.value == $a) | .right.value.value' results.ndjson | tail -1; }
	lunch_rainy() { [ "$(latest_of shopping)" = ⛅ ] && [ "$(latest_of lunch)" = 🌧 ]; }
	wait_until lunch_rainy
	sleep 1
	# every (left partition, offset, revision) once: no duplicates from the replay
	run jq -c '[.left.partition, .left.offset, .revision]' results.ndjson
	[ "$(printf '%s\n' "${lines[@]}" | sort | uniq -d)" = '' ]
	# shopping went out with the stale weather (revision 0), then corrected (revision 1)
	run jq -c 'select(.left.value.value == "shopping") | [.revision, .right.value.value]' results.ndjson
	assert_line --index 0 '[0,"🌞"]'
	assert_line --index 1 '[1,"⛅"]'
	[ "$(latest_of swimming)" = 🌞 ] && [ "$(latest_of 'walking home')" = 🌞 ]
}
