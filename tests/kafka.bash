# Helpers for the Kafka suites: a mock cluster per test file (ss-mock-broker), and
# bounded waits. Load after helpers: `load helpers; load kafka`.

# mock_start [--topic NAME:PARTITIONS]...: start a mock cluster for the file; exports B.
mock_start() {
	local dir=$BATS_FILE_TMPDIR
	ss-mock-broker --no-stdin "$@" </dev/null >"$dir/mock.out" 2>"$dir/mock.err" 3>&- &
	echo $! >"$dir/mock.pid"
	B=
	for _ in $(seq 300); do
		B=$(sed -n 's/^BROKERS=//p' "$dir/mock.out")
		[ -n "$B" ] && break
		sleep 0.1
	done
	[ -n "$B" ] || { echo "ss-mock-broker did not start: $(cat "$dir/mock.err")" >&2; return 1; }
	export B
}
mock_stop() {
	local pid
	pid=$(cat "$BATS_FILE_TMPDIR/mock.pid" 2>/dev/null) && stop_process "$pid"
	return 0
}

# wait_lines FILE N [SECONDS]: wait until FILE has at least N lines (default 20 s).
wait_lines() {
	local i limit=$(( ${3:-20} * 10 ))
	for ((i = 0; i < limit; i++)); do
		[ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ] && return 0
		sleep 0.1
	done
	echo "timed out waiting for $2 lines in $1 (have $(wc -l <"$1" 2>/dev/null))" >&2
	return 1
}

# wait_exit PID [SECONDS]: wait for a background process to end; its status in $wait_status.
wait_exit() {
	local i limit=$(( ${2:-20} * 10 ))
	for ((i = 0; i < limit; i++)); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$1" 2>/dev/null; then
		kill -9 "$1"
		echo "process $1 did not exit" >&2
		return 1
	fi
	wait_status=0
	wait "$1" || wait_status=$?
}

# seq_json N: N lines {"n":0}... (by awk: a shell loop runs bats' DEBUG trap per command,
# 8 s for 20,000 lines)
seq_json() {
	awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) printf "{\"n\":%d}\n", i }'
}

# on_terminal OUT CMD: run the shell command CMD in the background with its standard
# streams on a terminal (a pty of script(1)); what it prints goes to OUT. Sets $tty_pid.
on_terminal() {
	local out=$1
	shift
	script -qec "$*" /dev/null </dev/null >"$out" 2>&1 &
	tty_pid=$!
}

# ms_since START: milliseconds since START (from `date +%s%N`)
ms_since() {
	echo $(( ($(date +%s%N) - $1) / 1000000 ))
}
