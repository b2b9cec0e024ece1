#!/usr/bin/env bats
# A short run of the crash-safety harness (tests/torture/crash.py; make torture runs the
# long one): SIGKILL at random moments, restart with replay, invariants after every kill.
load helpers

@test "crash harness: ss-cache put survives SIGKILL with nothing lost or applied twice" {
	run env SEED=7 KILLS=6 RECORDS=20000 "$ROOT/tests/torture/crash.py" cache cache-tee statedir
	echo "$output"
	assert_success
	assert_line --regexp '^crash cache +ok: seed 7, ([6-9]|[1-9][0-9]+) kills'
	assert_line --partial '0 records lost'
}

@test "crash harness: a state file past RLIMIT_FSIZE fails clearly and a restart completes" {
	run env SEED=7 KILLS=6 RECORDS=20000 TORTURE_FSIZE=1 "$ROOT/tests/torture/crash.py" diskfull
	echo "$output"
	assert_success
	assert_line --regexp '^crash diskfull +ok: seed 7, 9 disk-full stops'
}
