#!/usr/bin/env bats
# ss-asof --order left: defer results in the order of each left partition's offsets (of
# records without envelope, of the left input), however they become final; the same
# results as the default release order, across spills, restarts and --state-dir.

bats_require_minimum_version 1.5.0
load helpers

gen() { python3 "$BATS_TEST_DIRNAME/asof-order-gen.py" "$@"; }
check() { python3 "$BATS_TEST_DIRNAME/asof-order-check.py" "$@"; }
# the right side stalls a moment: the left records arrive first and wait for it
stalled() { sleep 0.3; cat "$T/right"; }
# the right side in slices, so that a run takes a while
trickle() {
	python3 -c 'import sys, time
lines = open(sys.argv[1]).readlines()
for i in range(0, len(lines), 500):
    sys.stdout.write("".join(lines[i:i + 500])); sys.stdout.flush(); time.sleep(0.02)' "$T/right"
}
env_opts=(--left-on .value.t --right-on .value.t --left-by .value.k --right-by .value.k --right-partitions 4)

@test "--order left: records without envelope come out in the order of the left input" {
	gen 5000 1 1 "$T" plain
	opts=(--on .t --by .k)
	ss-asof "${opts[@]}" "$T/left" <(stalled) >"$T/default"
	run --separate-stderr ss-asof "${opts[@]}" --order left "$T/left" <(stalled)
	assert_success
	assert_equal "$stderr" ''
	printf '%s\n' "$output" >"$T/ordered"
	check --shuffled "$T/default" "$T/ordered"
	# exactly the left input's order
	jq -c .left <"$T/ordered" >"$T/got"
	jq -c . "$T/left" >"$T/want"
	cmp "$T/want" "$T/got"
}

@test "--order left: 4 and 12 partitions of envelopes, each in the order of its offsets (every direction)" {
	gen 20000 4 2 "$T" env
	for dir in backward forward nearest; do
		ss-asof "${env_opts[@]}" --direction "$dir" "$T/left" <(stalled) >"$T/default"
		ss-asof "${env_opts[@]}" --direction "$dir" --order left "$T/left" <(stalled) >"$T/ordered"
		check --shuffled "$T/default" "$T/ordered"
	done
	# 12 partitions; and the right stream read first: most answers final on arrival
	gen 20000 12 9 "$T" env
	opts=("${env_opts[@]/#4/12}")
	ss-asof "${opts[@]}" "$T/left" <(stalled) >"$T/default"
	ss-asof "${opts[@]}" --order left "$T/left" <(stalled) >"$T/ordered"
	check --shuffled "$T/default" "$T/ordered"
	ss-asof "${opts[@]}" --order left <(sleep 0.5; cat "$T/left") <(cat "$T/right") >"$T/ordered"
	check "$T/default" "$T/ordered"
	# plain right records, one watermark for all
	gen 20000 4 3 "$T"
	opts=(--left-on .value.t --right-on .t --left-by .value.k --right-by .k)
	ss-asof "${opts[@]}" "$T/left" <(stalled) >"$T/default"
	ss-asof "${opts[@]}" --order left "$T/left" <(stalled) >"$T/ordered"
	check --shuffled "$T/default" "$T/ordered"
}

@test "--order left: two files merged in time order, --direction forward" {
	printf '%s\n' '{"t":1,"k":"a"}' '{"t":2,"k":"b"}' >"$T/l"
	printf '%s\n' '{"t":3,"k":"b"}' '{"t":5,"k":"a"}' >"$T/r"
	run ss-asof --on .t --by .k --direction forward --select '[.left.k, .right.t]' "$T/l" "$T/r"
	assert_output $'["b",3]\n["a",5]'
	run ss-asof --on .t --by .k --direction forward --select '[.left.k, .right.t]' --order left "$T/l" "$T/r"
	assert_success
	assert_output $'["a",5]\n["b",3]'
}

