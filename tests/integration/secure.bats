#!/usr/bin/env bats
# ss against a secured Kafka 4 broker (scripts/kafka-up --secure): TLS with a CA made on
# the fly, SASL/PLAIN and SASL/SCRAM-SHA-512 users, StandardAuthorizer ACLs. Credentials
# reach the tools through files ($SS_CONFIG, -F), never the command line.
#
# SCRAM: librdkafka before 2.6.1 cannot log in to Kafka 4 with SCRAM (a client-final nonce
# bug that Kafka 4's strict check rejects; librdkafka#4895). Debian 12 ships 2.0.2, so the
# happy paths log in with PLAIN over TLS, and the SCRAM test checks what the installed
# librdkafka can do: a consume with a new enough one, else exit 77 with the version hint.
# SCRAM's happy path on librdkafka 2.0.2 is secure-scram.bats, on a Kafka 3.9 broker.
load helpers
load secure

setup_file() {
	kafka_setup_file_secure
	# the jars kafka-up used, for grant and kafka-topic once setup() has moved $HOME
	KAFKA_LIB=$("$SS_SCRIPTS/kafka-fetch")
	SS_KAFKA_HOME=${KAFKA_LIB%/lib}
	export KAFKA_LIB SS_KAFKA_HOME
}
teardown_file() { kafka_teardown_file; }
setup() { secure_setup; }

# grant ARG...: add ACLs as admin with Kafka's own kafka-acls (AclCommand, from the cached
# jars), e.g. grant --allow-principal User:bob --consumer --topic T --group G
grant() {
	java -Xmx256m -XX:TieredStopAtLevel=1 -cp "$KAFKA_LIB/*" org.apache.kafka.tools.AclCommand \
		--bootstrap-server "$BROKERS" --command-config "$SECURE/admin.properties" --add "$@" \
		</dev/null >"$T/grant.out" 2>&1 || { cat "$T/grant.out" >&2; return 1; }
}

@test "secure: kafka-up --secure serves SASL_SSL only, and its client files are private" {
	[[ $BROKERS == 127.0.0.1:* ]]
	grep -q '^listeners=SASL_SSL://127.0.0.1:' "$SECURE/server.properties"
	grep -q '^authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer' "$SECURE/server.properties"
	for u in admin alice bob carol; do
		[ "$(stat -c %a "$SECURE/$u.conf")" = 600 ]
	done
	# a client speaking plaintext gets nowhere
	run ss-consume -b "$BROKERS" --timeout 3s -e anything
	[ "$status" -ne 0 ]
	# librdkafka here was built with TLS and SCRAM
	kcat -V | grep -q 'builtin.features=.*ssl.*sasl_scram'
}

@test "secure: ss-produce and ss-consume over TLS + SASL with \$SS_CONFIG (nothing secret on the command line)" {
	topic=$(kafka_topic_name)
	echo '{"n":0}' | put "$topic"   # creates it (ss-produce never creates a topic)
	printf '{"n":%d}\n' 1 2 3 >"$T/in"
	SS_CONFIG=$SECURE/carol.conf run ss-produce "$topic" <"$T/in"
	assert_success
	refute_output --partial warning
	SS_CONFIG=$SECURE/carol.conf run ss-consume -e "$topic"
	assert_success
	[ "${#lines[@]}" -eq 4 ]
	echo "$output" | jq -s -e 'map(.value.n) == [0,1,2,3]'
	# the default file, ~/.config/ss/kafka.conf, does the same
	mkdir -p "$HOME/.config/ss"
	cp "$SECURE/carol.conf" "$HOME/.config/ss/kafka.conf"
	run ss-consume -e -o -1 "$topic"
	assert_success
	assert_output --partial '"value":{"n":3}'
}

@test "secure: a consumer group (-G) over TLS + SASL commits and resumes" {
	group_commits_and_resumes "$SECURE/carol.conf"
}

@test "secure: the headline join, ss-asof <(ss-consume ...) <(ss-consume ...), over TLS + SASL" {
	headline_join "$SECURE/carol.conf"
}

