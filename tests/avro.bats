#!/usr/bin/env bats
# Avro payloads: ss-produce and ss-consume --key-format/--value-format avro on the mock
# cluster, with a schema file (plain Avro binary) or a schema registry (the wire format).
# A real Avro writer and reader, Python's fastavro (scripts/test-venv installs it), writes
# and reads the other side. The registry here is tests/registry.py, a stand-in that
# answers as the Confluent API does (see that file); tests/integration/registry.bats runs
# against a real one.
load helpers
load kafka

setup_file() {
	"$ROOT/scripts/test-venv" >&2
	mock_start --topic rt:1 --topic keyed:1 --topic fa:1 --topic wire:1 --topic reg:1 \
		--topic bad:1 --topic unk:1 --topic down:1 --topic latest:1 --topic hostile:1 --topic wkeys:1
	local dir=$BATS_FILE_TMPDIR
	# Avro's JSON encoding of two records of a schema with every type: 2^53+1, a union of
	# a named type, bytes and fixed as code points U+0000..U+00FF, NaN
	cp "$ROOT/tests/avro-weather.avsc" "$dir/w.avsc"
	cp "$ROOT/tests/avro-weather.ndjson" "$dir/w.ndjson"
	echo '"string"' >"$dir/k.avsc"
	# the registry stand-in, with the schema of w.avsc as id 1
	printf '1 %s\n' "$(jq -c . "$dir/w.avsc")" >"$dir/preload"
	python3 "$ROOT/tests/registry.py" "$dir/reg.port" "$dir/preload" </dev/null >/dev/null 2>"$dir/reg.err" 3>&- &
	echo $! >"$dir/reg.pid"
	for _ in $(seq 100); do [ -s "$dir/reg.port" ] && break; sleep 0.1; done
	[ -s "$dir/reg.port" ] || { echo "registry.py did not start: $(cat "$dir/reg.err")" >&2; return 1; }
}
teardown_file() {
	mock_stop
	kill "$(cat "$BATS_FILE_TMPDIR/reg.pid")" 2>/dev/null || true
}
setup() {
	common_setup
	D=$BATS_FILE_TMPDIR
	R=http://127.0.0.1:$(cat "$D/reg.port")
	PY=$ROOT/build/test-venv/bin/python
}

@test "round trip: ss-produce --value-schema then ss-consume --value-schema gives the same JSON" {
	ss-produce -b "$B" --value-format avro --value-schema "$D/w.avsc" rt <"$D/w.ndjson"
	run ss-consume -b "$B" -e --value-format avro --value-schema "$D/w.avsc" rt
	assert_success
	# the raw text of each value, exactly (no jq: it would round 2^53+1)
	echo "$output" | sed 's/.*,"value":\(.*\),"headers":{}}$/\1/' >"$T/values"
	diff "$D/w.ndjson" "$T/values"
	# the bytes are plain Avro binary that a real Avro reader reads (here fastavro)
	ss-consume -b "$B" -e rt | jq -c .value | "$PY" "$ROOT/tests/avro-write.py" --read "$D/w.avsc" >"$T/fa"
	run jq -r '"\(.station) \(.u["ex.Sub"].x) \(.m.a)"' "$T/fa"
	assert_line --index 0 "s1 5 1"
}

@test "keys: --key-format avro with --key-schema, in both tools" {
	echo '{"key":"k1","value":{"a":1}}' |
		ss-produce -b "$B" --envelope --key-format avro --key-schema "$D/k.avsc" keyed
	run ss-consume -b "$B" -e --key-format avro --key-schema "$D/k.avsc" keyed
	assert_success
	echo "$output" | jq -e '.key == "k1" and .value == {"a":1}'
	# the key is the Avro string: its length as a zig-zag varint (2 -> 4), then its bytes
	run ss-consume -b "$B" -e --key-format base64 keyed
	echo "$output" | jq -e '.key == {"base64":"BGsx"}'
}

@test "records written by fastavro are read by ss-consume --value-schema" {
	"$PY" "$ROOT/tests/avro-write.py" "$D/w.avsc" <"$D/w.ndjson" | ss-produce -b "$B" --value . fa
	run ss-consume -b "$B" -e --value-format avro --value-schema "$D/w.avsc" fa
	assert_success
	echo "$output" | sed 's/.*,"value":\(.*\),"headers":{}}$/\1/' >"$T/values"
	diff "$D/w.ndjson" "$T/values"
}

@test "wire format: ss-consume --schema-registry reads fastavro's records, fetching schema 1 once" {
	"$PY" "$ROOT/tests/avro-write.py" "$D/w.avsc" 1 <"$D/w.ndjson" | ss-produce -b "$B" --value . wire
	: >"$D/reg.port.log"
	run ss-consume -b "$B" -e --value-format avro --schema-registry "$R/" wire
	assert_success
	echo "$output" | sed 's/.*,"value":\(.*\),"headers":{}}$/\1/' >"$T/values"
	diff "$D/w.ndjson" "$T/values"
	run cat "$D/reg.port.log"
	assert_output "GET /schemas/ids/1"
}

