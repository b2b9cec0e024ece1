#!/usr/bin/env bats
# Hostile input through every tool that reads records: invalid JSON, invalid UTF-8, NUL
# bytes, 100 MB lines, deep nesting, numbers beyond double range, times and keys of every
# JSON type. Each case: a clear message naming the input and line, the documented exit
# status (ss(7): 1 for a data error), no crash (status < 128, no sanitizer report: this
# suite also runs under tests/torture/sanitize.sh), and nothing before the bad record lost.
load helpers

# no_crash: the last `run` ended by exit, not by a signal, and no sanitizer spoke.
no_crash() {
	if [ "$status" -ge 128 ]; then
		echo "died with status $status: $output" >&2
		return 1
	fi
	refute_output --partial 'AddressSanitizer'
	refute_output --partial 'runtime error:'
	refute_output --partial 'LeakSanitizer'
}

# good N: N good records with envelopes (offsets 0..N-1) then the bad line(s) from stdin.
good() {
	for i in $(seq 0 $(($1 - 1))); do
		printf '{"topic":"h","partition":0,"offset":%d,"key":"k%d","value":%d}\n' "$i" "$i" "$i"
	done
}

# bad_case NAME: the records of each hostile case, after three good ones.
bad_line() {
	case $1 in
	invalid-json) printf '{"key":"x",}\n' ;;
	truncated) printf '{"key":"x","value":[1,2\n' ;;
	utf8) printf '{"key":"\xff\xfe"}\n' ;;
	overlong-utf8) printf '{"key":"\xc0\xaf"}\n' ;;
	surrogate-utf8) printf '{"key":"\xed\xa0\x80"}\n' ;;
	lone-surrogate-escape) printf '{"key":"\\ud800"}\n' ;;
	nul) printf '{"key":"a\0b"}\n' ;;
	nul-outside) printf '{"key":"a"}\0\n' ;;
	control) printf '{"key":"a\tb"}\n' ;;
	deep) python3 -c 'print("[" * 100000)' ;;
	deep-closed) python3 -c 'print("{\"key\":" + "[" * 5000 + "]" * 5000 + "}")' ;;
	nan) printf '{"key":nan}\n' ;;
	leading-zero) printf '{"key":01}\n' ;;
	two-values) printf '{"key":"a"} {"key":"b"}\n' ;;
	binary) head -c 4096 /dev/urandom | tr -d '\n'; echo ;;
	esac
}
BAD_CASES="invalid-json truncated utf8 overlong-utf8 surrogate-utf8 lone-surrogate-escape nul nul-outside control deep deep-closed nan leading-zero two-values binary"

@test "ss-cache put: every kind of bad record fails clearly at its line, after committing what came before" {
	for c in $BAD_CASES; do
		{ good 3; bad_line "$c"; good 5 | tail -2; } >"$T/$c.in"
		run ss-cache "$T/$c.db" put <"$T/$c.in"
		no_crash
		[ "$status" -eq 1 ] || { echo "$c: exit $status: $output"; return 1; }
		assert_line --regexp '^ss-cache: <stdin>:4: .+'
		run ss-cache "$T/$c.db" stats
		assert_output --partial '"keys":3,'
		assert_output --partial '"offset":2}'
	done
}

@test "ss-cache put --on-error skip and dead-letter: bad records set aside, the rest stored" {
	for c in $BAD_CASES; do
		{ good 3; bad_line "$c"; good 5 | tail -2; } >"$T/in"
		run ss-cache "$T/skip-$c.db" put --on-error skip <"$T/in"
		no_crash
		assert_success
		assert_line --regexp '^ss-cache: <stdin>:4: .* \(skipped\)$'
		run ss-cache "$T/skip-$c.db" stats
		assert_output --partial '"keys":5,'
		rm -f "$T/dl"
		run ss-cache "$T/dl-$c.db" put --on-error dead-letter="$T/dl" <"$T/in"
		no_crash
		assert_success
		# the dead letter is valid JSON that gives back the exact bytes
		run jq -r '"\(.line) \(.reason != "")"' "$T/dl"
		assert_output "4 true"
		if jq -e 'has("raw_base64")' "$T/dl" >/dev/null; then
			jq -r .raw_base64 "$T/dl" | base64 -d >"$T/raw"
		else
			jq -j .raw "$T/dl" >"$T/raw"
		fi
		bad_line "$c" | head -c -1 >"$T/want"
		[ "$c" = binary ] || cmp "$T/want" "$T/raw"
	done
}

