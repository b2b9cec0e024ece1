#!/usr/bin/env bats
# Projections evaluated on raw bytes (lib/base/proj.h) against jq: random documents holding
# what jq prints otherwise (whitespace, 1.0, long integers, escapes, duplicate keys) and
# random expressions of the grammar (tests/proj-gen.py), through each tool that takes
# them. Every result is byte for byte what jq -c prints; records jq fails on are the
# tool's errors too (skipped here, as jq goes on after them).
load helpers

gen() { python3 "$ROOT/tests/proj-gen.py" "$@"; }

# same NAME EXPR: $T/got and $T/want hold the same bytes
same() {
	cmp -s "$T/got" "$T/want" && return 0
	echo "$1 $2:"
	diff "$T/got" "$T/want" | head -5
	return 1
}

@test "ss-asof --select: random projections of .left and .right print what jq prints" {
	gen docs 1 60 >"$T/left"
	gen docs 2 60 >"$T/right"
	ss-asof "$T/left" "$T/right" --on .t >"$T/joined"
	ss-asof <(cat "$T/left") <(cat "$T/right") --on .t | sort >"$T/joined-live"
	gen exprs 3 80 sides >"$T/exprs"
	while IFS= read -r e; do
		jq -c "$e" <"$T/joined" >"$T/want" 2>/dev/null || true
		# files are parsed ahead on threads, which find the paths' values in each record
		# while they validate it (asof_parse.c asof_find_known); SS_THREADS=0: the join
		# does, as it parses each record
		ss-asof "$T/left" "$T/right" --on .t --select "$e" --on-error skip >"$T/got" 2>/dev/null
		same --select "$e"
		SS_THREADS=0 ss-asof "$T/left" "$T/right" --on .t --select "$e" --on-error skip >"$T/got" 2>/dev/null
		same "--select (SS_THREADS=0)" "$e"
		# through pipes the join is live: the values of left records are found as they
		# are parsed and held with them (asof_held.c), those of right ones (history kept
		# whole) when a result is written; results in release order, compared as sorted
		# lines. Held records spilled to disk come back without them: found again.
		jq -c "$e" <"$T/joined-live" 2>/dev/null | sort >"$T/want" || true
		ss-asof <(cat "$T/left") <(cat "$T/right") --on .t --select "$e" --on-error skip 2>/dev/null |
			sort >"$T/got"
		same "--select (pipes)" "$e"
		SS_ASOF_SPILL_BYTES=2000 ss-asof <(cat "$T/left") <(cat "$T/right") --on .t --select "$e" \
			--on-error skip 2>/dev/null | sort >"$T/got"
		same "--select (pipes, held records on disk)" "$e"
	done <"$T/exprs"
}

@test "ss-asof --select of right values alone: right records kept as those values, results unchanged" {
	# Where --select reads nothing of a right record but values one key deep, the history
	# keeps the object of those values alone (asof_match.c asof_hist_copy): keys with
	# escapes (\u0061 for a), repeated (jq takes the last), missing; values of every kind.
	# Through pipes the left records come out of order, and the history, bounded by
	# SS_ASOF_HISTORY_BYTES, is read back from disk for them.
	gen docs 10 300 >"$T/right"
	gen docs 11 300 | python3 -c 'import random, sys; l = sys.stdin.readlines(); random.Random(4).shuffle(l); sys.stdout.writelines(l)' >"$T/shuffled"
	gen docs 11 300 >"$T/left"
	ss-asof "$T/left" "$T/right" --on .t >"$T/joined"
	ss-asof <(cat "$T/shuffled") <(cat "$T/right") --on .t | sort >"$T/joined-live"
	for e in '[.left.i, .right.a]' '{r: .right.b, x: .right."x y", e: .right["é"], l: .left}' \
		'[.right.nokey, .right.left, 7, .revision, .left.right]'; do
		jq -c "$e" <"$T/joined" >"$T/want"
		ss-asof "$T/left" "$T/right" --on .t --select "$e" >"$T/got"
		same --select "$e"
		SS_THREADS=0 ss-asof "$T/left" "$T/right" --on .t --select "$e" >"$T/got"
		same "--select (SS_THREADS=0)" "$e"
		jq -c "$e" <"$T/joined-live" | sort >"$T/want"
		SS_ASOF_HISTORY_BYTES=2000 ss-asof <(cat "$T/shuffled") <(cat "$T/right") --on .t --select "$e" |
			sort >"$T/got"
		same "--select (pipes, history on disk)" "$e"
	done
}

@test "ss-asof --select --emit revise: .revision is a member too" {
	gen docs 4 30 >"$T/left"
	gen docs 5 30 >"$T/right"
	ss-asof "$T/left" "$T/right" --on .t --emit revise >"$T/joined"
	for e in '.' '[.revision, .final]' '{r: .revision, l: .left.t, right}'; do
		ss-asof "$T/left" "$T/right" --on .t --emit revise --select "$e" >"$T/got"
		jq -c "$e" <"$T/joined" >"$T/want"
		same --select "$e"
	done
}

@test "ss-cache put --value: random projections store what jq prints" {
	gen docs 6 60 >"$T/docs"
	gen exprs 7 60 >"$T/exprs"
	while IFS= read -r e; do
		rm -f "$T/st.db"*
		ss-cache "$T/st.db" put --key .i --value "$e" --on-error skip <"$T/docs" 2>/dev/null
		ss-cache "$T/st.db" scan | sed 's/^{"key":[0-9]*,"value"://; s/}$//' >"$T/got"
		jq -c "$e" <"$T/docs" >"$T/want" 2>/dev/null || true
		same --value "$e"
	done <"$T/exprs"
}

@test "ss-produce --value: random projections send what jq prints" {
	gen docs 8 60 >"$T/docs"
	gen exprs 9 60 >"$T/exprs"
	while IFS= read -r e; do
		# in an array, so that the payload is the JSON text (a string would be its contents)
		ss-produce --dry-run --value "[$e]" --on-error skip t <"$T/docs" 2>/dev/null |
			sed 's/^.*"key":null,"value"://; s/,"headers":{}}$//' >"$T/got"
		jq -c "[$e]" <"$T/docs" >"$T/want" 2>/dev/null || true
		same --value "[$e]"
	done <"$T/exprs"
}
