#!/usr/bin/env bats
# The seed's Checkpoint scenario on two real Apache Kafka clusters (scripts/kafka-up):
# activity on one, weather on the other, weather late by more than the threshold.
load helpers
load ../checkpoint-scenario

setup_file() {
	kafka_setup_file
	kafka_start_second
}
teardown_file() { kafka_teardown_file; }
setup() {
	for t in ss-consume ss-produce ss-asof ss-cache ss-checkpoint; do
		[ -x "$SS_ROOT/bin/$t" ] || skip "bin/$t not built"
	done
	T=$(mktemp -d "$KAFKA_TMP/t.XXXXXX")
	A=$(kafka_topic_name activity)
	W=$(kafka_topic_name weather)
	kafka_create_topic "$A" 1 "$BROKERS"
	kafka_create_topic "$W" 1 "$BROKERS2"
	PIPELINE=
}
teardown() {
	[ -n "$PIPELINE" ] && kill -- "-$PIPELINE" 2>/dev/null
	true
}

WAIT_TRIES=600
# pipeline [ss-consume options]: the issue's pipeline in $T, in its own session
pipeline() {
	cd "$T"
	setsid bash -c '
	ss-consume -b "$1" "${@:5}" "$3" --checkpoint st.db:activity |
	  ss-checkpoint st.db pulse activity --dependency weather --threshold 1h \
	    --ts .value.timestamp --events events.ndjson |
	  ss-asof - <(ss-consume -b "$2" "$4" |
	    ss-checkpoint st.db heartbeat activity weather --ts .value.timestamp) \
	    --on .value.timestamp --emit revise \
	    --select "[.left.value.value, .right.value.value, .revision]" |
	  tee -a results.ndjson | ss-cache out.db put --key ".[0]"
	' pipeline "$BROKERS" "$BROKERS2" "$A" "$W" "$@" 2>>pipeline.err &
	PIPELINE=$!
}

seed_data() {
	{ wth 10:00 🌞; wth 11:00 🌞; } | ss-produce -b "$BROKERS2" "$W"
	{ act 10:30 swimming; act 11:30 'walking home'; act 12:30 shopping; act 13:10 lunch; } |
		ss-produce -b "$BROKERS" "$A"
}
weather_catches_up() {
	{ wth 12:00 ⛅; wth 13:00 🌧; wth 14:00 🌞; } | ss-produce -b "$BROKERS2" "$W"
}

@test "seed scenario on two clusters: stale join, pause, recovery, seek back, corrected" {
	seed_data
	pipeline -G "g$RANDOM"
	wait_until has '"event":"downtime"' "$T/events.ndjson"
	wait_until has '"shopping","🌞"' "$T/results.ndjson"
	sleep 1
	hasnt lunch "$T/results.ndjson"
	weather_catches_up
	wait_until has '"event":"recovery"' "$T/events.ndjson"
	wait_until corrected
	no_request() { [ "$(sqlite3 "$T/st.db" 'select count(*) from ss_seek_request')" = 0 ]; }
	wait_until no_request
	[ "$(jq -r .event "$T/events.ndjson" | paste -sd' ')" = "downtime recovery" ]
}

@test "restart a pipeline in the middle of an episode: only the seek back corrects shopping" {
	seed_data
	pipeline --offsets-from st.db
	wait_until has '"event":"downtime"' "$T/events.ndjson"
	wait_until has '"shopping","🌞"' "$T/results.ndjson"
	kill -- "-$PIPELINE"
	wait "$PIPELINE" || true
	[ "$(ss-checkpoint "$T/st.db" status activity --json | jq -r .state)" = down ]
	pipeline --offsets-from st.db
	weather_catches_up
	wait_until has '"event":"recovery"' "$T/events.ndjson"
	wait_until corrected
	[ "$(jq -r .event "$T/events.ndjson" | paste -sd' ')" = "downtime recovery" ]
}