@test "secure: SCRAM-SHA-512 logs in, or says why it cannot (librdkafka before 2.6.1), exit 77" {
	topic=$(kafka_topic_name)
	echo '{"n":1}' | put "$topic"
	run ss-consume -F "$SECURE/alice.conf" --timeout 20s -e "$topic"
	if [ "$status" -eq 0 ]; then
		assert_output --partial '"value":{"n":1}'
	else
		[ "$status" -eq 77 ]
		[ "${#lines[@]}" -eq 1 ]
		assert_output --partial "ss-consume: not permitted: sasl_ssl://$BROKERS/bootstrap: SASL authentication error"
		assert_output --partial "Kafka 4 brokers need librdkafka 2.6.1 or later for SCRAM, this is"
	fi
}

@test "secure: a wrong password is one line and exit 77, at once" {
	wrong_password_refused "$SECURE/carol.conf" "Authentication failed: Invalid username or password"
}

@test "secure: a broker certificate from a CA not trusted is one line and exit 77" {
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/other.key" -out "$T/other.pem" \
		-days 1 -subj "/CN=not the broker's CA" 2>/dev/null
	run ss-consume -F "$SECURE/carol.conf" -X "ssl.ca.location=$T/other.pem" -e anything
	[ "$status" -eq 77 ]
	[ "${#lines[@]}" -eq 1 ]
	# librdkafka words it "SSL handshake failed: ... certificate verify failed: ... verify
	# that ssl.ca.location is correctly configured ..." or, from another of its paths,
	# "... certificate verify failed (after N ms in state SSL_HANDSHAKE)", where the
	# hint names ssl.ca.location
	assert_output --partial "ss-consume: not permitted: sasl_ssl://$BROKERS/bootstrap: "
	assert_output --partial "certificate verify failed"
	assert_output --partial "ssl.ca.location"
}

@test "secure: a user without ACLs is refused in one line, exit 77 (consume, -G, produce)" {
	topic=$(kafka_topic_name)
	echo '{"n":1}' | put "$topic"
	run ss-consume -F "$SECURE/bob.conf" -e "$topic"
	[ "$status" -eq 77 ]
	[ "${#lines[@]}" -eq 1 ]
	assert_output "ss-consume: topic $topic: Broker: Topic authorization failed"
	run ss-consume -F "$SECURE/bob.conf" -G "g-$topic" -e "$topic"
	[ "$status" -eq 77 ]
	assert_output --partial "authorization failed"
	echo '{"n":2}' >"$T/in"
	SS_CONFIG=$SECURE/bob.conf run ss-produce "$topic" <"$T/in"
	[ "$status" -eq 77 ]
	assert_output "ss-produce: topic $topic: Broker: Topic authorization failed"
}

@test "secure: per-topic ACLs: a user allowed topic X reads it (plain and -G) and writes it" {
	x=$(kafka_topic_name x)
	echo '{"n":1}' | put "$x"
	# bob: read, write and describe X, read group g-X; nothing else (no group for a plain read)
	grant --allow-principal User:bob --consumer --producer --topic "$x" --group "g-$x"
	run ss-consume -F "$SECURE/bob.conf" -e "$x"
	assert_success
	assert_output --partial '"value":{"n":1}'
	[ "${#lines[@]}" -eq 1 ]
	echo '{"n":2}' >"$T/in"
	SS_CONFIG=$SECURE/bob.conf run ss-produce "$x" <"$T/in"
	assert_success
	assert_output ''
	run ss-consume -F "$SECURE/bob.conf" -G "g-$x" -e "$x"
	assert_success
	[ "$(echo "$output" | jq -s -c 'map(.value.n)')" = '[1,2]' ]
	# the group committed: a second run starts after what the first read
	run ss-consume -F "$SECURE/bob.conf" -G "g-$x" -e "$x"
	assert_success
	assert_output ''
}

@test "secure: per-topic ACLs: on a topic Y it may not use, consume, -G and produce say so in one line naming Y, exit 77, at once" {
	x=$(kafka_topic_name x) y=$(kafka_topic_name y)
	echo '{"n":1}' | put "$x"
	echo '{"n":1}' | put "$y"
	grant --allow-principal User:bob --consumer --producer --topic "$x" --group "g-$x"
	SECONDS=0
	run ss-consume -F "$SECURE/bob.conf" -e "$y"
	[ "$status" -eq 77 ]
	assert_output "ss-consume: topic $y: Broker: Topic authorization failed"
	run ss-consume -F "$SECURE/bob.conf" -G "g-$x" -e "$y"
	[ "$status" -eq 77 ]
	assert_output "ss-consume: topic $y: Broker: Topic authorization failed"
	# without -e a group waits for a topic that does not exist yet, but not for an ACL
	run ss-consume -F "$SECURE/bob.conf" -G "g-$x" "$y"
	[ "$status" -eq 77 ]
	[ "${#lines[@]}" -eq 1 ]
	assert_output --partial "ss-consume: not permitted: $y: "
	assert_output --partial "Topic authorization failed"
	printf '{"n":%d}\n' 1 2 3 >"$T/in"
	SS_CONFIG=$SECURE/bob.conf run ss-produce "$y" <"$T/in"
	[ "$status" -eq 77 ]
	assert_output "ss-produce: topic $y: Broker: Topic authorization failed"
	[ "$SECONDS" -lt 15 ]   # four refusals, none of them the 30 s --timeout
	# nothing reached Y
	run ss-consume -F "$SECURE/carol.conf" -e "$y"
	assert_success
	[ "${#lines[@]}" -eq 1 ]
}