@test "--order left: waiting results beyond the memory bound spill to disk, results unchanged" {
	gen 20000 4 4 "$T" env
	ss-asof "${env_opts[@]}" "$T/left" <(stalled) >"$T/default"
	ss-asof "${env_opts[@]}" --order left "$T/left" <(stalled) >"$T/mem"
	SS_ASOF_SPILL_BYTES=100000 ss-asof "${env_opts[@]}" --order left "$T/left" <(stalled) >"$T/spill"
	# the same results, each partition's in the same order (partitions may interleave
	# otherwise: that depends on when the records are read)
	check "$T/default" "$T/mem"
	check "$T/default" "$T/spill"
	# the oldest record of partition 0 is never final: the others of its partition wait
	# for it, and with --state their results wait in the state file, spilled
	python3 - "$T" <<-'PY'
		import json, sys
		d = sys.argv[1]
		recs = [json.loads(l) for l in open(d + "/left")]
		next(r for r in recs if r["partition"] == 0)["value"]["t"] = 10 ** 9
		with open(d + "/left2", "w") as f:
		    f.writelines(json.dumps(r) + "\n" for r in recs)
	PY
	# (killed once the other partitions' results are out and the waiting ones committed,
	# not after a fixed time: a loaded machine gets less far)
	SS_ASOF_SPILL_BYTES=100000 ss-asof "${env_opts[@]}" --order left --state "$T/s.db" \
		"$T/left2" <(cat "$T/right"; exec sleep 60 3>&-) >"$T/part" 2>/dev/null &
	pid=$!
	want=$(grep -vc '"partition": 0,' "$T/left2")
	for _ in $(seq 600); do
		[ "$(wc -l <"$T/part")" -ge "$want" ] &&
			[ "$(sqlite3 "$T/s.db" 'select count(*) > 4000, sum(spilled) > 3000, sum(revision >= 256) > 4000 from asof_held' 2>/dev/null)" = '1|1|1' ] &&
			break
		sleep 0.1
	done
	kill -9 "$pid"
	wait "$pid" || true
	# the other partitions went on, all of them, past the memory bound
	run sh -c "jq -c .left.partition <'$T/part' | sort -u"
	assert_output $'1\n2\n3'
	assert_equal "$(wc -l <"$T/part")" "$(grep -vc '"partition": 0,' "$T/left2")"
	run sqlite3 "$T/s.db" 'select count(*) > 4000, sum(spilled) > 3000, sum(revision >= 256) > 4000 from asof_held'
	assert_output '1|1|1'
	# the right stream ends: the rest, partition 0 in order
	SS_ASOF_SPILL_BYTES=100000 ss-asof "${env_opts[@]}" --order left --state "$T/s.db" "$T/left2" <(cat "$T/right") \
		>"$T/rest" 2>/dev/null
	ss-asof "${env_opts[@]}" "$T/left2" "$T/right" >"$T/default2"
	check --dedup "$T/default2" "$T/part" "$T/rest"
}

@test "--order left --state: kill -9 mid-run, restart: nothing lost, each partition in order" {
	gen 40000 4 5 "$T" env
	ss-asof "${env_opts[@]}" "$T/left" <(stalled) >"$T/default"
	ss-asof "${env_opts[@]}" --order left --state "$T/s.db" "$T/left" <(trickle) >"$T/out1" 2>/dev/null &
	pid=$!
	for _ in $(seq 1500); do [ "$(wc -l <"$T/out1")" -ge 10000 ] && break; sleep 0.02; done
	kill -9 "$pid"
	wait "$pid" || true
	n1=$(wc -l <"$T/out1")
	[ "$n1" -ge 10000 ] && [ "$n1" -lt 40000 ]
	run --separate-stderr ss-asof "${env_opts[@]}" --order left --state "$T/s.db" "$T/left" <(trickle)
	assert_success
	printf '%s\n' "$output" >"$T/out2"
	[[ "$stderr" == *"replayed "* ]]
	# each run's output in order, and both together (a result written again after the
	# kill counts where it came first: at least once)
	check --dedup "$T/default" "$T/out1" "$T/out2"
}

@test "--order left --state-dir: each partition's results in the order of its offsets" {
	gen 20000 4 6 "$T" env
	ss-asof "${env_opts[@]}" "$T/left" <(stalled) >"$T/default"
	SS_ASOF_SPILL_BYTES=20000 ss-asof "${env_opts[@]}" --order left --state-dir "$T/sd" "$T/left" <(stalled) >"$T/ordered"
	check --shuffled "$T/default" "$T/ordered"
}

@test "--order left --max-delay: results written early keep the order too" {
	gen 2000 2 7 "$T" env
	run --separate-stderr ss-asof "${env_opts[@]}" --order left --max-delay 200ms "$T/left" <(sleep 1.5; cat "$T/right")
	assert_success
	printf '%s\n' "$output" >"$T/ordered"
	grep -q '"final":false' "$T/ordered"
	[[ "$stderr" == *"--max-delay"* ]]
	python3 - "$T/ordered" <<-'PY'
		import json, sys
		last = {}
		for l in open(sys.argv[1]):
		    left = json.loads(l)["left"]
		    assert left["offset"] > last.get(left["partition"], -1), l
		    last[left["partition"]] = left["offset"]
		assert sum(last.values()) + len(last) == 2000
	PY
}

@test "--order: eager and revise are unchanged by it; usage" {
	gen 3000 2 8 "$T" env
	# the right stream is read before the left records come: the same answers each run
	for emit in eager revise; do
		ss-asof "${env_opts[@]}" --emit "$emit" <(sleep 0.5; cat "$T/left") "$T/right" >"$T/a" 2>/dev/null
		ss-asof "${env_opts[@]}" --emit "$emit" --order left <(sleep 0.5; cat "$T/left") "$T/right" >"$T/b" 2>/dev/null
		cmp "$T/a" "$T/b"
	done
	# defer's default is --order release
	ss-asof "${env_opts[@]}" "$T/left" "$T/right" >"$T/a"
	ss-asof "${env_opts[@]}" --order release "$T/left" "$T/right" >"$T/b"
	cmp "$T/a" "$T/b"
	test_must_fail 2 ss-asof --on .t --order offset "$T/left" "$T/right"
	assert_output --partial "--order offset: expected release or left"
}