@test "ss-cache put: a valid 100 MB line is stored, an unterminated one fails at its line" {
	python3 -c '
import sys
w = sys.stdout.write
w("{\"key\":\"before\"}\n{\"key\":\"big\",\"v\":\"" + "x" * (100 << 20) + "\"}\n{\"key\":\"after\"}\n")' >"$T/big"
	run ss-cache "$T/big.db" put <"$T/big"
	no_crash
	assert_success
	run ss-cache "$T/big.db" get '"big"'
	[ "${#output}" -gt $((100 << 20)) ]
	python3 -c '
import sys
sys.stdout.write("{\"key\":\"before\"}\n{\"key\":\"big\",\"v\":\"" + "x" * (100 << 20) + "\n{\"key\":\"after\"}\n")' >"$T/bad"
	run ss-cache "$T/bad.db" put <"$T/bad"
	no_crash
	assert_failure 1
	assert_output --partial 'ss-cache: <stdin>:2: unterminated string'
	run ss-cache "$T/bad.db" scan --keys
	assert_output '"before"'
}

@test "ss-cache: keys of every JSON type, and numbers beyond double range, are stored and found" {
	keys=(null false true 0 -1.5 1e400 -1e400 123456789012345678901234567890 1e-400 '""' '"s"' '"a\u0000b"' '"é"' '[]' '[1,"a",null]' '{}' '{"b":1,"a":[2]}')
	for k in "${keys[@]}"; do printf '{"k":%s}\n' "$k"; done >"$T/in"
	run ss-cache "$T/st.db" put --key .k <"$T/in"
	no_crash
	assert_success
	for k in "${keys[@]}"; do
		run ss-cache "$T/st.db" get "$k"
		no_crash
		assert_success
		[ "$(jq -c .k <<<"$output")" = "$(jq -c . <<<"$k")" ] || { echo "$k: $output"; return 1; }
	done
	# key order is jq's sort order, for all of them at once
	run ss-cache "$T/st.db" scan --keys
	jq -c '.k' "$T/in" | jq -sc 'sort | unique | .[]' >"$T/want"
	jq -c . <<<"$output" >"$T/got"
	diff "$T/want" "$T/got"
}

@test "ss-cache: a key expression failing on a record is a data error at its line" {
	printf '%s\n' '{"a":{"b":1}}' '{"a":"str"}' >"$T/in"
	run ss-cache "$T/st.db" put --key .a.b <"$T/in"
	no_crash
	assert_failure 1
	assert_line --regexp '^ss-cache: <stdin>:2: --key \.a\.b: .*Cannot index string'
	run ss-cache "$T/st.db" get 1
	assert_success
	printf '%s\n' '{"a":1}' '{"b":1}' >"$T/in"
	run ss-cache "$T/st2.db" put --key '.a | error("boom")' <"$T/in"
	no_crash
	assert_failure 1
	assert_output --partial 'boom'
}

@test "ss-cache --retain-age: times of every wrong type are kept without a time, not a crash" {
	for t in null false true '"yesterday"' '"2023-13-01T00:00:00Z"' '"2023-01-01T25:00:00Z"' '[]' '{}' 1e400 -1e400 '"9999-01-01"' '"0000-01-01"'; do
		printf '{"k":%s}\n' "$t"
	done >"$T/in"
	echo '{"k":"2023-01-01T10:00:00Z"}' >>"$T/in"
	run ss-cache "$T/st.db" put --key .k --retain-age 1h <"$T/in"
	no_crash
	assert_success
	run ss-cache "$T/st.db" stats
	assert_output --partial '"keys":13,'
}

