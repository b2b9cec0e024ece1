#!/usr/bin/env bats
# Topic copies are exact: `ss-consume -e src | ss-produce --envelope --partition .partition
# dst` gives dst the same records as src, byte for byte (key, value, headers in order with
# repeated and interleaved names, timestamp, partition). kcat reads both topics
# (tests/copy-ref.py dump), independently of ss.
load helpers
load kafka

setup_file() {
	mock_start --topic src:3 --topic dst:3 --topic ksrc:3 --topic kdst:3
}
teardown_file() { mock_stop; }

# same A B: the files are equal; else the first differences
same() {
	cmp -s "$1" "$2" && return 0
	diff "$1" "$2" | head -n 20 >&2
	return 1
}

# dump TOPIC: every record of TOPIC, one line each, in partition and offset order
dump() {
	kcat -C -b "$B" -t "$1" -e -q -J | python3 "$ROOT/tests/copy-ref.py" dump
}

@test "copy property: every corpus input and hand-made case as key, value and headers, byte for byte" {
	python3 "$ROOT/tests/copy-ref.py" gen "$T/in" "$T/expected" "$ROOT"/tests/fuzz/corpus/*/*
	[ "$(wc -l <"$T/in")" -gt 1000 ]   # the corpus was found (1375 files after make fuzz-merge)
	run ss-produce -b "$B" --envelope --partition .partition src <"$T/in"
	assert_success
	dump src >"$T/src"
	same "$T/expected" "$T/src"   # the source holds what was meant
	ss-consume -b "$B" -e src >"$T/envelopes"
	jq -e . "$T/envelopes" >/dev/null
	[ "$(wc -l <"$T/envelopes")" -eq "$(wc -l <"$T/in")" ]
	run ss-produce -b "$B" --envelope --partition .partition dst <"$T/envelopes"
	assert_success
	dump dst >"$T/dst"
	same "$T/src" "$T/dst"
}

@test "copy property: records kcat wrote (one file each), headers given to kcat, are copied exactly" {
	for p in 0 1 2; do
		# shellcheck disable=SC2046
		kcat -P -b "$B" -t ksrc -p $p -k "key-$p" -H a=1 -H b=2 -H a=3 -H $'bin=\xff\xfe' -H 'q="x"' \
			$(ls "$ROOT"/tests/fuzz/corpus/payload/* | awk -v p=$p 'NR % 3 == p')
	done
	printf 'k|"quoted"\nk| {"a":1} \n|null\n' | kcat -P -b "$B" -t ksrc -p 1 -K '|' -H h=1 -H h=2
	printf 'tomb|\n' | kcat -P -b "$B" -t ksrc -p 1 -K '|' -Z
	ss-consume -b "$B" -e ksrc >"$T/envelopes"
	ss-produce -b "$B" --envelope --partition .partition kdst <"$T/envelopes"
	# headers stay an object where that is exact, and readable either way
	run bash -c "jq -c 'select(.key == \"key-1\") | .headers' '$T/envelopes' | sort -u"
	assert_output '[["a","1"],["b","2"],["a","3"],["bin",{"base64":"//4="}],["q","\"x\""]]'
	run bash -c "jq -c 'select(.key == \"k\") | .headers' '$T/envelopes' | sort -u"
	assert_output '{"h":["1","2"]}'
	run jq -c 'select(.key == "tomb") | [.value, .headers]' "$T/envelopes"
	assert_output '[null,{}]'
	dump ksrc >"$T/src"
	dump kdst >"$T/dst"
	[ "$(wc -l <"$T/src")" -gt 350 ]   # the payload corpus was found (383 files)
	same "$T/src" "$T/dst"
}