@test "secure: a user that may read topic Y but not write it: ss-produce says so once, naming Y, exit 77" {
	y=$(kafka_topic_name y)
	echo '{"n":0}' | put "$y"
	grant --allow-principal User:bob --operation Read --operation Describe --topic "$y"
	printf '{"n":%d}\n' 1 2 3 >"$T/in"
	SECONDS=0
	SS_CONFIG=$SECURE/bob.conf run ss-produce "$y" <"$T/in"
	[ "$status" -eq 77 ]
	assert_output "ss-produce: <stdin>:1: not permitted: topic $y: Broker: Topic authorization failed"
	[ "$SECONDS" -lt 15 ]
	run ss-consume -F "$SECURE/bob.conf" -e "$y"
	assert_success
	[ "${#lines[@]}" -eq 1 ]
}

@test "secure: read on the topic but no access to the group: -G exits 77 in one line naming the group, a plain read works" {
	x=$(kafka_topic_name x)
	echo '{"n":1}' | put "$x"
	grant --allow-principal User:bob --operation Read --operation Describe --topic "$x"
	SECONDS=0
	run ss-consume -F "$SECURE/bob.conf" -G "g-$x" -e "$x"
	[ "$status" -eq 77 ]
	[ "${#lines[@]}" -eq 1 ]
	assert_output --partial "ss-consume: not permitted: group g-$x: "
	assert_output --partial "Group authorization failed"
	run ss-consume -F "$SECURE/bob.conf" -G "g-$x" "$x"
	[ "$status" -eq 77 ]
	[ "${#lines[@]}" -eq 1 ]
	assert_output --partial "ss-consume: not permitted: group g-$x: "
	[ "$SECONDS" -lt 15 ]
	# without -G no group is joined, so none needs an ACL
	run ss-consume -F "$SECURE/bob.conf" -e "$x"
	assert_success
	assert_output --partial '"value":{"n":1}'
	[ "${#lines[@]}" -eq 1 ]
}

@test "secure: kafka-topic -F FILE creates a topic on the secure broker, as the user in FILE" {
	[ "$(stat -c %a "$SECURE/admin.properties")" = 600 ]
	t=$(kafka_topic_name)
	# without credentials it cannot even ask for metadata
	run "$SS_SCRIPTS/kafka-topic" "$BROKERS" "$t" 3
	assert_failure 75
	run "$SS_SCRIPTS/kafka-topic" -F "$SECURE/admin.conf" "$BROKERS" "$t" 3 --config cleanup.policy=compact
	assert_success
	md=$(kcat -F "$SECURE/carol.conf" -L -J -t "$t" 2>/dev/null)
	[ "$(jq --arg t "$t" '.topics[] | select(.topic == $t) | .partitions | length' <<<"$md")" = 3 ]
	# again: it exists with that count, success; another count fails
	run "$SS_SCRIPTS/kafka-topic" -F "$SECURE/admin.conf" "$BROKERS" "$t" 3
	assert_success
	run "$SS_SCRIPTS/kafka-topic" -F "$SECURE/admin.conf" "$BROKERS" "$t" 2
	assert_failure 1
	assert_output --partial "already exists with 3 partitions, not 2"
	# the test helper passes admin.conf for this file's broker
	kafka_create_topic "$t-2" 2
	# bob may not create topics: TopicCommand's refusal, exit 1
	run "$SS_SCRIPTS/kafka-topic" -F "$SECURE/bob.conf" "$BROKERS" "$t-bob" 1
	assert_failure 1
	assert_output --partial "Authorization failed"
	assert_output --partial "kafka-topic: creating topic '$t-bob' on $BROKERS failed"
}
