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
	test_must_fail 1 cmp -s "$T/in/activity.ndjson" "$T/s1/activity.ndjson"
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
	assert_output --partial "variants: inorder late shuffled partitioned wide projection numeric keyed"
	assert_output --partial "cat (pipe limit)"
	assert_output --partial "jq (parse weather)"
	assert_output --partial "ss-asof (6 partitions)"
	assert_output --partial "slipstream-async"
	assert_output --partial "quix-streams"
}

@test "gen.py --shape wide: ~200-byte records, 120-character text, ids, nested key, epoch ms, same uniqueness rules" {
	gen 5000 "$T/d" --shape wide
	[ "$(wc -l <"$T/d/weather.ndjson")" -eq 5000 ]
	[ "$(wc -l <"$T/d/activity.ndjson")" -eq 5000 ]
	jq -e '(.wid|type)=="number" and (.meta.station|type)=="string" and (.ts|type)=="number"
		and (.text|length)==120 and (.temp|type)=="number"' "$T/d/weather.ndjson" |
		sort -u | { read -r v; [ "$v" = true ]; }
	jq -e '(.aid|type)=="number" and (.meta.station|type)=="string" and (.ts|type)=="number"
		and (.note|length)==120' "$T/d/activity.ndjson" | sort -u | { read -r v; [ "$v" = true ]; }
	# about 200 bytes a record, some of it not ASCII, some of it escaped
	bytes=$(cat "$T"/d/*.ndjson | wc -c)
	[ "$bytes" -ge $((10000 * 180)) ] && [ "$bytes" -le $((10000 * 240)) ]
	[ "$(LC_ALL=C grep -c -P '[\x80-\xff]' "$T/d/weather.ndjson")" -gt 500 ]
	grep -q '\\"' "$T/d/activity.ndjson"
	# ids are unique, times epoch milliseconds in order, keys from 10,000 stations
	[ "$(jq .wid "$T/d/weather.ndjson" | sort -u | wc -l)" -eq 5000 ]
	[ "$(jq .aid "$T/d/activity.ndjson" | sort -u | wc -l)" -eq 5000 ]
	diff <(jq .ts "$T/d/weather.ndjson") <(jq .ts "$T/d/weather.ndjson" | sort -n)
	diff <(jq .ts "$T/d/activity.ndjson") <(jq .ts "$T/d/activity.ndjson" | sort -n)
	[ "$(head -1 "$T/d/weather.ndjson" | jq '.ts / 1000 | floor')" -eq 1672567200 ]
	n=$(cat "$T"/d/*.ndjson | jq -r .meta.station | sort -u | wc -l)
	[ "$n" -gt 5000 ] && [ "$n" -le 10000 ]
	[ -z "$(cat "$T"/d/*.ndjson | jq -r .meta.station | grep -v '^s[0-9]*$')" ]
	[ -z "$(cat <(jq .ts "$T/d/weather.ndjson") <(jq .ts "$T/d/activity.ndjson") | sort | uniq -d)" ]
	# the same seed, the same bytes
	gen 5000 "$T/e" --shape wide
	cmp "$T/d/weather.ndjson" "$T/e/weather.ndjson"
	cmp "$T/d/activity.ndjson" "$T/e/activity.ndjson"
}

@test "gen.py --shape numeric: the wide shape's rules for ids, times and keys, 30 numbers for its text" {
	gen 3000 "$T/n" --shape numeric
	for side in weather:wid activity:aid; do
		f=${side%:*}.ndjson id=${side#*:}
		[ "$(wc -l <"$T/n/$f")" -eq 3000 ]
		# 33 members: the id, the time, the key's object and f0 ... f29, numbers all
		jq -e --arg id "$id" 'keys_unsorted == [$id, "ts", "meta"] + [range(30) | "f\(.)"]
			and ([.[$id], .ts] + [to_entries[3:][] | .value] | map(type) | unique) == ["number"]' \
			"$T/n/$f" | sort -u | { read -r v; [ "$v" = true ]; }
		# ids unique, times epoch milliseconds in order
		[ "$(jq ".$id" "$T/n/$f" | sort -u | wc -l)" -eq 3000 ]
		diff <(jq .ts "$T/n/$f") <(jq .ts "$T/n/$f" | sort -n)
	done
	[ "$(head -1 "$T/n/weather.ndjson" | jq '.ts / 1000 | floor')" -eq 1672567200 ]
	[ -z "$(cat "$T"/n/*.ndjson | jq .ts | sort | uniq -d)" ]
	[ "$(cat "$T"/n/*.ndjson | jq -r .meta.station | sort -u | wc -l)" -gt 2500 ]
	# decimals and integers, negative and not
	grep -q '"f[0-9]*":-[0-9]*\.[0-9]' "$T/n/weather.ndjson"
	grep -q '"f[0-9]*":[0-9][0-9]*,' "$T/n/weather.ndjson"
	bytes=$(cat "$T"/n/*.ndjson | wc -c)
	[ "$bytes" -ge $((6000 * 420)) ] && [ "$bytes" -le $((6000 * 520)) ]
	want=$(check --expect "$T/n/activity.ndjson" "$T/n/weather.ndjson")
	[[ $want == "3000 "* ]]
	ss-asof "$T/n/activity.ndjson" "$T/n/weather.ndjson" --by .meta.station --on .ts --ts-unit ms >"$T/whole"
	[ "$(check "$T/whole")" = "$want" ]
	gen 3000 "$T/m" --shape numeric
	cmp "$T/n/weather.ndjson" "$T/m/weather.ndjson"
}

@test "check.py: the wide shape's outputs (whole, flat rows, projections) reduce to the same (aid, wid) pairs" {
	cat >"$T/ss" <<-'X'
	{"left":{"aid":1,"ts":1672567201645,"meta":{"station":"s7"},"kind":"lunch","note":"x"},"right":{"wid":0,"ts":1672567200812,"meta":{"station":"s7"},"temp":1.5,"text":"y"}}
	{"left":{"aid":2,"ts":1672567203000,"meta":{"station":"s9"},"kind":"lunch","note":"z"},"right":null}
	X
	printf '%s\n' '[2,null]' '[1,0]' >"$T/select"
	printf '%s\n' '{"aid":1,"wid":0}' '{"aid":2,"wid":null}' >"$T/peer-select"
	printf '%s\n' '{"aid":2,"wid":null}' '{"aid":1.0,"wid":0.0}' >"$T/pandas-select"
	printf '%s\n' '{"aid":1,"ts":1672567201645,"meta":{"station":"s7"},"w_wid":0,"w_ts":1672567200812}' \
		'{"aid":2,"ts":1672567203000,"meta":{"station":"s9"},"w_wid":null,"w_ts":null}' >"$T/flat"
	run check "$T/ss" "$T/select" "$T/peer-select" "$T/pandas-select" "$T/flat"
	assert_success
	[ "${#lines[@]}" -eq 5 ]
	[[ ${lines[0]} == "2 "* ]]
	for i in 1 2 3 4; do [ "${lines[0]}" = "${lines[$i]}" ]; done
	printf '%s\n' '[2,null]' '[1,null]' >"$T/unmatched"
	[ "$(check "$T/unmatched")" != "${lines[0]}" ]
}

@test "ss-asof with the harness's wide flags, whole and --select, gives check.py --expect's answer" {
	gen 4000 "$T/w" --shape wide --stations 300
	gen 4000 "$T/s" --shape wide --stations 300 --shuffle-left
	want=$(check --expect "$T/w/activity.ndjson" "$T/w/weather.ndjson")
	[[ $want == "4000 "* ]]
	[ "$(check --expect "$T/s/activity.ndjson" "$T/s/weather.ndjson")" = "$want" ]
	ss-asof "$T/w/activity.ndjson" "$T/w/weather.ndjson" --by .meta.station --on .ts --ts-unit ms >"$T/whole"
	ss-asof "$T/w/activity.ndjson" "$T/w/weather.ndjson" --by .meta.station --on .ts --ts-unit ms \
		--select '[.left.aid, .right.wid]' >"$T/select"
	[ "$(check "$T/whole")" = "$want" ]
	[ "$(check "$T/select")" = "$want" ]
	# some activity has no weather yet, most has
	grep -q '"right":null' "$T/whole" && grep -q '"right":{' "$T/whole"
}

@test "the batch peers, parameterised by key path and time field, give the brute-force pairs on both shapes" {
	py=$ROOT/bench/.venv/bin/python
	[ -x "$py" ] || skip "no bench/.venv (make bench-deps)"
	gen 3000 "$T/seed"
	gen 3000 "$T/wide" --shape wide --stations 300
	gen 3000 "$T/numeric" --shape numeric --stations 300
	for shape in seed wide numeric; do
		A=$T/$shape/activity.ndjson W=$T/$shape/weather.ndjson
		want=$(check --expect "$A" "$W")
		opts=()
		[ "$shape" = seed ] || opts=(--by meta.station --on ts)
		for peer in duckdb polars pandas; do
			"$py" "$ROOT/bench/peers/${peer}_asof.py" "$A" "$W" "$T/out" "${opts[@]}"
			[ "$(check "$T/out")" = "$want" ] || { echo "$peer $shape: $(check "$T/out") != $want"; false; }
			[ "$shape" = wide ] || continue
			"$py" "$ROOT/bench/peers/${peer}_asof.py" "$A" "$W" "$T/out" "${opts[@]}" --select aid,wid
			[ "$(jq -c 'keys' "$T/out" | sort -u)" = '["aid","wid"]' ]
			[ "$(check "$T/out")" = "$want" ] || { echo "$peer select: $(check "$T/out") != $want"; false; }
		done
	done
}