@test "wire format: ss-produce --schema-registry registers TOPIC-value; fastavro reads the records" {
	: >"$D/reg.port.log"
	ss-produce -b "$B" --value-format avro --value-schema "$D/w.avsc" --schema-registry "$R" reg <"$D/w.ndjson"
	run cat "$D/reg.port.log"
	assert_output "POST /subjects/reg-value/versions"
	ss-consume -b "$B" -e reg | jq -c .value | "$PY" "$ROOT/tests/avro-write.py" --read "$D/w.avsc" >"$T/fa"
	run cut -d' ' -f1-2 "$T/fa"
	assert_output "$(printf 'id 1\nid 1')"
	run ss-consume -b "$B" -e --value-format avro --schema-registry "$R" reg
	assert_success
	echo "$output" | sed 's/.*,"value":\(.*\),"headers":{}}$/\1/' >"$T/values"
	diff "$D/w.ndjson" "$T/values"
}

@test "ss-produce --schema-registry without a schema file takes the subject's latest schema" {
	ss-produce -b "$B" --value-format avro --value-schema "$D/w.avsc" --schema-registry "$R" latest </dev/null
	head -1 "$D/w.ndjson" | ss-produce -b "$B" --value-format avro --schema-registry "$R" latest
	run ss-consume -b "$B" -e --value-format avro --schema-registry "$R" latest
	assert_success
	echo "$output" | jq -e '.value.station == "s1"'
	test_must_fail 1 ss-produce -b "$B" --value-format avro --schema-registry "$R" nosuch </dev/null
	assert_output --partial "subject nosuch-value: HTTP 404: Subject 'nosuch-value' not found."
}

@test "bad bytes: one line and exit 1; --on-error skip and dead-letter pass them" {
	printf '{"value":{"base64":"AAAA"}}\n{"value":"garbage"}\n' | ss-produce -b "$B" --envelope bad
	head -1 "$D/w.ndjson" | ss-produce -b "$B" --value-format avro --value-schema "$D/w.avsc" bad
	test_must_fail 1 ss-consume -b "$B" -e --value-format avro --value-schema "$D/w.avsc" bad
	assert_output --partial "ss-consume: bad [0] offset 0: value: not Avro of the schema: "
	[ "${#lines[@]}" -eq 1 ]
	run ss-consume -b "$B" -e --value-format avro --value-schema "$D/w.avsc" --on-error skip bad
	assert_success
	[ "$(echo "$output" | grep -c '^{')" -eq 1 ]
	echo "$output" | grep '^{' | jq -e '.offset == 2 and .value.station == "s1"'
	assert_line --partial "ss-consume: bad/0:1: value: not Avro of the schema"
	run ss-consume -b "$B" -e --value-format avro --value-schema "$D/w.avsc" --on-error "dead-letter=$T/dl" bad
	assert_success
	run jq -c '[.source, .line, .raw]' "$T/dl"
	assert_line --index 0 '["bad/0",0,"\u0000\u0000\u0000"]'
	assert_line --index 1 '["bad/0",1,"garbage"]'
}

@test "wire format errors: not the wire format, an unknown schema id (exit 1), the registry unreachable (exit 75)" {
	printf '{"base64":"AAAAAAcC"}\n{"base64":"AAAAAAcC"}\n' | ss-produce -b "$B" --value . unk
	test_must_fail 1 ss-consume -b "$B" -e --value-format avro --schema-registry "$R" unk
	assert_output "ss-consume: unk [0] offset 0: value: schema id 7 unknown to the registry (Schema 7 not found)"
	: >"$D/reg.port.log"
	run ss-consume -b "$B" -e --value-format avro --schema-registry "$R" --on-error skip unk
	assert_success
	assert_line --index 0 "ss-consume: unk/0:0: value: schema id 7 unknown to the registry (Schema 7 not found) (skipped)"
	assert_line --index 1 "ss-consume: unk/0:1: value: schema id 7 unknown to the registry (skipped)"
	# an id the registry did not know is asked for once
	run cat "$D/reg.port.log"
	assert_output "GET /schemas/ids/7"
	test_must_fail 1 ss-consume -b "$B" -e --value-format avro --schema-registry "$R" bad
	assert_output --partial "value: not in the schema registry's wire format"
	# nothing listens on port 1: exit 75 (retry later), not skippable
	printf '{"base64":"AAAAAAECBA=="}\n' | ss-produce -b "$B" --value . down
	test_must_fail 75 ss-consume -b "$B" -e --value-format avro --schema-registry http://127.0.0.1:1 --on-error skip down
	assert_output --partial "ss-consume: down [0] offset 0: schema registry http://127.0.0.1:1 unreachable:"
	[ "${#lines[@]}" -eq 1 ]
	test_must_fail 75 ss-produce -b "$B" --value-format avro --value-schema "$D/w.avsc" --schema-registry http://127.0.0.1:1 down </dev/null
	assert_output --partial "ss-produce: schema registry http://127.0.0.1:1 unreachable:"
}

