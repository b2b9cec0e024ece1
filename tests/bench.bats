#!/usr/bin/env bats
# The benchmark harness's own parts: the data generator and the output checker that makes
# the race fair. (The benchmarks themselves are never tests: bench/run.)
load helpers

gen() { python3 "$ROOT/bench/gen.py" "$@"; }
check() { python3 "$ROOT/bench/check.py" "$@"; }
times() { jq -r .timestamp "$1"; }

@test "gen.py: N records per side, seed-shaped, in event-time order, 100 stations" {
	gen 5000 "$T/d"
	[ "$(wc -l <"$T/d/weather.ndjson")" -eq 5000 ]
	[ "$(wc -l <"$T/d/activity.ndjson")" -eq 5000 ]
	jq -e 'has("station") and (.timestamp|type)=="number" and (.value|type)=="string" and (.temp|type)=="number"' \
		"$T/d/weather.ndjson" | sort -u | { read -r v; [ "$v" = true ]; }
	diff <(times "$T/d/weather.ndjson") <(times "$T/d/weather.ndjson" | sort -n)
	diff <(times "$T/d/activity.ndjson") <(times "$T/d/activity.ndjson" | sort -n)
	n=$(cat "$T"/d/*.ndjson | jq -r .station | sort -u | wc -l)
	[ "$n" -le 100 ] && [ "$n" -ge 90 ]
	# right times are unique and never equal a left time: one right answer for every engine
	[ -z "$(cat <(times "$T/d/weather.ndjson") <(times "$T/d/activity.ndjson") | sort | uniq -d)" ]
}

@test "gen.py: the same seed gives the same bytes" {
	gen 2000 "$T/a"
	gen 2000 "$T/b"
	cmp "$T/a/weather.ndjson" "$T/b/weather.ndjson"
	cmp "$T/a/activity.ndjson" "$T/b/activity.ndjson"
}

@test "gen.py --late: a permutation of the in-order weather, late by at most the span" {
	gen 20000 "$T/in"
	gen 20000 "$T/late" --late 0.05 --late-span 600
	cmp "$T/in/activity.ndjson" "$T/late/activity.ndjson"
	diff <(sort "$T/in/weather.ndjson") <(sort "$T/late/weather.ndjson")
	run awk -v span=600 '{ t = $0; sub(/.*"timestamp":/, "", t); sub(/,.*/, "", t); t += 0
		if (t < max) late++; if (t < max - span) bad++; if (t > max) max = t }
		END { print late + 0, bad + 0 }' "$T/late/weather.ndjson"
	late=${output% *} bad=${output#* }
	[ "$late" -gt 500 ] && [ "$bad" -eq 0 ]
}

@test "gen.py --shuffle-left: the in-order activity lines in another, fixed order; weather unchanged" {
	gen 5000 "$T/in"
	gen 5000 "$T/s1" --shuffle-left
	gen 5000 "$T/s2" --shuffle-left
	cmp "$T/in/weather.ndjson" "$T/s1/weather.ndjson"
	cmp "$T/s1/activity.ndjson" "$T/s2/activity.ndjson"
	diff <(sort "$T/in/activity.ndjson") <(sort "$T/s1/activity.ndjson")
	! cmp -s "$T/in/activity.ndjson" "$T/s1/activity.ndjson"
	# far from sorted: most neighbours are out of time order somewhere
	run awk '{ t = $0; sub(/.*"timestamp":/, "", t); sub(/,.*/, "", t); t += 0
		if (NR > 1 && t < prev) down++; prev = t } END { print down + 0 }' "$T/s1/activity.ndjson"
	[ "$output" -gt 2000 ]
}

@test "gen.py --ts rfc3339 writes the seed's time strings" {
	gen 10 "$T/d" --ts rfc3339
	run jq -r .timestamp "$T/d/weather.ndjson"
	assert_line --index 0 "2023-01-01T10:00:00Z"
	assert_line --index 1 "2023-01-01T10:00:02Z"
}

