#!/usr/bin/env bats
# Avro with a real schema registry: Apicurio Registry (scripts/registry-up, its
# Confluent-compatible API) and a real Apache Kafka broker (scripts/kafka-up). The other
# side is independent of ss: fastavro (scripts/test-venv) writes and reads the Avro, the
# wire format (a zero byte, the schema id as 4 big-endian bytes, the Avro) is written and
# read by the test, schemas are registered and fetched with curl, and kcat moves the bytes.
load helpers

setup_file() {
	"$SS_ROOT/scripts/test-venv" >&2
	kafka_setup_file
	registry_start
	local d=$KAFKA_TMP
	# the records of tests/avro.bats (every Avro type)
	cp "$SS_ROOT/tests/avro-weather.avsc" "$d/w.avsc"
	cp "$SS_ROOT/tests/avro-weather.ndjson" "$d/w.ndjson"
}
teardown_file() { kafka_teardown_file; }
setup() {
	T=$(mktemp -d "$KAFKA_TMP/t.XXXXXX")
	PY=$SS_ROOT/build/test-venv/bin/python
	AW=$SS_ROOT/tests/avro-write.py
	CT='Content-Type: application/vnd.schemaregistry.v1+json'
}

# register SUBJECT SCHEMA-FILE: register it with the registry's REST API, print its id
register() {
	jq -n --rawfile s "$2" '{schema: $s}' |
		curl -sf -X POST -H "$CT" --data-binary @- "$REGISTRY/subjects/$1/versions" | jq -e .id
}

# schema_by_id ID: the schema text the registry holds under ID
schema_by_id() { curl -sf "$REGISTRY/schemas/ids/$1" | jq -r .schema; }

# raw_values TOPIC: every message value of TOPIC (kcat, length-prefixed) as one
# {"base64": ...} line each, the form tests/avro-write.py --read takes
raw_values() {
	kcat -C -b "$BROKERS" -t "$1" -o beginning -e -q -f '%R%s' | "$PY" -c '
import base64, json, struct, sys
b = sys.stdin.buffer.read()
while b:
    n = struct.unpack(">i", b[:4])[0]
    print(json.dumps({"base64": base64.b64encode(b[4:4 + n]).decode()}))
    b = b[4 + n:]'
}

# running PID: the process exists and is not a zombie (this machine's init may leave a
# stopped JVM unreaped, and kill -0 succeeds on a zombie)
running() {
	local st
	st=$(sed -n 's/^[0-9]* (.*) \([A-Za-z]\) .*/\1/p' "/proc/$1/stat" 2>/dev/null)
	[[ -n $st && $st != Z ]]
}

# the value of each line of ss-consume's output, as its exact text
values() { sed 's/.*,"value":\(.*\),"headers":{}}$/\1/'; }

@test "registry-up: a real registry answers the Confluent API; a second registry-up reuses it" {
	run curl -sf "$REGISTRY/subjects"
	assert_success
	[[ $output == \[*\] ]]
	run "$SS_SCRIPTS/registry-up" "$KAFKA_TMP/registry"
	assert_success
	assert_output "REGISTRY=$REGISTRY"
	run curl -s "$REGISTRY/schemas/ids/987654"
	echo "$output" | jq -e '.error_code == 40403'
	# the build step scripts/registry-build supplies (config-index-deployment) found the
	# registry's run-time settings
	curl -sf "${REGISTRY%/apis/ccompat/v7}/apis/registry/v2/admin/config/properties" |
		jq -e 'map(.name) | index("registry.ccompat.legacy-id-mode.enabled") != null'
}

@test "fastavro's records in the wire format, schema registered by the test, read by ss-consume --schema-registry" {
	t=$(kafka_topic_name)
	kafka_create_topic "$t" 1
	id=$(register "$t-value" "$KAFKA_TMP/w.avsc")
	[[ $id =~ ^[0-9]+$ ]]
	# each record one file, one message (kcat -P FILE...)
	"$PY" "$AW" "$KAFKA_TMP/w.avsc" "$id" <"$KAFKA_TMP/w.ndjson" | jq -r .base64 >"$T/b64"
	i=0
	while read -r b; do
		printf '%s' "$b" | base64 -d >"$T/rec.$i"
		i=$((i + 1))
	done <"$T/b64"
	kcat -P -b "$BROKERS" -t "$t" -X acks=all "$T/rec.0" "$T/rec.1"
	run ss-consume -b "$BROKERS" -e --value-format avro --schema-registry "$REGISTRY" "$t"
	assert_success
	echo "$output" | values >"$T/values"
	diff "$KAFKA_TMP/w.ndjson" "$T/values"
	# a trailing slash on the URL is the same registry
	run ss-consume -b "$BROKERS" -e --value-format avro --schema-registry "$REGISTRY/" "$t"
	assert_success
	[ "${#lines[@]}" -eq 2 ]
}

