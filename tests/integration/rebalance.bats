#!/usr/bin/env bats
# Partitions moving between running instances on a real broker (group mode, -G): instances
# of one pipeline share a state directory on one host (ss-cache / ss-asof --state-dir, one
# file per partition; ss-consume --offsets-from DIR). One instance is killed with SIGKILL,
# or one is added, while a producer keeps writing: the others take its partitions over
# from the state directory, and the end state equals one uninterrupted run, with nothing
# lost and nothing applied twice.
bats_require_minimum_version 1.5.0
load helpers

# a short session so that a killed member's partitions move within seconds
GROUP_OPTS=(-X session.timeout.ms=6000 -X heartbeat.interval.ms=500)

setup_file() { kafka_setup_file; }
teardown_file() { kafka_teardown_file; }
setup() {
	T=$(mktemp -d "$KAFKA_TMP/t.XXXXXX")
	pids=()
}
# whatever a failed test left running
teardown() {
	local p
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
}

# produce_live TOPIC SECONDS: in the background, 24 stations (keyed, so a station stays in
# its partition) with one reading each every 50 ms; the records also go to $T/TOPIC.in.
produce_live() {
	{ python3 -u - "$2" | tee "$T/$1.in" | ss-produce -b "$BROKERS" --key .k "$1"; } 3>&- <<'PY' &
import json, sys, time
n, end = 0, time.time() + float(sys.argv[1])
while time.time() < end:
    for s in range(24):
        print(json.dumps({"k": "st%d" % s, "n": n}, separators=(",", ":")))
        n += 1
    time.sleep(0.05)
PY
	producer=$!
	pids+=("$producer")
}

# cache_instance N TOPIC: ss-consume -G | ss-cache --state-dir $T/dir put --tee, through a
# fifo so that each process has its pid ($T/consume.N.pid, $T/cache.N.pid).
cache_instance() {
	local n=$1 topic=$2
	mkfifo "$T/pipe.$n"
	ss-consume -b "$BROKERS" -G "g-$topic" "${GROUP_OPTS[@]}" --offsets-from "$T/dir" "$topic" \
		>"$T/pipe.$n" 2>"$T/consume.$n.err" 3>&- &
	echo $! >"$T/consume.$n.pid"
	pids+=($!)
	ss-cache --state-dir "$T/dir" put --key '[.value.k, .value.n]' --value .value --tee \
		<"$T/pipe.$n" >"$T/tee.$n" 2>"$T/cache.$n.err" 3>&- &
	echo $! >"$T/cache.$n.pid"
	pids+=($!)
}

# stop_instance N [SINK]: SIGTERM to the consumer (flush, commit, leave); the sink
# (cache, or asof) ends with its input.
stop_instance() {
	kill -TERM "$(cat "$T/consume.$1.pid")"
	wait_gone "$(cat "$T/consume.$1.pid")" 30
	wait_gone "$(cat "$T/${2:-cache}.$1.pid")" 30
}

# wait_gone PID SECONDS
wait_gone() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	echo "process $1 did not exit" >&2
	return 1
}

# wait_output FILE SECONDS: until FILE is not empty
wait_output() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		[ -s "$1" ] && return 0
		sleep 0.1
	done
	echo "nothing in $1 after $2 s" >&2
	return 1
}

# applied: "partition offset" lines, the state directory's applied offsets
applied() {
	ss-cache --state-dir "$T/dir" stats | jq -r '.offsets[] | "\(.partition) \(.offset)"'
}

# wait_applied TOPIC SECONDS: until the state has applied the last record of each partition
wait_applied() {
	local i want
	want=$(ss-consume -b "$BROKERS" -e -o -1 "$1" | jq -r '"\(.partition) \(.offset)"' | sort)
	for ((i = 0; i < $2 * 5; i++)); do
		[ "$(applied | sort)" = "$want" ] && return 0
		sleep 0.2
	done
	echo "applied: $(applied | tr '\n' ' '), last records: $(echo "$want" | tr '\n' ' ')" >&2
	return 1
}

# check_cache_state TOPIC: the state directory equals one uninterrupted run over the topic,
# and holds every produced record once.
check_cache_state() {
	ss-consume -b "$BROKERS" -e "$1" | ss-cache "$T/ref.db" put --key '[.value.k, .value.n]' --value .value
	assert_equal "$(ss-cache --state-dir "$T/dir" stats | jq .keys)" "$(wc -l <"$T/$1.in")"
	assert_equal "$(ss-cache --state-dir "$T/dir" scan | md5sum)" "$(ss-cache "$T/ref.db" scan | md5sum)"
	assert_equal "$(ss-cache --state-dir "$T/dir" stats | jq -c .offsets)" \
		"$(ss-cache "$T/ref.db" stats | jq -c .offsets)"
	# one file per partition
	assert_equal "$(cd "$T/dir" && ls -- *.db | sort | tr '\n' ' ')" \
		"$(for p in 0 1 2 3 4 5; do printf '%s-%d.db ' "$1" $p; done)"
}