# ---- the other tools, once built ----

need() { command -v "$1" >/dev/null || skip "$1 is not built on this branch yet"; }

TIME_TYPES=(null false true '[]' '{}' '"yesterday"' '"2023-13-01T00:00:00Z"' 1e400 -1e400 '"9999-01-01"')

@test "ss-asof: bad records on either side fail at their file, line and side, after the results before" {
	need ss-asof
	printf '%s\n' '{"t":1,"k":"a","w":1}' '{"t":100,"k":"a","w":2}' >"$T/right"
	for c in $BAD_CASES; do
		{ for i in 1 2 3; do echo "{\"t\":$i,\"k\":\"a\",\"n\":$i}"; done; bad_line "$c"; echo '{"t":9,"k":"a"}'; } >"$T/left"
		run ss-asof "$T/left" "$T/right" --on .t --by .k --emit eager
		no_crash
		[ "$status" -eq 1 ] || { echo "$c: exit $status: $output"; return 1; }
		assert_line --regexp "^ss-asof: $T/left:4: left: .+"
		[ "$(grep -c '^{"left"' <<<"$output")" -eq 3 ] || { echo "$c: $output"; return 1; }
	done
	{ echo '{"t":1,"k":"a","w":1}'; bad_line utf8; } >"$T/right"
	printf '%s\n' '{"t":5,"k":"a"}' >"$T/left"
	run ss-asof "$T/left" "$T/right" --on .t --by .k
	no_crash
	assert_failure 1
	assert_line --regexp "^ss-asof: $T/right:2: right: .*UTF-8"
}

@test "ss-asof: event times of every wrong type are data errors naming the line" {
	need ss-asof
	echo '{"t":1,"k":"a"}' >"$T/right"
	for t in "${TIME_TYPES[@]}"; do
		printf '{"t":1,"k":"a"}\n{"t":%s,"k":"a"}\n' "$t" >"$T/left"
		run ss-asof "$T/left" "$T/right" --on .t --by .k --emit eager
		no_crash
		[ "$status" -eq 1 ] || { echo "$t: exit $status: $output"; return 1; }
		assert_line --regexp "^ss-asof: $T/left:2: left: \.t: .+"
		assert_line --partial '{"left":{"t":1,'
	done
}

@test "ss-asof: keys of every JSON type join with their equals only" {
	need ss-asof
	keys=(null false true 0 1.5 1e400 '""' '"s"' '"a\u0000b"' '[]' '[1,"a"]' '{}' '{"b":1,"a":[2]}')
	for k in "${keys[@]}"; do printf '{"t":1,"k":%s,"w":%s}\n' "$k" "$k"; done >"$T/right"
	for k in "${keys[@]}"; do printf '{"t":2,"k":%s}\n' "$k"; done >"$T/left"
	run ss-asof "$T/left" "$T/right" --on .t --by .k --inner --select '[.left.k, .right.w]'
	no_crash
	assert_success
	grep '^\[' <<<"$output" >"$T/pairs"
	[ "$(wc -l <"$T/pairs")" -eq 13 ]
	[ "$(jq -c 'select(.[0] != .[1])' "$T/pairs")" = "" ]
}

