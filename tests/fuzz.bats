#!/usr/bin/env bats
# Replays the fuzz corpus (seeds and every regression input found by tests/fuzz/run)
# through each fuzz target built without libFuzzer, with the normal compiler: the
# properties of tests/fuzz/fuzz_*.c hold on every input, with no clang needed.
load helpers

setup_file() {
	export FUZZBIN="$BATS_FILE_TMPDIR/fuzz"
	mkdir -p "$FUZZBIN"
	# link like the library was built (make SANITIZE=1 puts ASan+UBSan objects in it)
	san=
	if built_sanitized; then
		san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
	fi
	for src in "$ROOT"/tests/fuzz/fuzz_*.c; do
		t=$(basename "$src" .c)
		# shellcheck disable=SC2086
		cc $san -std=c11 -g -O1 -D_GNU_SOURCE -I"$ROOT/lib" -I"$ROOT/tests/fuzz" -o "$FUZZBIN/$t" \
			"$src" "$ROOT/tests/fuzz/replay.c" "$LIBSS" -lrdkafka -lsqlite3 -ljq -lavro -ljansson -lcurl -lm -lpthread
	done
}

replay() {
	run "$FUZZBIN/fuzz_$1" "$ROOT/tests/fuzz/corpus/$1"
	assert_success
	assert_line --regexp '^[1-9][0-9]* inputs$'
}

@test "fuzz corpus: NDJSON reader and validator agree with libjq" { replay ndjson; }
@test "fuzz corpus: plain paths find what jq finds" { replay jpath; }
@test "fuzz corpus: projections on raw bytes print what jq prints" { replay proj; }
@test "fuzz corpus: times and durations parse and round-trip" { replay time; }
@test "fuzz corpus: key encoding orders as jq sorts" { replay keyenc; }
@test "fuzz corpus: envelopes are read as jq reads them" { replay envelope; }
@test "fuzz corpus: expression keys of every type agree with jq" { replay exprkey; }
@test "fuzz corpus: Kafka payloads and headers round-trip through their JSON form" { replay payload; }
@test "fuzz corpus: the validator agrees with its former self at every block offset and SIMD width" { replay jscan; }

# tests/fuzz/jscan_gen.c feeds fuzz_jscan's check generated inputs: UTF-8 sequences at
# block boundaries, random and mutated documents, escapes and numbers at each offset
@test "jscan differential: generated documents give the former validator's answers on every path" {
	san=
	if built_sanitized; then
		san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
	fi
	# shellcheck disable=SC2086
	cc $san -std=c11 -g -O1 -D_GNU_SOURCE -I"$ROOT/lib" -I"$ROOT/tests/fuzz" -o "$FUZZBIN/jscan_gen" \
		"$ROOT/tests/fuzz/fuzz_jscan.c" "$ROOT/tests/fuzz/jscan_gen.c" "$LIBSS" -lm -lpthread
	run "$FUZZBIN/jscan_gen" 20000
	assert_success
	assert_line --regexp '^[1-9][0-9]* inputs$'
}

# the string scanner picks AVX-512, AVX2, SSE2 or a plain loop at run time
# (lib/base/jscan.c); SS_SIMD narrows it, so every path meets the same inputs (simd-widths:
# a special byte at each offset of strings around 16, 32 and 64 bytes long)
@test "fuzz corpus: every SIMD path of the validator (portable, SSE2, AVX2, AVX-512) agrees with libjq" {
	for simd in portable sse2 avx2 avx512; do
		SS_SIMD=$simd replay ndjson
		SS_SIMD=$simd replay jpath
	done
}