# no_twice FILE...: no record (partition, offset) in the --tee outputs twice
no_twice() {
	local dups
	dups=$(cat "$@" | jq -r '"\(.partition) \(.offset)"' | sort | uniq -d | wc -l)
	[ "$dups" -eq 0 ] || { echo "$dups records applied twice" >&2; return 1; }
}

@test "ss-cache: three instances, one killed with SIGKILL mid-run: its partitions are taken over, nothing lost or applied twice" {
	topic=$(kafka_topic_name wx)
	kafka_create_topic "$topic" 6
	produce_live "$topic" 16
	for n in 1 2 3; do cache_instance $n "$topic"; done
	for n in 1 2 3; do wait_output "$T/tee.$n" 30; done
	sleep 2
	# what instance 2 owns now: the partitions of its latest records
	victim_parts=$(tail -n 48 "$T/tee.2" | jq -r .partition | sort -u | tr '\n' ' ')
	[ -n "$victim_parts" ]
	kill -9 "$(cat "$T/consume.2.pid")" "$(cat "$T/cache.2.pid")"
	killed=$(date +%s%N)
	before=$(applied)
	# takeover: every partition of the victim advances again, applied by another instance
	for ((i = 0; i < 300; i++)); do
		moved=0
		for p in $victim_parts; do
			[ "$(applied | awk -v p="$p" '$1 == p {print $2}')" -gt \
				"$(echo "$before" | awk -v p="$p" '$1 == p {print $2}')" ] && moved=$((moved + 1))
		done
		[ "$moved" -eq "$(echo $victim_parts | wc -w)" ] && break
		sleep 0.1
	done
	takeover_ms=$((($(date +%s%N) - killed) / 1000000))
	echo "# partitions $victim_parts taken over $takeover_ms ms after the SIGKILL" >&3
	[ "$moved" -eq "$(echo $victim_parts | wc -w)" ]
	wait "$producer"
	wait_applied "$topic" 60
	stop_instance 1
	stop_instance 3
	check_cache_state "$topic"
	# the survivors applied no record twice (the victim's --tee may hold a batch it had
	# written out but not committed when killed: at least once, like Kafka delivery)
	no_twice "$T/tee.1" "$T/tee.3"
	run cat "$T/cache.1.err" "$T/cache.3.err"
	assert_output ''
	run cat "$T/consume.1.err" "$T/consume.3.err"
	refute_output --partial 'handing them over'
}

@test "ss-cache: instances added mid-run take partitions over; nothing lost, nothing applied twice" {
	topic=$(kafka_topic_name wx)
	kafka_create_topic "$topic" 6
	produce_live "$topic" 14
	cache_instance 1 "$topic"
	wait_output "$T/tee.1" 30
	sleep 2
	for n in 2 3; do
		started=$(date +%s%N)
		cache_instance $n "$topic"
		wait_output "$T/tee.$n" 30
		echo "# instance $n applying records $((($(date +%s%N) - started) / 1000000)) ms after its start" >&3
		sleep 2
	done
	wait "$producer"
	wait_applied "$topic" 60
	for n in 1 2 3; do stop_instance $n; done
	check_cache_state "$topic"
	no_twice "$T"/tee.?
	# between them they applied every record once: the --tee outputs are the state
	assert_equal "$(cat "$T"/tee.? | wc -l)" "$(wc -l <"$T/$topic.in")"
	run cat "$T"/cache.?.err
	assert_output ''
	run cat "$T"/consume.?.err
	refute_output --partial 'handing them over'
}

# ---- ss-asof --state-dir ----
#
# The left and right partitions P must go to the same instance, which holds
# DIR/partition-P.db (a lock). Two consumers in two groups do not ensure it: the range
# assignor orders the members by member id, a random one per consumer, so the two groups
# can deal the partition numbers out differently; with static member ids
# (group.instance.id) they would agree once both have settled, but the two groups
# rebalance at different moments, and in between an instance gets left P while another has
# right P. One consumer subscribed to both topics in one group does: the range assignor
# gives each member the same partition numbers of co-partitioned topics, in the same
# rebalance. ss-asof reads its output as one input (--left-topic, --right-topic).

