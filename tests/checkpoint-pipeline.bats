#!/usr/bin/env bats
# The seed's Checkpoint scenario end to end on mock Kafka clusters: ss-consume,
# ss-checkpoint pulse/heartbeat, ss-asof --emit revise, ss-cache put.
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