@test "ss-produce --schema-registry registers TOPIC-value; fastavro reads the records with the schema fetched by id" {
	t=$(kafka_topic_name)
	kafka_create_topic "$t" 1
	ss-produce -b "$BROKERS" --value-format avro --value-schema "$KAFKA_TMP/w.avsc" \
		--schema-registry "$REGISTRY" "$t" <"$KAFKA_TMP/w.ndjson"
	run curl -sf "$REGISTRY/subjects/$t-value/versions/latest"
	assert_success
	id=$(echo "$output" | jq -e .id)
	echo "$output" | jq -e --arg s "$t-value" '.subject == $s and .version == 1'
	# the registry holds the same schema (as Avro parses it)
	schema_by_id "$id" >"$T/fetched.avsc"
	"$PY" -c 'import fastavro, json, sys
a, b = (fastavro.parse_schema(json.load(open(f))) for f in sys.argv[1:])
assert a == b, (a, b)' "$T/fetched.avsc" "$KAFKA_TMP/w.avsc"
	# both messages carry that id, and fastavro reads them as the records given
	raw_values "$t" | "$PY" "$AW" --read "$T/fetched.avsc" >"$T/fa"
	run cut -d' ' -f1-2 "$T/fa"
	assert_output "$(printf 'id %s\nid %s' "$id" "$id")"
	cut -d' ' -f3- "$T/fa" >"$T/fa.json"
	"$PY" "$AW" "$KAFKA_TMP/w.avsc" <"$KAFKA_TMP/w.ndjson" | "$PY" "$AW" --read "$KAFKA_TMP/w.avsc" >"$T/want"
	diff "$T/want" "$T/fa.json"
	# a second run with the same schema gets the same id, no new version
	head -1 "$KAFKA_TMP/w.ndjson" | ss-produce -b "$BROKERS" --value-format avro \
		--value-schema "$KAFKA_TMP/w.avsc" --schema-registry "$REGISTRY" "$t"
	run curl -sf "$REGISTRY/subjects/$t-value/versions"
	assert_output "[1]"
	raw_values "$t" | "$PY" "$AW" --read "$T/fetched.avsc" | cut -d' ' -f2 | sort -u >"$T/ids"
	[ "$(cat "$T/ids")" = "$id" ]
}

@test "ss-produce without a schema file takes the subject's latest version; keys under TOPIC-key" {
	t=$(kafka_topic_name)
	kafka_create_topic "$t" 1
	echo '"string"' >"$T/k.avsc"
	kid=$(register "$t-key" "$T/k.avsc")
	vid=$(register "$t-value" "$KAFKA_TMP/w.avsc")
	head -1 "$KAFKA_TMP/w.ndjson" | jq -c '{key: "k1", value: .}' |
		ss-produce -b "$BROKERS" --envelope --key-format avro --value-format avro \
			--schema-registry "$REGISTRY" "$t"
	run ss-consume -b "$BROKERS" -e --key-format avro --value-format avro --schema-registry "$REGISTRY" "$t"
	assert_success
	echo "$output" | jq -e '.key == "k1" and .value.station == "s1"'
	# the bytes: the key is the wire format with the key schema's id, then the Avro string
	kcat -C -b "$BROKERS" -t "$t" -e -q -f '%k' | od -An -tx1 | tr -s ' \n' ' ' >"$T/key"
	[ "$(cat "$T/key")" = " $(printf '00 %02x %02x %02x %02x 04 6b 31' \
		$((kid >> 24 & 255)) $((kid >> 16 & 255)) $((kid >> 8 & 255)) $((kid & 255))) " ]
	raw_values "$t" | "$PY" "$AW" --read "$KAFKA_TMP/w.avsc" | cut -d' ' -f2 >"$T/vid"
	[ "$(cat "$T/vid")" = "$vid" ]
	# a subject the registry does not have: its own 404 message
	run ss-produce -b "$BROKERS" --value-format avro --schema-registry "$REGISTRY" "$t-nosuch" </dev/null
	assert_failure 1
	assert_output --partial "subject $t-nosuch-value: HTTP 404"
}