# produce_pair ACTIVITY WEATHER SECONDS: in the background, both topics keyed by station
# (co-partitioned) in event-time order, as one tick per 20 ms of wall-clock time: 24
# readings every 7 ticks, 12 activities every 5; the values also go to $T/TOPIC.in.
produce_pair() {
	python3 - "$BROKERS" "$1" "$2" "$3" "$T" 3>&- <<'PY' &
import json, subprocess, sys, time
brokers, act, wx, secs, d = sys.argv[1:6]
def producer(topic):
    return subprocess.Popen(["ss-produce", "-b", brokers, "--key", ".k", topic],
                            stdin=subprocess.PIPE, text=True)
pa, pw = producer(act), producer(wx)
fa, fw = open("%s/%s.in" % (d, act), "w"), open("%s/%s.in" % (d, wx), "w")
def put(p, f, t, k, v):
    line = json.dumps({"t": t, "k": k, "v": v}, separators=(",", ":")) + "\n"
    p.stdin.write(line)
    f.write(line)
i, end = 0, time.time() + float(secs)
while time.time() < end:
    t = 1672531200 + i
    if i % 7 == 0:
        for s in range(24): put(pw, fw, t, "st%d" % s, "w%d.%d" % (s, t))
    if i % 5 == 0:
        for s in range(0, 24, 2): put(pa, fa, t, "st%d" % s, "a%d.%d" % (s, t))
    pa.stdin.flush()
    pw.stdin.flush()
    i += 1
    time.sleep(0.02)
for p in (pa, pw): p.stdin.close()
sys.exit(max(pa.wait(), pw.wait()))
PY
	producer=$!
	pids+=("$producer")
}

ASOF_OPTS=(--on .value.t --by .value.k --idle 2s --select '{left: .left.value, right: .right.value, revision}')

# asof_instance N MODE ACTIVITY WEATHER: ss-consume -G (both topics) |
# ss-asof --left-topic --right-topic --state-dir $T/adir --emit MODE > $T/out.N;
# pids in $T/{consume,asof}.N.pid
asof_instance() {
	local n=$1 mode=$2 act=$3 wx=$4
	mkfifo "$T/cpipe.$n"
	ss-asof "${ASOF_OPTS[@]}" --emit "$mode" --state-dir "$T/adir" --left-topic "$act" --right-topic "$wx" \
		"$T/cpipe.$n" >"$T/out.$n" 2>"$T/asof.$n.err" 3>&- &
	echo $! >"$T/asof.$n.pid"
	pids+=($!)
	ss-consume -b "$BROKERS" -G "g-$act" "${GROUP_OPTS[@]}" --offsets-from "$T/adir" \
		"$act" "$wx" >"$T/cpipe.$n" 2>"$T/consume.$n.err" 3>&- &
	echo $! >"$T/consume.$n.pid"
	pids+=($!)
}

kill_asof() {
	kill -9 "$(cat "$T/consume.$1.pid")" "$(cat "$T/asof.$1.pid")"
}

# asof_applied TOPIC: "partition offset" lines applied in $T/adir for TOPIC
asof_applied() {
	local db
	for db in "$T"/adir/partition-*.db; do
		[ -e "$db" ] || continue
		sqlite3 -separator ' ' "$db" "SELECT partition, offset FROM ss_offsets WHERE topic = '$1'"
	done
}

