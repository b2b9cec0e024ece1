#!/usr/bin/env bats
# A short run of tests/torture/pipeline.py (make torture runs the long one): the full
# consume -> asof -> produce pipeline on its own real broker, a consumer or ss-asof
# SIGKILLed at random moments and restarted; nothing lost, nothing applied twice, the
# compacted output equal to an uninterrupted run's and to the brute-force join.
load helpers

@test "pipeline crash harness: every emit mode survives kills of a consumer or ss-asof" {
	command -v java >/dev/null || skip "no java"
	run env SEED=7 KILLS=6 PIPE_RECORDS=5000 "$SS_ROOT/tests/torture/pipeline.py" defer revise eager
	echo "$output"
	assert_success
	for mode in defer revise eager; do
		assert_line --regexp "^crash pipe-$mode ok: seed 7, ([6-9]|[1-9][0-9]+) kills"
	done
}
