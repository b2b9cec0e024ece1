#!/usr/bin/env bats
# The shared library on its own (tests/unit/unit.c) and its NDJSON behaviour through a tool.
load helpers

# (on each of the scanner's paths: AVX-512 and AVX2 where the CPU has them, SSE2, the
# portable loop)
@test "lib unit tests: time, durations, JSON scanner, paths, key order, envelopes, expressions" {
	# the four widths at once: ~4 s each (24 s under ASan), one core each
	local simd widths=(avx512 avx2 sse2 portable) pids=()
	for simd in "${widths[@]}"; do
		SS_SIMD=$simd "$ROOT/build/current/tests/unit" >"$T/unit.$simd" 2>&1 &
		pids+=($!)
	done
	for i in "${!widths[@]}"; do
		wait "${pids[i]}" || { echo "SS_SIMD=${widths[i]}: exit $?"; cat "$T/unit.${widths[i]}"; false; }
		run cat "$T/unit.${widths[i]}"
		assert_output --regexp '^[0-9]+ passed, 0 failed$'
	done
}

@test "lines of any length: a 20 MB record passes through" {
	python3 -c 'import json; print(json.dumps({"key": "big", "blob": "x" * 20000000}))' >"$T/in"
	ss-cache "$T/st.db" put --tee <"$T/in" >"$T/out"
	cmp "$T/in" "$T/out"
	[ "$(ss-cache "$T/st.db" get '"big"' | wc -c)" -eq "$(wc -c <"$T/in")" ]
}

@test "a trickle reaches the next process within 100 ms" {
	mkfifo "$T/in"
	ss-cache "$T/st.db" put --key .n --tee <"$T/in" >"$T/out" &
	exec 7>"$T/in"
	echo '{"n":0}' >&7
	for _ in $(seq 100); do [ -s "$T/out" ] && break; sleep 0.01; done
	for n in 1 2 3; do
		start=$(date +%s%N)
		echo "{\"n\":$n}" >&7
		while [ "$(wc -l <"$T/out")" -le "$n" ]; do
			[ $(( ($(date +%s%N) - start) / 1000000 )) -lt 1000 ] || break
			sleep 0.005
		done
		ms=$(( ($(date +%s%N) - start) / 1000000 ))
		echo "record $n after ${ms} ms" >&3
		[ "$ms" -lt 100 ]
	done
	exec 7>&-
	wait
}

@test "CRLF line ends and blank lines are accepted" {
	printf '{"key":"a"}\r\n\n   \n{"key":"b"}\r\n' | ss-cache "$T/st.db" put
	run ss-cache "$T/st.db" scan
	assert_output "$(printf '{"key":"a","value":{"key":"a"}}\n{"key":"b","value":{"key":"b"}}')"
}
