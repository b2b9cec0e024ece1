#!/usr/bin/env bats
# Scaling out on a real broker: topics weather and activity with 6 partitions keyed by
# station (co-partitioned); three pipelines, each owning two partitions of both, together
# produce exactly the output of one pipeline owning all six, which equals the brute-force
# reference; each instance's memory stays within the single instance's.
# And a cron backfill (scripts/ss-backfill) with --from/--until windows.
bats_require_minimum_version 1.5.0
load helpers

setup_file() {
	kafka_setup_file
	kafka_create_topic weather 6
	kafka_create_topic activity 6
	# 24 stations; readings every 7 s, activities every 5 s, one hour, in time order
	python3 - "$KAFKA_TMP" <<'PY'
import json, sys
d = sys.argv[1]
def rec(t, k, v): return json.dumps({"t": t, "k": k, "v": v}, separators=(",", ":"))
with open(d + "/weather", "w") as w, open(d + "/activity", "w") as a:
    for t in range(0, 3600):
        if t % 7 == 0:
            for s in range(24): w.write(rec(1672531200 + t, "st%d" % s, "w%d.%d" % (s, t)) + "\n")
        if t % 5 == 0:
            for s in range(0, 24, 2): a.write(rec(1672531200 + t, "st%d" % s, "a%d.%d" % (s, t)) + "\n")
PY
	ss-produce -b "$BROKERS" --key .k --timestamp .t weather <"$KAFKA_TMP/weather"
	ss-produce -b "$BROKERS" --key .k --timestamp .t activity <"$KAFKA_TMP/activity"
}
teardown_file() { kafka_teardown_file; }
setup() { T=$(mktemp -d "$KAFKA_TMP/t.XXXXXX"); }

# pipeline NAME N [-p PARTS]: the join of the N partitions given (all without -p), peak
# RSS of ss-asof in $T/NAME.kb
pipeline() {
	local name=$1 n=$2
	shift 2
	/usr/bin/time -f %M -o "$T/$name.kb" ss-asof --on .value.t --by .value.k --retain 2h \
		--right-partitions "$n" \
		--select '{left: .left.value, right: .right.value}' \
		<(ss-consume -b "$BROKERS" -e "$@" activity) <(ss-consume -b "$BROKERS" -e "$@" weather) \
		>"$T/$name.out" 2>"$T/$name.err"
}

@test "three instances owning two partitions each = one instance owning all six = reference" {
	pipeline all 6
	pipeline p01 2 -p 0,1 &
	pipeline p23 2 -p 2,3 &
	pipeline p45 2 -p 4,5 &
	wait %1 %2 %3
	for n in all p01 p23 p45; do
		[ ! -s "$T/$n.err" ] || { echo "$n: $(cat "$T/$n.err")"; return 1; } # nothing late
		[ -s "$T/$n.out" ]
	done
	assert_equal "$(wc -l <"$T/all.out")" "$(wc -l <"$KAFKA_TMP/activity")"
	sort "$T/all.out" >"$T/all.sorted"
	sort "$T"/p??.out >"$T/parts.sorted"
	diff -u "$T/all.sorted" "$T/parts.sorted"
	python3 "$SS_ROOT/tests/asof-ref.py" "$KAFKA_TMP/activity" "$KAFKA_TMP/weather" backward 0 -1 1 |
		sort >"$T/want"
	diff -u "$T/want" "$T/all.sorted"
	for n in p01 p23 p45; do
		[ "$(cat "$T/$n.kb")" -le "$(cat "$T/all.kb")" ] ||
			{ echo "$n: $(cat "$T/$n.kb") kB > $(cat "$T/all.kb") kB"; return 1; }
	done
}

@test "backfill from cron: --from/--until windows, re-runs leave state as one full run" {
	bf() { "$SS_ROOT/scripts/ss-backfill" --offsets-from "$T/db" -b "$BROKERS" "$@" weather \
		-- ss-cache "$T/db" put --key '[.value.k, .value.t]' --value .value; }
	run --separate-stderr bf --from 2023-01-01T00:30:00Z --until 2023-01-01T00:40:00Z
	assert_success
	n=$(jq -s '[.[] | select(.t >= 1672533000 and .t <= 1672533600)] | length' "$KAFKA_TMP/weather")
	assert_equal "$stderr" "ss-backfill: in $n, out 0, late 0, skipped as replays 0"
	run --separate-stderr bf --from 2023-01-01T00:30:00Z --until 2023-01-01T00:40:00Z
	assert_failure 4
	run --separate-stderr bf --from 2023-01-01T00:30:00Z
	assert_success
	# one full run over the same window, from scratch
	ss-consume -b "$BROKERS" -e --from 2023-01-01T00:30:00Z weather |
		ss-cache "$T/ref" put --key '[.value.k, .value.t]' --value .value
	assert_equal "$(ss-cache "$T/db" scan | md5sum)" "$(ss-cache "$T/ref" scan | md5sum)"
	assert_equal "$(ss-cache "$T/db" stats | jq -c .offsets)" "$(ss-cache "$T/ref" stats | jq -c .offsets)"
}