@test "check.py: ss-asof's shape, a flat row, envelopes and RFC 3339 times reduce to the same pairs" {
	cat >"$T/ss" <<-'X'
	{"left":{"station":"s1","timestamp":1672567201,"value":"swimming"},"right":{"station":"s1","timestamp":1672567200,"value":"🌞","temp":1.5}}
	{"left":{"station":"s2","timestamp":1672567203,"value":"lunch"},"right":null}
	X
	cat >"$T/flat" <<-'X'
	{"station":"s2","timestamp":1672567203,"value":"lunch","w_timestamp":null,"w_value":null,"temp":null}
	{"station":"s1","timestamp":"2023-01-01T10:00:01Z","value":"swimming","w_timestamp":1672567200.0,"w_value":"🌞","temp":1.5}
	X
	cat >"$T/env" <<-'X'
	{"left":{"topic":"a","partition":0,"offset":1,"value":{"station":"s2","timestamp":1672567203,"value":"lunch"}},"right":null}
	{"left":{"topic":"a","partition":0,"offset":0,"value":{"station":"s1","timestamp":1672567201,"value":"swimming"}},"right":{"topic":"w","partition":0,"offset":0,"value":{"station":"s1","timestamp":1672567200,"value":"🌞"}}}
	X
	run check "$T/ss" "$T/flat" "$T/env"
	assert_success
	[ "${#lines[@]}" -eq 3 ]
	[[ ${lines[0]} == "2 "* ]]
	[ "${lines[0]}" = "${lines[1]}" ] && [ "${lines[0]}" = "${lines[2]}" ]
}

@test "check.py: another weather, a lost or a doubled pair changes the digest; --diff names it" {
	printf '%s\n' '{"station":"s1","timestamp":3,"value":"a","w_timestamp":2,"w_value":"x"}' \
		'{"station":"s1","timestamp":5,"value":"b","w_timestamp":4,"w_value":"y"}' >"$T/good"
	sed '2s/"w_timestamp":4,"w_value":"y"/"w_timestamp":2,"w_value":"x"/' "$T/good" >"$T/stale"
	head -1 "$T/good" >"$T/lost"
	cat "$T/good" "$T/lost" >"$T/doubled"
	good=$(check "$T/good")
	for f in stale lost doubled; do
		[ "$(check "$T/$f")" != "$good" ]
	done
	run check --diff "$T/good" "$T/stale"
	assert_line --index 0 --partial "1 pairs only in $T/good, 1 only in $T/stale"
	assert_output --partial "('s1', 5, 'b', 4, 'y')"
	assert_output --partial "('s1', 5, 'b', 2, 'x')"
}

@test "check.py --expect: the brute-force answer's digest, in any left order, equals a right output's" {
	gen 3000 "$T/in"
	gen 3000 "$T/s" --shuffle-left
	# the right answer, written by jq in ss-asof's shape: the latest weather of the station
	# at or before each activity
	jq -c -n --slurpfile w "$T/in/weather.ndjson" '
		($w | group_by(.station) | map({key: .[0].station, value: sort_by(.timestamp)})
		    | from_entries) as $h
		| inputs | . as $a
		| {left: $a, right: ([($h[$a.station] // [])[] | select(.timestamp <= $a.timestamp)] | last)}' \
		"$T/in/activity.ndjson" >"$T/want"
	want=$(check "$T/want")
	[ "$(check --expect "$T/in/activity.ndjson" "$T/in/weather.ndjson")" = "$want" ]
	[ "$(check --expect "$T/s/activity.ndjson" "$T/s/weather.ndjson")" = "$want" ]
	# one activity matched with another weather changes it
	n=$(grep -n '"right":{' "$T/want" | head -1 | cut -d: -f1)
	jq -c --argjson n "$n" 'if input_line_number == $n then .right.timestamp -= 2 else . end' \
		"$T/want" >"$T/wrong"
	[ "$(wc -l <"$T/wrong")" -eq 3000 ] && ! cmp -s "$T/want" "$T/wrong"
	[ "$(check "$T/wrong")" != "$want" ]
}

@test "bench/run --list names the runs, groups and variants --only accepts" {
	run "$ROOT/bench/run" --list
	assert_success
	assert_output --partial "groups: join kafka-join kafka-io cache"
	assert_output --partial "variants: inorder late shuffled partitioned"
	assert_output --partial "ss-asof (6 partitions)"
	assert_output --partial "slipstream-async"
	assert_output --partial "quix-streams"
}
