#!/usr/bin/env bats
# ss-asof with default flags over random Kafka topologies on a real broker, against the
# brute-force reference: the cases of tests/asof-topology.bats (see its top for what a
# seed draws and how each test joins the topics; the steps are in tests/asof-topo.bash)
# on Apache Kafka instead of the mock: partitions 1..8 per topic and side, keyed and
# unkeyed, consumers at different speeds, read while produced, dumps, shuffled dumps.
#
#   SS_TOPO_SEEDS="3 17" bats tests/integration/asof-topology.bats   those seeds only
#                                                   (a failure's repro; add -f 'TEST NAME')
#   SS_SOAK=1 bats tests/integration/asof-topology.bats     the soak: 100 more seeds, from
#                            2000 (SS_SOAK_SEEDS=N, SS_SOAK_FIRST=S for others); an hour
#   SS_TOPO_KEEP=DIR                                        keep a failing case's files
# A few minutes on 2 cores without SS_SOAK (most of it starting Kafka and creating topics).
bats_require_minimum_version 1.5.0
load helpers
load ../asof-topo

SEEDS=$(SS_SOAK_FIRST=${SS_SOAK_FIRST:-2000} SS_SOAK_SEEDS=${SS_SOAK_SEEDS:-100} topo_seed_list $(seq 101 108))

# the broker; every case's topics created at their partition counts, produced and dumped
setup_file() {
	local seed pids=() p
	kafka_setup_file
	topo_gen $SEEDS
	for seed in $SEEDS; do
		topo_plan "$seed"
		echo "$BROKERS" >"$D/tb"
		# two at a time: each is a JVM
		{ kafka_create_topic "$LT" "$PL" && kafka_create_topic "$RT" "$PR"; } >&2 &
		pids+=($!)
		if [ ${#pids[@]} -ge 2 ]; then
			for p in "${pids[@]}"; do wait "$p"; done
			pids=()
		fi
	done
	for p in "${pids[@]}"; do wait "$p"; done
	topo_fill $SEEDS
}
teardown_file() { kafka_teardown_file; }

@test "real broker, read while produced: defer or revise equal the reference" {
	topo_kind trickle any $SEEDS
}

@test "real broker, two consumers at different speeds, default defer: every answer is the reference" {
	topo_kind live2 defer $SEEDS
}

@test "real broker, two consumers at different speeds, revise: the last revisions are the reference" {
	topo_kind live2 revise $SEEDS
}

@test "real broker, one consumer of both topics, default defer: every answer is the reference" {
	topo_kind live1 defer $SEEDS
}

@test "real broker, one consumer of both topics, revise: the last revisions are the reference" {
	topo_kind live1 revise $SEEDS
}

@test "real broker, dumped files, eager, defer and revise: the exact answer" {
	topo_kind files any $SEEDS
}

@test "real broker, shuffled dumps, eager, defer and revise: the exact answer" {
	topo_kind shuffled any $SEEDS
}