@test "two versions of a subject in one topic: each record read with its own writer schema" {
	t=$(kafka_topic_name)
	kafka_create_topic "$t" 1
	echo '{"type":"record","name":"P","fields":[{"name":"a","type":"long"}]}' >"$T/v1.avsc"
	echo '{"type":"record","name":"P","fields":[{"name":"a","type":"long"},{"name":"b","type":"string","default":"d"}]}' >"$T/v2.avsc"
	echo '{"a":1}' | ss-produce -b "$BROKERS" --value-format avro --value-schema "$T/v1.avsc" --schema-registry "$REGISTRY" "$t"
	echo '{"a":2,"b":"x"}' | ss-produce -b "$BROKERS" --value-format avro --value-schema "$T/v2.avsc" --schema-registry "$REGISTRY" "$t"
	run curl -sf "$REGISTRY/subjects/$t-value/versions"
	assert_output "[1,2]"
	run ss-consume -b "$BROKERS" -e --value-format avro --schema-registry "$REGISTRY" "$t"
	assert_success
	assert_line --index 0 --partial '"value":{"a":1},'
	assert_line --index 1 --partial '"value":{"a":2,"b":"x"},'
	# two ids, the registry's own for each version
	raw_values "$t" | "$PY" "$AW" --read "$T/v1.avsc" | cut -d' ' -f2 >"$T/ids"
	[ "$(sort -u "$T/ids" | wc -l)" -eq 2 ]
	[ "$(sed -n 1p "$T/ids")" = "$(curl -sf "$REGISTRY/subjects/$t-value/versions/1" | jq .id)" ]
	[ "$(sed -n 2p "$T/ids")" = "$(curl -sf "$REGISTRY/subjects/$t-value/versions/2" | jq .id)" ]
}

@test "an id unknown to the real registry: exit 1 with its message; --on-error skip passes it" {
	t=$(kafka_topic_name)
	kafka_create_topic "$t" 1
	printf '\000\000\001\000\000\002' >"$T/bad"   # wire format, id 65536, Avro long 1
	kcat -P -b "$BROKERS" -t "$t" -X acks=all "$T/bad"
	run ss-consume -b "$BROKERS" -e --value-format avro --schema-registry "$REGISTRY" "$t"
	assert_failure 1
	assert_output --partial "value: schema id 65536 unknown to the registry ("
	run ss-consume -b "$BROKERS" -e --value-format avro --schema-registry "$REGISTRY" --on-error skip "$t"
	assert_success
	assert_output --partial "(skipped)"
}

@test "registry-fetch is idempotent: a second run is a no-op that prints the app dir" {
	run "$SS_SCRIPTS/registry-fetch"
	assert_success
	app=$output
	[ -f "$app/registry.jar" ] && [ -f "$app/.complete" ]
	ls "$app/lib" | grep -q '^io\.apicurio\.apicurio-registry-common-'
	# the registry's app jar is the application itself, not also a library
	run bash -c "ls '$app/lib' | grep -c apicurio-registry-app"
	assert_output 0
}

@test "registry-up and registry-down refuse bad usage" {
	run "$SS_SCRIPTS/registry-up"
	assert_failure 64
	run "$SS_SCRIPTS/registry-up" "$T/r" notaport
	assert_failure 64
	run "$SS_SCRIPTS/registry-down"
	assert_failure 64
	# a port already taken (the shared registry's)
	port=$(sed 's|^http://127.0.0.1:\([0-9]*\)/.*|\1|' "$KAFKA_TMP/registry/url")
	run "$SS_SCRIPTS/registry-up" "$T/r" "$port"
	assert_failure 75
	assert_output --partial "port $port is already in use"
}

@test "registry-down stops it (pid gone, port closed) and is idempotent; a watchdog stops one whose watched pid is gone" {
	sleep 600 &
	watched=$!
	run env SS_REGISTRY_WATCH_PID=$watched "$SS_SCRIPTS/registry-up" "$T/r"
	assert_success
	url=${output#REGISTRY=}
	pid=$(cat "$T/r/registry.pid")
	curl -sf "$url/subjects" >/dev/null
	kill "$watched"
	wait "$watched" || true   # reaped: a zombie would still answer kill -0
	for _ in $(seq 100); do running "$pid" || break; sleep 0.2; done
	run running "$pid"
	assert_failure
	grep -q 'registry-up watchdog' "$T/r/registry.log"
	# the watchdog's registry-down is done when the pid file is gone
	for _ in $(seq 100); do [ -e "$T/r/registry.pid" ] || break; sleep 0.1; done
	[ ! -e "$T/r/registry.pid" ]
	run curl -sf "$url/subjects"
	assert_failure
	# up again in the same DIR, then down twice
	run "$SS_SCRIPTS/registry-up" "$T/r"
	assert_success
	url=${output#REGISTRY=}
	pid=$(cat "$T/r/registry.pid")
	run "$SS_SCRIPTS/registry-down" "$T/r"
	assert_success
	run running "$pid"
	assert_failure
	run curl -sf "$url/subjects"
	assert_failure
	[ ! -e "$T/r/registry.pid" ]
	run "$SS_SCRIPTS/registry-down" "$T/r"
	assert_success
}