@test "ss-produce: JSON that does not fit the schema is a bad record (the path named), --on-error skip passes it" {
	printf '%s\n' '{"station":1}' | test_must_fail 1 ss-produce -b "$B" --value-format avro --value-schema "$D/w.avsc" --dry-run rt
	run sh -c "echo '{\"station\":1}' | ss-produce --dry-run --value-format avro --value-schema '$D/w.avsc' rt"
	[ "$status" -eq 1 ]
	assert_output "ss-produce: <stdin>:1: value .station: expected a string"
	run sh -c "head -1 '$D/w.ndjson' | jq -c '.note = \"x\"' | ss-produce --dry-run --value-format avro --value-schema '$D/w.avsc' rt"
	assert_output --partial 'value .note: expected a union'
	run sh -c "head -1 '$D/w.ndjson' | jq -c '.extra = 1' | ss-produce --dry-run --value-format avro --value-schema '$D/w.avsc' rt"
	assert_output --partial 'value .extra: no such field in record Weather'
	run sh -c "(echo '{\"station\":1}'; head -1 '$D/w.ndjson') | ss-produce --dry-run --on-error skip --value-format avro --value-schema '$D/w.avsc' rt"
	assert_success
	[ "$(echo "$output" | grep -c '^{')" -eq 1 ]
}

@test "usage: avro needs a schema or a registry; a bad schema file is exit 2" {
	test_must_fail 2 ss-consume -b "$B" -e --value-format avro rt
	assert_output --partial "--value-format avro needs --value-schema or --schema-registry"
	test_must_fail 2 ss-produce -b "$B" --value-schema "$D/w.avsc" rt
	echo '{"type":"nope"}' >"$T/bad.avsc"
	test_must_fail 2 ss-consume -b "$B" -e --value-format avro --value-schema "$T/bad.avsc" rt
	assert_output --partial "bad.avsc: not an Avro schema"
	test_must_fail 2 ss-consume -b "$B" -e --value-format avro --value-schema "$T/none.avsc" rt
}

@test "hostile bytes: a length or count of 2^62 is a bad record, not an out-of-memory or a hang" {
	# zig-zag varint 0x3fffffffffffffff: a string's length, an array's block count
	printf '{"base64":"/v//////////fw=="}\n' | ss-produce -b "$B" --value . hostile
	for s in '"string"' '"bytes"' '{"type":"array","items":"null"}' '{"type":"map","values":"long"}'; do
		echo "$s" >"$T/s.avsc"
		test_must_fail 1 timeout 20 ss-consume -b "$B" -e --value-format avro --value-schema "$T/s.avsc" hostile
		assert_output --partial "ss-consume: hostile [0] offset 0: value: not Avro of the schema: "
		[ "${#lines[@]}" -eq 1 ]
	done
	# a good record after it is read (Avro C's value is not reused after a failed read)
	printf '{"base64":"AgA="}\n' | ss-produce -b "$B" --value . hostile
	echo '{"type":"array","items":"null"}' >"$T/s.avsc"
	run ss-consume -b "$B" -e --value-format avro --value-schema "$T/s.avsc" --on-error skip hostile
	assert_success
	assert_line --index 1 --regexp '"offset":1,.*"value":\[null\]'
}

@test "wire format keys: ss-produce registers TOPIC-key, ss-consume decodes key and value" {
	: >"$D/reg.port.log"
	head -1 "$D/w.ndjson" | jq -c '{key: "k1", value: .}' |
		ss-produce -b "$B" --envelope --key-format avro --key-schema "$D/k.avsc" \
			--value-format avro --value-schema "$D/w.avsc" --schema-registry "$R" wkeys
	run cat "$D/reg.port.log"
	assert_line --index 0 "POST /subjects/wkeys-key/versions"
	assert_line --index 1 "POST /subjects/wkeys-value/versions"
	run ss-consume -b "$B" -e --key-format avro --value-format avro --schema-registry "$R" wkeys
	assert_success
	echo "$output" | jq -e '.key == "k1" and .value.station == "s1"'
	# the key: a zero byte, the id the stand-in gave "string" (2: the value's schema is
	# 1), then the Avro string "k1" (its length 2 as the zig-zag varint 4)
	run sh -c "ss-consume -b '$B' -e --key-format base64 wkeys | jq -r .key.base64 | base64 -d | od -An -tx1"
	assert_output " 00 00 00 00 02 04 6b 31"
}