@test "ss-checkpoint heartbeat and pulse: bad records and times fail at their line, records before passed on" {
	need ss-checkpoint
	for verb in "heartbeat act wx" "pulse act --dependency wx=1000d"; do
		for c in $BAD_CASES; do
			{ for i in 1 2 3; do echo "{\"timestamp\":$i}"; done; bad_line "$c"; echo '{"timestamp":9}'; } >"$T/in"
			# shellcheck disable=SC2086
			run ss-checkpoint "$T/$c.db" $verb <"$T/in"
			no_crash
			[ "$status" -eq 1 ] || { echo "$verb $c: exit $status: $output"; return 1; }
			assert_line --regexp '^ss-checkpoint: <stdin>:4: .+'
			[ "$(grep -c '^{"timestamp":[123]}' <<<"$output")" -eq 3 ]
		done
		for t in "${TIME_TYPES[@]}"; do
			printf '{"timestamp":1}\n{"timestamp":%s}\n' "$t" >"$T/in"
			# shellcheck disable=SC2086
			run ss-checkpoint "$T/t.db" $verb <"$T/in"
			no_crash
			[ "$status" -eq 1 ] || { echo "$verb $t: exit $status: $output"; return 1; }
			assert_line --regexp '^ss-checkpoint: <stdin>:2: .+'
		done
	done
}

@test "ss-produce --dry-run: bad records fail at their line after the records before" {
	need ss-produce
	for c in $BAD_CASES; do
		{ good 3; bad_line "$c"; good 5 | tail -2; } >"$T/in"
		run ss-produce --dry-run --key .key t <"$T/in"
		no_crash
		[ "$status" -eq 1 ] || { echo "$c: exit $status: $output"; return 1; }
		assert_line --regexp '^ss-produce: .*stdin>?:4: .+'
		[ "$(grep -c '"key":"k[012]"' <<<"$output")" -eq 3 ] || { echo "$c: $output"; return 1; }
	done
	# null is no timestamp (the broker's time), as for a record without the field
	for t in "${TIME_TYPES[@]:1}"; do
		printf '{"t":1}\n{"t":%s}\n' "$t" >"$T/in"
		run ss-produce --dry-run --timestamp .t t <"$T/in"
		no_crash
		[ "$status" -eq 1 ] || { echo "$t: exit $status: $output"; return 1; }
		assert_line --regexp '^ss-produce: .*stdin>?:2: .+'
	done
}

@test "ss-produce to ss-consume: hostile payloads sent raw come back as valid JSON, bad lines stop after the good ones" {
	need ss-produce
	need ss-mock-broker
	coproc MOCK { exec ss-mock-broker --topic raw:1 --topic lines:1; }
	read -r -u "${MOCK[0]}" line
	export SS_BROKERS=${line#BROKERS=}
	{ printf 'plain text\n'; printf '\xff\xfe invalid UTF-8\n'; printf 'a\0NUL\n'; printf '{"half":\n'
	  python3 -c 'print("[" * 5000)'; printf '%s\n' 1e400 '"\ud800"'; } >"$T/raw"
	run ss-produce --raw raw <"$T/raw"
	no_crash
	assert_success
	run ss-consume -e raw
	no_crash
	assert_success
	[ "$(wc -l <<<"$output")" -eq 7 ]
	jq -c . <<<"$output" >/dev/null
	{ good 3; bad_line utf8; good 5 | tail -2; } >"$T/in"
	run ss-produce --key .key lines <"$T/in"
	no_crash
	assert_failure 1
	run ss-consume -e lines
	assert_success
	[ "$(wc -l <<<"$output")" -eq 3 ]
	kill "$MOCK_PID"
	wait "$MOCK_PID" || true
}

@test "ss-consume | ss-produce: a payload that is the bytes null stays bytes, not a tombstone" {
	need ss-mock-broker
	coproc MOCK { exec ss-mock-broker --topic a:1 --topic b:1; }
	read -r -u "${MOCK[0]}" line
	export SS_BROKERS=${line#BROKERS=}
	printf '%s\n' null ' null ' | ss-produce --raw a
	ss-produce --envelope b <<<'{"key":"t","value":null}'
	run ss-consume -e a
	assert_success
	ss-consume -e a | ss-produce --envelope b
	run bash -c "ss-consume -e b --value-format base64 | jq -c .value"
	assert_output "$(printf '%s\n' null '{"base64":"bnVsbA=="}' '{"base64":"IG51bGwg"}')"
	kill "$MOCK_PID"
	wait "$MOCK_PID" || true
}
