# Processes a test started, and whether they are gone: sourced by tests/helpers.bash and
# tests/integration/helpers.bash alike.

# process_gone PID: no such process, or one that has ended and waits to be reaped (a
# zombie answers kill -0; init here may take its time to reap one)
process_gone() {
	local state
	state=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) || return 0
	[ -z "$state" ] || [ "${state%% *}" = Z ]
}

# stop_process PID: SIGTERM, then wait (5 s at most) until PID is gone, so that a file's
# teardown leaves nothing running behind it (setup_suite.bash names what it finds)
stop_process() {
	local i
	kill "$1" 2>/dev/null || return 0
	for ((i = 0; i < 100; i++)); do process_gone "$1" && return 0; sleep 0.05; done
	return 0
}
