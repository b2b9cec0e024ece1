# Shared by secure.bats (Kafka 4.4, SASL/PLAIN) and secure-scram.bats (Kafka 3.9,
# SCRAM-SHA-512): the same checks over a secured broker, as the user whose client file
# is given. Load after helpers; $SECURE is the broker's directory (kafka-up --secure).

# secure_setup: each test its own $T and $HOME (no ~/.config/ss/kafka.conf), no
# configuration from the environment
secure_setup() {
	T=$(mktemp -d "$KAFKA_TMP/t.XXXXXX")
	export HOME=$T/home
	mkdir -p "$HOME"
	unset SS_CONFIG SS_BROKERS
}

# put TOPIC: lines on stdin into TOPIC as carol (PLAIN, a super user; auto-created)
put() {
	kcat -F "$SECURE/carol.conf" -P -t "$1" -X acks=all 2>/dev/null
}

# group_commits_and_resumes CONF: a -G consumer reads two records and commits; a record
# written with ss-produce (CONF from $SS_CONFIG) is all the next run of the group reads
group_commits_and_resumes() {
	local conf=$1 topic
	topic=$(kafka_topic_name)
	printf '{"n":%d}\n' 1 2 | put "$topic"
	run ss-consume -F "$conf" -G "g-$topic" -e "$topic"
	assert_success
	[ "${#lines[@]}" -eq 2 ]
	echo '{"n":3}' >"$T/in"
	SS_CONFIG=$conf run ss-produce "$topic" <"$T/in"
	assert_success
	run ss-consume -F "$conf" -G "g-$topic" -e "$topic"
	assert_success
	[ "${#lines[@]}" -eq 1 ]
	assert_output --partial '"value":{"n":3}'
}

# headline_join CONF: ss-asof <(ss-consume ...) <(ss-consume ...) with CONF in $SS_CONFIG
headline_join() {
	local a w
	a=$(kafka_topic_name activity) w=$(kafka_topic_name weather)
	printf '%s\n' '{"t":10,"s":"a","w":"sun"}' '{"t":15,"s":"b","w":"fog"}' '{"t":20,"s":"a","w":"rain"}' | put "$w"
	printf '%s\n' '{"t":12,"s":"a","id":1}' '{"t":25,"s":"a","id":2}' '{"t":16,"s":"b","id":3}' | put "$a"
	export SS_CONFIG=$1
	run ss-asof <(ss-consume -e "$a") <(ss-consume -e "$w") --on .value.t --by .value.s \
		--select '[.left.value.id, .right.value.w]'
	assert_success
	[ "$(echo "$output" | grep '^\[' | sort)" = "$(printf '[1,"sun"]\n[2,"rain"]\n[3,"fog"]')" ]
}

# wrong_password_refused CONF REASON: CONF with a wrong password; ss-consume and
# ss-produce each say "not permitted" in one line (the consumer with REASON), exit 77,
# at once, and never echo the password
wrong_password_refused() {
	sed 's/^sasl.password=.*/sasl.password=wrong/' "$1" >"$T/wrong.conf"
	chmod 600 "$T/wrong.conf"
	SECONDS=0
	run ss-consume -F "$T/wrong.conf" -e anything
	[ "$status" -eq 77 ]
	[ "${#lines[@]}" -eq 1 ]
	assert_output --partial "ss-consume: not permitted: sasl_ssl://$BROKERS/bootstrap: SASL authentication error: $2"
	refute_output --partial wrong
	[ "$SECONDS" -lt 10 ]   # not the 30 s --timeout for an unreachable broker
	echo '{"n":1}' >"$T/in"
	SS_CONFIG=$T/wrong.conf run ss-produce anything <"$T/in"
	[ "$status" -eq 77 ]
	[ "${#lines[@]}" -eq 1 ]
	assert_output --partial "ss-produce: not permitted:"
	refute_output --partial wrong
}
