#!/usr/bin/env bats
# ss over TLS + SASL/SCRAM-SHA-512 against a secured Kafka 3.9 broker (scripts/kafka-up
# --secure --kafka-version 3.9.1). Kafka 4 refuses the SCRAM login of librdkafka before
# 2.6.1 (its client-final message carries the client nonce twice, librdkafka#4895; Debian
# 12 ships 2.0.2, and secure.bats documents that), while Kafka 3.9.x accepts it: so this
# file is SCRAM's happy path on this machine's librdkafka. Credentials reach the tools
# through files ($SS_CONFIG, -F), never the command line.
#
#   SS_KAFKA_SCRAM_VERSION  the 3.x broker to run (default 3.9.1)
load helpers
load secure

setup_file() {
	SCRAM_VERSION=${SS_KAFKA_SCRAM_VERSION:-3.9.1}
	export SCRAM_VERSION
	SS_KAFKA_VERSION=$SCRAM_VERSION kafka_setup_file_secure
}
teardown_file() { kafka_teardown_file; }
setup() { secure_setup; }

@test "secure-scram: kafka-up runs the Kafka version asked for, and alice's file says SCRAM-SHA-512" {
	[ "$(cat "$SECURE/kafka.version")" = "$SCRAM_VERSION" ]
	grep -q "Kafka version: $SCRAM_VERSION" "$SECURE/kafka.log"
	grep -q '^sasl.enabled.mechanisms=SCRAM-SHA-512,PLAIN$' "$SECURE/server.properties"
	grep -qx 'sasl.mechanisms=SCRAM-SHA-512' "$SECURE/alice.conf"
	grep -qx 'security.protocol=SASL_SSL' "$SECURE/alice.conf"
	[ "$(stat -c %a "$SECURE/alice.conf")" = 600 ]
	# a restart of this DIR may not switch versions
	run "$SS_SCRIPTS/kafka-up" --kafka-version 4.4.0 "$SECURE"
	assert_failure 64
	assert_output --partial "holds a Kafka $SCRAM_VERSION broker, not 4.4.0"
	# asked again (the version it records), it names the running broker
	run "$SS_SCRIPTS/kafka-up" "$SECURE"
	assert_success
	assert_output "BROKERS=$BROKERS"
}

@test "secure-scram: ss-produce and ss-consume over TLS + SCRAM-SHA-512 with \$SS_CONFIG" {
	failed0=$(grep -c 'Failed authentication' "$SECURE/kafka.log" || true)
	topic=$(kafka_topic_name)
	echo '{"n":0}' | put "$topic"   # creates it (ss-produce never creates a topic)
	printf '{"n":%d}\n' 1 2 3 >"$T/in"
	SS_CONFIG=$SECURE/alice.conf run ss-produce "$topic" <"$T/in"
	assert_success
	assert_output ''
	SS_CONFIG=$SECURE/alice.conf run ss-consume -e "$topic"
	assert_success
	[ "${#lines[@]}" -eq 4 ]
	echo "$output" | jq -s -e 'map(.value.n) == [0,1,2,3]'
	# -F FILE does the same
	run ss-consume -F "$SECURE/alice.conf" -e -o -1 "$topic"
	assert_success
	assert_output --partial '"value":{"n":3}'
	[ "${#lines[@]}" -eq 1 ]
	# and the broker saw no failed login meanwhile
	[ "$(grep -c 'Failed authentication' "$SECURE/kafka.log" || true)" = "$failed0" ]
}

@test "secure-scram: a consumer group (-G) over TLS + SCRAM-SHA-512 commits and resumes" {
	group_commits_and_resumes "$SECURE/alice.conf"
}

@test "secure-scram: the headline join, ss-asof <(ss-consume ...) <(ss-consume ...), over SCRAM-SHA-512" {
	headline_join "$SECURE/alice.conf"
}

@test "secure-scram: a SCRAM user without ACLs logs in and is refused the topic, exit 77" {
	topic=$(kafka_topic_name)
	echo '{"n":1}' | put "$topic"
	run ss-consume -F "$SECURE/bob-scram.conf" -e "$topic"
	[ "$status" -eq 77 ]
	assert_output "ss-consume: topic $topic: Broker: Topic authorization failed"
}

@test "secure-scram: a wrong SCRAM password is one line and exit 77, at once" {
	wrong_password_refused "$SECURE/alice.conf" \
		"Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512"
	assert_output --partial "SCRAM-SHA-512"   # the producer's line names the mechanism too
}
