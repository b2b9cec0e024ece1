#!/usr/bin/env bats
# tests/setup_suite.bash: a process a test leaves holding bats' report open is named and
# stopped at the end of the suite, instead of keeping bats (and CI) waiting for ever.

load helpers

@test "suite guard: a leaked background job is named and stopped; the suite ends" {
	mkdir "$T/s"
	cp "$ROOT/tests/setup_suite.bash" "$T/s/"
	# (printf: a line starting with the test keyword would be a test of this file)
	printf '@%s "leaks" { sleep 600 & }\n@%s "does not leak" { sleep 601 >/dev/null 2>&1 3>&- & }\n' \
		test test >"$T/s/leak.bats"
	# a bats of its own: none of this bats' variables
	run timeout 60 env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$HOME" bats "$T/s"
	pkill -f '^sleep 601$' || true
	[ "$status" -eq 0 ]
	assert_output --partial 'processes left running by a test'
	assert_output --regexp '#  +[0-9]+ .* sleep 600'
	refute_output --partial 'sleep 601'
	# the process named is gone (or a zombie left to be reaped): that pid, not any
	# `sleep 600` of the machine, which another suite may run (integration/registry.bats)
	pid=$(sed -n 's/^#  *\([0-9][0-9]*\) .* sleep 600$/\1/p' <<<"$output")
	[ -n "$pid" ]
	process_gone "$pid"
}
