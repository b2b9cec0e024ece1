#!/usr/bin/env bats
# ss-asof against a brute-force reference (tests/asof-ref.py) on random inputs: every
# direction, with and without --by, --tolerance and --strict, right records out of order
# within --grace, left records in any order.

load helpers

# seeds FIRST COUNT: COUNT seeds from FIRST, or $SS_PROPERTY_SEEDS of them (the sanitizer
# run takes fewer: what it looks for is in the code paths, not in the data)
seeds() { seq "$1" $(($1 + ${SS_PROPERTY_SEEDS:-$2} - 1)); }

# check SEED: every option combination on one random input pair
check() {
	local seed=$1 grace=$(( $1 % 3 * 4 )) shuffle=$(( $1 % 2 ))
	python3 "$BATS_TEST_DIRNAME/asof-gen.py" "$seed" "$T" "$grace" "$shuffle"
	for dir in backward forward nearest; do for strict in 0 1; do for tol in -1 6; do for by in 0 1; do
		local opts=(--on .t --direction "$dir" --grace "${grace}s" --retain 1000d --emit "${EMIT:-defer}")
		[ "$strict" = 1 ] && opts+=(--strict)
		[ "$tol" -ge 0 ] && opts+=(--tolerance "${tol}s")
		[ "$by" = 1 ] && opts+=(--by .k)
		ss-asof "${opts[@]}" "$T/left" "$T/right" 2>"$T/err" >"$T/out" || { cat "$T/err"; return 1; }
		[ ! -s "$T/err" ] || { echo "unexpected: $(cat "$T/err")"; return 1; }
		# the files parsed on the main thread only, and ahead in batches of a few lines
		# (lib/join/asof_ahead.c): the same bytes
		SS_THREADS=0 ss-asof "${opts[@]}" "$T/left" "$T/right" >"$T/out0" 2>&1
		SS_THREADS_CHUNK=$(( 20 + seed * 7 )) ss-asof "${opts[@]}" "$T/left" "$T/right" >"$T/out1" 2>&1
		cmp "$T/out" "$T/out0" || { echo "seed $seed: SS_THREADS=0 differs: ${opts[*]}"; return 1; }
		cmp "$T/out" "$T/out1" || { echo "seed $seed: small batches differ: ${opts[*]}"; return 1; }
		if [ "${EMIT:-defer}" = revise ]; then
			# the last revision of each left record is the reference answer
			python3 -c 'import json,sys
last = {}
for line in open(sys.argv[1]):
    o = json.loads(line); v = o["left"]["v"]
    assert o["revision"] == last.get(v, (-1,))[0] + 1, line
    last[v] = (o["revision"], json.dumps({"left": o["left"], "right": o["right"]}, separators=(",", ":")))
print("\n".join(x[1] for x in last.values()))' "$T/out" | sort >"$T/got"
		else
			sort "$T/out" >"$T/got"
		fi
		python3 "$BATS_TEST_DIRNAME/asof-ref.py" "$T/left" "$T/right" "$dir" "$strict" "$tol" "$by" | sort >"$T/want"
		diff -u "$T/want" "$T/got" || { echo "seed $seed: ${opts[*]}"; return 1; }
	done; done; done; done
}

@test "defer equals the brute-force reference on random inputs (files, merged); with and without threads" {
	for seed in $(seeds 1 10); do check "$seed"; done
}

@test "defer equals the reference when both inputs are pipes" {
	for seed in 11 12 13; do
		python3 "$BATS_TEST_DIRNAME/asof-gen.py" "$seed" "$T" 0 0
		for dir in backward forward nearest; do
			ss-asof --on .t --by .k --direction "$dir" --retain 1000d <(cat "$T/left") <(cat "$T/right") 2>/dev/null | sort >"$T/got"
			python3 "$BATS_TEST_DIRNAME/asof-ref.py" "$T/left" "$T/right" "$dir" 0 -1 1 | sort >"$T/want"
			diff -u "$T/want" "$T/got"
		done
	done
}

@test "revise: the last revision of every left record equals the reference" {
	for seed in $(seeds 21 6); do EMIT=revise check "$seed"; done
}
