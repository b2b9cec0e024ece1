#!/usr/bin/env bats
# ss-checkpoint against a brute-force reference (tests/checkpoint-ref.py, which says what
# a downtime is, when it starts and when it recovers): random topologies on the mock
# broker, 1-8 partitions for the dependent topic and for the dependency, records keyed or
# not, each topic read with `ss-consume -e` so that its partitions come one after
# another. The downtime episodes ss-checkpoint reports equal those computed from all
# records in event-time order. Seeds 1..SS_CHECKPOINT_SEEDS (default 30, about a minute);
# SS_CHECKPOINT_SOAK=N runs N more, from a seed of the clock (printed). KEEP=DIR keeps a
# copy of the scratch directory (each seed's records, reference, events, state file).

load helpers

setup() {
	common_setup
	for t in ss-consume ss-produce ss-mock-broker ss-checkpoint; do
		[ -x "$ROOT/bin/$t" ] || skip "bin/$t not built"
	done
	export SS_FEED_DIR="$T/feed" # the feed files of this test's pipes go with $T
	BROKER=
	PULSE=
}
teardown() {
	[ -n "$PULSE" ] && kill "$PULSE" 2>/dev/null
	[ -n "$BROKER" ] && kill "$BROKER" 2>/dev/null
	[ -z "${KEEP:-}" ] || cp -r "$T" "$KEEP"
	common_teardown
}

# wait_for SECONDS CMD...: poll CMD every 0.05 s
wait_for() {
	local n=$(($1 * 20))
	shift
	for _ in $(seq "$n"); do "$@" && return 0; sleep 0.05; done
	return 1
}

# broker SEED: a mock cluster with the seed's two topics (one for several seeds would
# start slowly: the mock creates topics in time that grows faster than their number);
# sets B
broker() {
	local d="$T/s$1" na nw

	[ -z "$BROKER" ] || { kill "$BROKER"; wait "$BROKER" || true; }
	read -r na nw _ <"$d/topo"
	ss-mock-broker --no-stdin --topic "act$1:$na" --topic "wx$1:$nw" >"$d/broker.out" 2>"$d/broker.err" &
	BROKER=$!
	wait_for 10 grep -q '^BROKERS=' "$d/broker.out"
	B=$(sed -n 's/^BROKERS=//p' "$d/broker.out")
}

not_running() { ! kill -0 "$1" 2>/dev/null; }
count() { grep -c "\"event\":\"$1\"" "$2" || true; }
# the pulse ended, or paused: a downtime not recovered yet
settled() { not_running "$PULSE" || [ "$(count downtime "$1")" -gt "$(count recovery "$1")" ]; }

# play SEED: every run of the seed in turn, the events line count after each in steps
play() {
	local s=$1 d="$T/s$1" f run topic keyed key
	local na nw ka kw
	read -r na nw ka kw _ <"$d/topo"
	: >"$d/events"
	for f in "$d"/run-*; do
		run=${f##*/run-}
		topic=${run#*-}
		keyed=$ka
		[ "$topic" = wx ] && keyed=$kw
		key=()
		[ "$keyed" = 1 ] && key=(--key .k)
		ss-produce -b "$B" "${key[@]}" "$topic$s" <"$f"
		if [ "$topic" = wx ]; then
			ss-consume -e -b "$B" --offsets-from "$d/st.db" "wx$s" |
				timeout 20 ss-checkpoint "$d/st.db" heartbeat act wx --ts .value.t >/dev/null 2>>"$d/err" ||
				{ echo "seed $s: heartbeat failed" >&2; return 1; }
			if [ -n "$PULSE" ]; then # paused: this run of the dependency lets it go on
				wait_for 20 not_running "$PULSE" || { echo "seed $s: no recovery after ${run%%-*}" >&2; return 1; }
				wait "$PULSE" || { echo "seed $s: pulse failed" >&2; return 1; }
				PULSE=
			fi
		else
			ss-consume -e -b "$B" --offsets-from "$d/st.db" "act$s" |
				ss-checkpoint "$d/st.db" pulse act --dependency wx=30m --ts .value.t \
					--events "$d/events" >/dev/null 2>>"$d/err" &
			PULSE=$!
			wait_for 20 settled "$d/events" || { echo "seed $s: pulse stuck in ${run%%-*}" >&2; return 1; }
			if not_running "$PULSE"; then
				wait "$PULSE" || { echo "seed $s: pulse failed" >&2; return 1; }
				PULSE=
			fi
		fi
		echo "${run%%-*} $(wc -l <"$d/events")" >>"$d/steps"
	done
	[ -z "$PULSE" ] || { echo "seed $s: paused at the end" >&2; return 1; }
	# the writers told their partitions: the rule before them was never in use
	! grep -q "nothing says which partitions" "$d/err" || { echo "seed $s:" >&2; cat "$d/err" >&2; return 1; }
	python3 "$BATS_TEST_DIRNAME/checkpoint-ref.py" check "$d" || { echo "seed $s (topology: $(cat "$d/topo"))" >&2; return 1; }
}

# check SEED...: for each seed, its topology, records and reference; play it
check() {
	local s
	for s in "$@"; do
		mkdir "$T/s$s"
		python3 "$BATS_TEST_DIRNAME/checkpoint-ref.py" gen "$s" "$T/s$s"
		broker "$s"
		play "$s" || return 1
	done
}

@test "downtime episodes over topics of 1-8 partitions, read partition after partition, equal the reference's (event-time order)" {
	check $(seq 1 "${SS_CHECKPOINT_SEEDS:-30}")
}

@test "soak: more random seeds (SS_CHECKPOINT_SOAK=N)" {
	[ -n "${SS_CHECKPOINT_SOAK:-}" ] || skip "SS_CHECKPOINT_SOAK=N runs N more seeds"
	local base=$(($(date +%s) % 100000 * 100))
	echo "# seeds from $base" >&3
	check $(seq "$base" $((base + SS_CHECKPOINT_SOAK - 1)))
}