# wait_asof_applied TOPIC SECONDS: until the last record of each partition is applied
wait_asof_applied() {
	local i want
	want=$(ss-consume -b "$BROKERS" -e -o -1 "$1" | jq -r '"\(.partition) \(.offset)"' | sort)
	for ((i = 0; i < $2 * 5; i++)); do
		[ "$(asof_applied "$1" | sort)" = "$want" ] && return 0
		sleep 0.2
	done
	echo "$1 applied: $(asof_applied "$1" | sort | tr '\n' ' '), last records: $(echo "$want" | tr '\n' ' ')" >&2
	tail -n 3 "$T"/*.err >&2
	return 1
}

# latest FILE...: the latest revision of each left record's result, sorted; two different
# results with the same revision are an error
latest() {
	python3 -c '
import json, sys
best = {}
for f in sys.argv[1:]:
    for line in open(f):
        o = json.loads(line)
        k, rev = json.dumps(o["left"], separators=(",", ":")), o["revision"] or 0
        r = json.dumps({"left": o["left"], "right": o["right"]}, separators=(",", ":"))
        if k in best and best[k][0] == rev and best[k][1] != r:
            sys.exit("revision %d of %s: %s and %s" % (rev, k, best[k][1], r))
        if k not in best or rev > best[k][0]:
            best[k] = (rev, r)
print("\n".join(sorted(r for _, r in best.values())))' "$@"
}

# check_asof MODE ACTIVITY WEATHER OUT...: the latest results of OUT... equal one
# uninterrupted run and the reference
check_asof() {
	local mode=$1 act=$2 wx=$3
	shift 3
	ss-asof "${ASOF_OPTS[@]}" --emit "$mode" --state-dir "$T/one" \
		<(ss-consume -b "$BROKERS" -e "$act") <(ss-consume -b "$BROKERS" -e "$wx") >"$T/one.out"
	latest "$T/one.out" >"$T/one.latest"
	assert_equal "$(wc -l <"$T/one.latest")" "$(wc -l <"$T/$act.in")"
	python3 "$SS_ROOT/tests/asof-ref.py" "$T/$act.in" "$T/$wx.in" backward 0 -1 1 | sort >"$T/want"
	diff -u "$T/want" "$T/one.latest"
	latest "$@" >"$T/all.latest"
	diff -u "$T/want" "$T/all.latest"
}

@test "ss-asof --state-dir, --emit revise: three instances, one killed with SIGKILL mid-run: latest results equal one run and the reference" {
	ss-asof -h | grep -q -- --state-dir || skip "needs ss-asof --state-dir"
	act=$(kafka_topic_name act)
	wx=$(kafka_topic_name wx)
	kafka_create_topic "$act" 6
	kafka_create_topic "$wx" 6
	produce_pair "$act" "$wx" 16
	for n in 1 2 3; do asof_instance $n revise "$act" "$wx"; done
	for n in 1 2 3; do wait_output "$T/out.$n" 30; done
	sleep 2
	kill_asof 2
	killed=$(date +%s%N)
	before=$(asof_applied "$act")
	# takeover: every partition advances again (the victim's once another instance has it)
	for ((i = 0; i < 300; i++)); do
		moved=$(join <(echo "$before" | sort) <(asof_applied "$act" | sort) | awk '$3 > $2' | wc -l)
		[ "$moved" -eq 6 ] && break
		sleep 0.1
	done
	echo "# ss-asof: every partition advancing again $((($(date +%s%N) - killed) / 1000000)) ms after the SIGKILL" >&3
	[ "$moved" -eq 6 ]
	wait "$producer"
	wait_asof_applied "$act" 60
	wait_asof_applied "$wx" 60
	stop_instance 1 asof
	stop_instance 3 asof
	check_asof revise "$act" "$wx" "$T"/out.?
	run cat "$T/consume.1.err" "$T/consume.3.err"
	refute_output --partial 'handing them over'
}

@test "ss-asof --state-dir, --emit defer: instances added mid-run: every result once, equal to one run and the reference" {
	ss-asof -h | grep -q -- --state-dir || skip "needs ss-asof --state-dir"
	act=$(kafka_topic_name act)
	wx=$(kafka_topic_name wx)
	kafka_create_topic "$act" 6
	kafka_create_topic "$wx" 6
	produce_pair "$act" "$wx" 14
	asof_instance 1 defer "$act" "$wx"
	wait_output "$T/out.1" 30
	sleep 2
	for n in 2 3; do
		started=$(date +%s%N)
		asof_instance $n defer "$act" "$wx"
		wait_output "$T/out.$n" 30
		echo "# ss-asof instance $n emitting $((($(date +%s%N) - started) / 1000000)) ms after its start" >&3
		sleep 2
	done
	wait "$producer"
	wait_asof_applied "$act" 60
	wait_asof_applied "$wx" 60
	for n in 1 2 3; do stop_instance $n asof; done
	# a stopped consumer is not the end of the weather: what defer still held stays in
	# the state, and a bounded run over what the topics hold answers it
	ss-consume -b "$BROKERS" -e --offsets-from "$T/adir" "$act" "$wx" |
		ss-asof "${ASOF_OPTS[@]}" --emit defer --state-dir "$T/adir" --left-topic "$act" --right-topic "$wx" - >"$T/out.4"
	check_asof defer "$act" "$wx" "$T"/out.?
	# no crash: each left record emitted once over all instances
	assert_equal "$(cat "$T"/out.? | wc -l)" "$(wc -l <"$T/$act.in")"
	run cat "$T"/consume.?.err
	refute_output --partial 'handing them over'
}
