# bats runs this around the whole suite (it finds setup_suite.bash beside the first file).
#
# bats reads the tests' report from a pipe until every writer has closed it. A process a
# test left running with that pipe open (a background job without `3>&-`, a child of a
# killed script(1)) keeps bats waiting after the last test, for ever: a CI run ends in its
# time limit with every test passed. teardown_suite finds such processes, names them in
# the report and stops them, so the suite ends and the leak can be fixed.

setup_suite() { :; }

teardown_suite() {
	local pipe pid listing left=()
	pipe=$(readlink /proc/$$/fd/3) || return 0
	for pid in $(suite_pipe_writers "$pipe"); do
		suite_descends_from "$pid" $$ && continue
		left+=("$pid")
	done
	[ ${#left[@]} -gt 0 ] || return 0
	listing=$(ps -o pid=,lstart=,args= -p "$(IFS=,; echo "${left[*]}")") || return 0
	printf '# teardown_suite: processes left running by a test, holding bats%s report open:\n%s\n' \
		"'" "$(sed 's/^/#   /' <<<"$listing")" >&3
	kill "${left[@]}" 2>/dev/null
	sleep 1
	kill -9 "${left[@]}" 2>/dev/null
	return 0
}

# suite_pipe_writers PIPE: the processes with PIPE ("pipe:[N]") open for writing
suite_pipe_writers() {
	local fd pid flags
	for fd in /proc/[0-9]*/fd/*; do
		[ "$(readlink "$fd" 2>/dev/null)" = "$1" ] || continue
		pid=${fd#/proc/}
		pid=${pid%%/*}
		flags=$(sed -n 's/^flags:[[:space:]]*//p' "/proc/$pid/fdinfo/${fd##*/}" 2>/dev/null)
		# O_ACCMODE: 1 is O_WRONLY (the report's readers open it 0, O_RDONLY)
		[ -n "$flags" ] && [ $((8#$flags & 3)) -eq 1 ] && echo "$pid"
	done | sort -un
}

# suite_descends_from PID ANCESTOR: PID is ANCESTOR or one of its descendants
suite_descends_from() {
	local p=$1
	while [ -n "$p" ] && [ "$p" -gt 1 ]; do
		[ "$p" = "$2" ] && return 0
		p=$(awk '/^PPid:/ { print $2 }' "/proc/$p/status" 2>/dev/null)
	done
	return 1
}
