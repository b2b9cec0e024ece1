#!/usr/bin/env bats
# ss-asof: the seed's nearby join, its late-event modes, options, errors and restarts.

load helpers
bats_require_minimum_version 1.5.0

weather() { printf '%s\n' \
	'{"timestamp":"2023-01-01T10:00:00Z","value":"🌞"}' \
	'{"timestamp":"2023-01-01T12:00:00Z","value":"⛅"}' \
	'{"timestamp":"2023-01-01T13:00:00Z","value":"🌧"}'; }
activity() { printf '%s\n' \
	'{"timestamp":"2023-01-01T10:30:00Z","value":"swimming"}' \
	'{"timestamp":"2023-01-01T11:30:00Z","value":"walking home"}' \
	'{"timestamp":"2023-01-01T12:30:00Z","value":"shopping"}' \
	'{"timestamp":"2023-01-01T13:10:00Z","value":"lunch"}'; }
w() { weather | sed -n "${1}p"; }
a() { activity | sed -n "${1}p"; }
# the seed's late case: cloudy arrives after shopping, rainy after lunch
late_order() { echo "R $(w 1)"; for i in 1 2 3; do echo "L $(a $i)"; done; echo "R $(w 2)"; echo "L $(a 4)"; echo "R $(w 3)"; }
# late_case ARGS...: ss-asof ARGS over two pipes fed in late_order (tests/feed.py)
late_case() {
	rm -f "$T/lp" "$T/rp"
	mkfifo "$T/lp" "$T/rp"
	ss-asof "$T/lp" "$T/rp" --on .timestamp "$@" &
	late_order | python3 "$BATS_TEST_DIRNAME/feed.py" "$T/lp" "$T/rp"
	wait $!
}
vv='[.left.v, .right.v] + (if has("revision") then [.revision] else [] end)'
pairs='[.left.value, .right.value] + (if has("revision") then [.revision] else [] end)'

setup() {
	common_setup
	weather >"$T/w"
	activity >"$T/a"
}

@test "-h prints the usage on stdout and exits 0" {
	run --separate-stderr ss-asof -h
	assert_success
	assert_output --partial 'usage: ss-asof [--on EXPR'
	assert_output --partial 'LEFT RIGHT'
}

@test "misuse exits 2 with the reason and the usage on stderr" {
	test_must_fail 2 ss-asof --on .t "$T/a"
	assert_output --partial 'expected LEFT and RIGHT'
	assert_output --partial 'usage: ss-asof'
	test_must_fail 2 ss-asof "$T/a" "$T/w"
	assert_output --partial 'event time is required'
	test_must_fail 2 ss-asof --on .t --direction sideways "$T/a" "$T/w"
	assert_output --partial "--direction sideways: expected backward, forward or nearest"
	test_must_fail 2 ss-asof --on .t --emit eager --max-delay 1s "$T/a" "$T/w"
	test_must_fail 2 ss-asof --on .t --tolerance soon "$T/a" "$T/w"
	test_must_fail 2 ss-asof --on .t --by .k --left-by .k "$T/a" "$T/w"
	test_must_fail 2 ss-asof --on .t --left-by .k "$T/a" "$T/w"
	test_must_fail 2 ss-asof --on .t - -
	test_must_fail 2 ss-asof --on .t --bogus "$T/a" "$T/w"
}

@test "a bad jq expression exits 3" {
	test_must_fail 3 ss-asof --on '.timestamp |||' "$T/a" "$T/w"
	assert_output --partial 'ss-asof: --on'
	test_must_fail 3 ss-asof --on .timestamp --select '[.left' "$T/a" "$T/w"
	assert_output --partial 'ss-asof: --select'
	# a carriage return is not space to jq: refused as jq refuses it, though the
	# expression is otherwise one ss-asof evaluates without libjq
	test_must_fail 3 ss-asof --on .timestamp --select "$(printf '[.left,\r.right]')" "$T/a" "$T/w"
	assert_output --partial 'ss-asof: --select'
}

@test "the seed's example gives the seed's four pairs, and nothing on stderr" {
	run --separate-stderr ss-asof "$T/a" "$T/w" --on .timestamp --select '[.left.value, .right.value]'
	assert_success
	assert_equal "$output" '["swimming","🌞"]
["walking home","🌞"]
["shopping","⛅"]
["lunch","🌧"]'
	assert_equal "$stderr" 
}

@test "output splices the raw records: {\"left\":L,\"right\":R}" {
	printf '{ "t" : 5,  "x":1.50 }\n' >"$T/l"
	printf '{"t":4,"y":[1, 2]}\n' >"$T/r"
	run --separate-stderr ss-asof --on .t "$T/l" "$T/r"
	assert_success
	assert_output '{"left":{ "t" : 5,  "x":1.50 },"right":{"t":4,"y":[1, 2]}}'
}

@test "epoch numbers and --ts-unit ms give the same pairs as RFC 3339 text" {
	jq -c '.timestamp |= fromdate' "$T/a" >"$T/an"
	jq -c '.timestamp |= fromdate' "$T/w" >"$T/wn"
	jq -c '.timestamp |= (fromdate * 1000)' "$T/a" >"$T/am"
	jq -c '.timestamp |= (fromdate * 1000)' "$T/w" >"$T/wm"
	ss-asof --on .timestamp "$T/a" "$T/w" | jq -c '[.left.value, .right.value]' >"$T/want"
	ss-asof --on .timestamp "$T/an" "$T/wn" | jq -c '[.left.value, .right.value]' >"$T/got"
	diff -u "$T/want" "$T/got"
	ss-asof --on .timestamp --ts-unit ms "$T/am" "$T/wm" | jq -c '[.left.value, .right.value]' >"$T/got"
	diff -u "$T/want" "$T/got"
}

@test "forward and nearest directions on the seed" {
	run --separate-stderr ss-asof --on .timestamp --direction forward --select "$pairs" "$T/a" "$T/w"
	assert_output '["swimming","⛅"]
["walking home","⛅"]
["shopping","🌧"]
["lunch",null]'
	# nearest: shopping is 30 minutes from both; ties go backward
	run --separate-stderr ss-asof --on .timestamp --direction nearest --select "$pairs" "$T/a" "$T/w"
	assert_output '["swimming","🌞"]
["walking home","⛅"]
["shopping","⛅"]
["lunch","🌧"]'
}

@test "--tolerance, --strict and --inner" {
	run --separate-stderr ss-asof --on .timestamp --tolerance 20m --select "$pairs" "$T/a" "$T/w"
	assert_output '["swimming",null]
["walking home",null]
["shopping",null]
["lunch","🌧"]'
	run --separate-stderr ss-asof --on .timestamp --tolerance 20m --inner --select "$pairs" "$T/a" "$T/w"
	assert_output '["lunch","🌧"]'
	printf '{"t":10,"v":"l"}\n' >"$T/l"
	printf '{"t":5,"v":"before"}\n{"t":10,"v":"same"}\n' >"$T/r"
	run --separate-stderr ss-asof --on .t --select "$vv" "$T/l" "$T/r"
	assert_output '["l","same"]'
	run --separate-stderr ss-asof --on .t --strict --select "$vv" "$T/l" "$T/r"
	assert_output '["l","before"]'
}

@test "--by joins on any JSON value: 1 and \"1\" differ, arrays are keys" {
	printf '%s\n' '{"t":1,"k":1,"v":"n1"}' '{"t":1,"k":"1","v":"s1"}' '{"t":1,"k":[1,"x"],"v":"arr"}' '{"t":1,"k":null,"v":"nokey"}' >"$T/r"
	printf '%s\n' '{"t":2,"k":"1"}' '{"t":2,"k":1}' '{"t":2,"k":[1,"x"]}' '{"t":2,"k":null}' '{"t":2,"k":"zz"}' >"$T/l"
	run --separate-stderr ss-asof --on .t --by .k --select '.right.v' "$T/l" "$T/r"
	assert_output '"s1"
"n1"
"arr"
"nokey"
null'
	# --left-by/--right-by with different expressions
	printf '%s\n' '{"t":2,"station":1}' >"$T/l2"
	run --separate-stderr ss-asof --on .t --left-by .station --right-by .k --select '.right.v' "$T/l2" "$T/r"
	assert_output '"n1"'
}

@test "a --by or --on field that is not there is an error, not the key null" {
	printf '%s\n' '{"t":1,"k":"a","v":"r"}' >"$T/r"
	printf '%s\n' '{"t":2,"k":"a"}' '{"t":3,"kk":"a"}' >"$T/l"
	run --separate-stderr ss-asof --on .t --by .kk --select .right.v "$T/l" "$T/r"
	assert_failure 1
	[[ "$stderr" == *"$T/l:1: left: .kk: no such field"* ]]
	run --separate-stderr ss-asof --on .t --by .k --select .right.v "$T/l" "$T/r"
	assert_failure 1
	assert_output '"r"'
	[[ "$stderr" == *"$T/l:2: left: .k: no such field"* ]]
	# in an array of paths too; a key asked to be null where missing joins as null
	run --separate-stderr ss-asof --on .t --by '[.k, .x]' "$T/l" "$T/r"
	assert_failure 1
	[[ "$stderr" == *"no such field"* ]]
	run --separate-stderr ss-asof --on .t --by '.kk // null' --select .right.v "$T/l" "$T/r"
	assert_success
	assert_output '"r"
null'
	run --separate-stderr ss-asof --on .tt "$T/l" "$T/r"
	assert_failure 1
	[[ "$stderr" == *"$T/l:1: left: .tt: no such field"* ]]
	run --separate-stderr ss-asof --left-on .t --right-on .time "$T/l" "$T/r"
	assert_failure 1
	[[ "$stderr" == *"$T/r:1: right: .time: no such field"* ]]
}

@test "--left-on/--right-on read times from different fields" {
	jq -c '{when: .timestamp, value}' "$T/a" >"$T/a2"
	run --separate-stderr ss-asof --left-on .when --right-on .timestamp --select "$pairs" "$T/a2" "$T/w"
	assert_output '["swimming","🌞"]
["walking home","🌞"]
["shopping","⛅"]
["lunch","🌧"]'
}

@test "--select of paths, arrays, objects and literals: jq's output, from the records' bytes" {
	printf '%s\n' '{"t":1,"id":1.0,"s":"a\/b","n":{"x" : [1, 2]}}' '{"t":2,"id":3,"s":7}' >"$T/l"
	printf '%s\n' '{"t":0,"w":1e2}' >"$T/r"
	run --separate-stderr ss-asof --on .t --select '{id: .left.id, s: .left.s, n: .left.n, w: .right.w, miss: .left.no.deeper, lit: [1.50, "x", null]}' "$T/l" "$T/r"
	assert_success
	assert_output '{"id":1,"s":"a/b","n":{"x":[1,2]},"w":100,"miss":null,"lit":[1.5,"x",null]}
{"id":3,"s":7,"n":null,"w":100,"miss":null,"lit":[1.5,"x",null]}'
	# a step into a value of another type is jq's error, with jq's message
	run --separate-stderr ss-asof --on .t --select '[.left.s.x]' --on-error skip "$T/l" "$T/r"
	assert_success
	assert_output ''
	[[ "$stderr" == *'l:1: left: --select: Cannot index string with string "x" (skipped)'* ]]
	[[ "$stderr" == *'l:2: left: --select: Cannot index number with string "x" (skipped)'* ]]
}

@test "records of more members than are noted: fields found as jq finds them, the last duplicate winning" {
	# 72 members a record (64 are noted while it is validated; beyond that, each field is
	# looked at over the record); some repeat .t, .k or .f68 at their end, which jq keeps
	python3 - "$T" <<-'PY'
	import random, sys
	random.seed(14)
	def record(side, i, t):
	    k = random.randrange(5)
	    members = ['"id":"%s%d"' % (side, i), '"t":%d' % t, '"k":%d' % k]
	    members += ['"f%d":%s' % (j, random.choice(['%d' % j, '"x%d"' % j, '[%d,{"t":0}]' % j]))
	                for j in range(69)]
	    dup = random.randrange(4)
	    if dup == 1:
	        t += 5
	        members.append('"t":%d' % t)
	    elif dup == 2:
	        k = random.randrange(5)
	        members.append('"k":%d' % k)
	    elif dup == 3:
	        members.append('"f68":"last"')
	    return "{" + ",".join(members) + "}", t, k
	for side in "lr":
	    with open("%s/%s" % (sys.argv[1], side), "w") as f:
	        for i in range(400):
	            f.write(record(side, i, 10 * i + random.randrange(3))[0] + "\n")
	PY
	# the reference: jq reads each record's fields; the latest right at or before each
	# left of its key (the later of equal times)
	jq -c '[.t, .k, .id, .f68]' "$T/r" >"$T/rf"
	jq -c '[.t, .k, .id]' "$T/l" | python3 -c '
import json, sys
right = [json.loads(x) for x in open(sys.argv[1])]
for line in sys.stdin:
    t, k, lid = json.loads(line)
    best = None
    for r in right:
        if r[1] == k and r[0] <= t and (best is None or r[0] >= best[0]):
            best = r
    print(json.dumps([lid, best and best[2], best and best[3]], separators=(",", ":")))
' "$T/rf" >"$T/want"
	[ "$(grep -c null "$T/want")" -lt 40 ]
	sel='[.left.id, .right.id, .right.f68]'
	for threads in 0 2; do
		# files (parsed ahead on their own threads when SS_THREADS allows) and pipes
		SS_THREADS=$threads SS_THREADS_CHUNK=4096 ss-asof --on .t --by .k --select "$sel" "$T/l" "$T/r" >"$T/got"
		cmp "$T/want" "$T/got"
		SS_THREADS=$threads ss-asof --on .t --by .k --select "$sel" <(cat "$T/l") <(cat "$T/r") >"$T/got"
		cmp "$T/want" "$T/got"
	done
}

# policies PID: the scheduling policy of each of its threads, main thread first (field 41
# of /proc/PID/task/TID/stat: 0 SCHED_OTHER, 3 SCHED_BATCH); a thread that ends between
# the listing and the read is left out (awk's status 2 there failed the test under load)
policies() {
	local t
	[ -d /proc/"$1"/task ] || return 0
	for t in $(ls /proc/"$1"/task 2>/dev/null | sort -n); do
		awk '{print $41}' /proc/"$1"/task/"$t"/stat 2>/dev/null || true
	done
}

# parked_policies FILE UNTIL ARGS...: ss-asof ARGS writing into a FIFO nobody reads yet,
# so that it stops with its threads waiting; their policies into FILE until the function
# UNTIL says they are all there (given FILE; 10 s at most), then the output drained
parked_policies() {
	local out=$1 until=$2 pid i
	shift 2
	rm -f "$T/fifo"
	mkfifo "$T/fifo"
	ss-asof "$@" >"$T/fifo" &
	pid=$!
	exec 5<"$T/fifo"
	for ((i = 0; i < 200; i++)); do
		policies "$pid" >"$out"
		"$until" "$out" && break
		sleep 0.05
	done
	cat <&5 >/dev/null
	exec 5<&-
	wait "$pid"
}
# (a thread shows in /proc before it sets its policy: a file join's are awaited as batch)
four_batch() { [ "$(grep -c '^3$' "$1")" -eq 4 ]; }
# the main thread, the output's and one a pipe
four_threads() { [ "$(wc -l <"$1")" -ge 4 ]; }

@test "a file join's parsing threads run as batch work (SCHED_BATCH); a live join's keep their turn" {
	python3 - "$T" <<-'PY'
	import sys
	for side in "lr":
	    with open("%s/%s" % (sys.argv[1], side), "w") as f:
	        for i in range(12000):  # ~1 MB: more than a live thread reads ahead (3 x 128 KB)
	            f.write('{"id":"%s%d","t":%d,"pad":"%s"}\n' % (side, i, 2 * i + (side == "l"), "x" * 60))
	PY
	# files: two threads a file, the join on the main thread (128 KB a batch by default:
	# the files would be parsed whole before a look; 4 KB batches keep the threads waiting)
	SS_THREADS_CHUNK=4096 parked_policies "$T/files" four_batch --on .t "$T/l" "$T/r"
	[ "$(sed -n 1p "$T/files")" = 0 ]
	four_batch "$T/files"
	# pipes (a live join): one thread a pipe, none batch; each pipe held open a while
	# after its records, so that its thread is there to be seen (under load, one side
	# was read to its end before the other came, and its thread had ended)
	rm -f "$T/lp" "$T/rp"
	mkfifo "$T/lp" "$T/rp"
	{ cat "$T/l"; sleep 5; } >"$T/lp" &
	{ cat "$T/r"; sleep 5; } >"$T/rp" &
	parked_policies "$T/pipes" four_threads --on .t "$T/lp" "$T/rp"
	four_threads "$T/pipes"
	[ "$(grep -vc '^0$' "$T/pipes")" -eq 0 ]
}

@test "--by an array of paths: records paired as jq's values of the key decide, from files and pipes, sorted or not" {
	# key parts spelled in ways jq reads as one value (1, 1.0, 1e0; "a", "\u0061";
	# objects in any member order), nested arrays, null; some records lack a part or
	# index a string (rejected under skip)
	python3 - "$T" <<-'PY'
	import random, sys
	random.seed(23)
	spell = {"a": ['"a"', '"\\u0061"'], "1": ['1', '1.0', '1e0'], "x": ['[1,"x"]', '[1.0,"\\u0078"]'],
	         "o": ['{"p":1,"q":2}', '{"q":2,"p":1}'], "n": ['null']}
	def record(side, i, t):
	    g = random.choice(['{"st":%s}' % random.choice(spell[random.choice("a1x")]), '"str"', '{}'] + ['{"st":"b"}'] * 3)
	    members = ['"id":"%s%d"' % (side, i), '"t":%d' % t, '"g":%s' % g]
	    if random.random() < 0.95:
	        members.append('"dev":%s' % random.choice(spell[random.choice("a1on")]))
	    random.shuffle(members)
	    return "{" + ",".join(members) + "}"
	for side in "lr":
	    times = random.sample(range(100000), 3000)
	    with open("%s/%s" % (sys.argv[1], side), "w") as f:
	        f.write("".join(record(side, i, t) + "\n" for i, t in enumerate(sorted(times))))
	    with open("%s/%s-shuf" % (sys.argv[1], side), "w") as f:
	        lines = open("%s/%s" % (sys.argv[1], side)).readlines()
	        random.shuffle(lines)
	        f.write("".join(lines))
	PY
	# the reference: jq's key for the records that have every part, as jq -S prints it
	# (one text for equal values: objects by sorted members); the latest right of that
	# key at or before each left
	keyed='select(has("dev") and (.g | type == "object" and has("st"))) | [.t, .id, [.g.st, .dev]]'
	jq -S -c "$keyed" "$T/r" >"$T/rk"
	jq -S -c "$keyed" "$T/l" | python3 -c '
import json, sys
text = lambda k: json.dumps(k, separators=(",", ":"))
right = {}
for r in map(json.loads, open(sys.argv[1])):
    right.setdefault(text(r[2]), []).append(r)
for line in sys.stdin:
    t, lid, k = json.loads(line)
    best = max((r for r in right.get(text(k), []) if r[0] <= t), default=None)
    print(json.dumps([lid, best and best[1]], separators=(",", ":")))
' "$T/rk" | sort >"$T/want"
	[ "$(grep -vc null "$T/want")" -gt 1000 ]
	# each left record without its key is said (the right ones past the last left time
	# may go unread)
	rejected=$(( $(wc -l <"$T/l") - $(wc -l <"$T/want") ))
	[ "$rejected" -gt 100 ]
	args=(--on .t --by '[.g.st, .dev]' --select '[.left.id, .right.id]' --on-error skip)
	for threads in 0 2; do
		for pair in "l r" "l-shuf r" "l r-shuf" "l-shuf r-shuf"; do
			set -- $pair
			SS_THREADS=$threads SS_THREADS_CHUNK=4096 ss-asof "${args[@]}" "$T/$1" "$T/$2" 2>"$T/err" | sort >"$T/got"
			cmp "$T/want" "$T/got"
			[ "$(grep -c 'left: \[.g.st, .dev\]: \(no such field\|Cannot index\)' "$T/err")" -eq "$rejected" ]
		done
		SS_THREADS=$threads ss-asof "${args[@]}" <(cat "$T/l") <(cat "$T/r") 2>"$T/err" | sort >"$T/got"
		cmp "$T/want" "$T/got"
		[ "$(grep -c 'left: \[.g.st, .dev\]: \(no such field\|Cannot index\)' "$T/err")" -eq "$rejected" ]
	done
}

@test "--by PATH // LITERAL: a missing, null or false key is the literal, as jq says, files and pipes" {
	python3 - "$T" <<-'PY'
	import random, sys
	random.seed(29)
	for side in "lr":
	    with open("%s/%s" % (sys.argv[1], side), "w") as f:
	        for i, t in enumerate(sorted(random.sample(range(50000), 2000))):
	            k = random.choice(['"a"', '"b"', 'null', 'false', '0', '"none"', None, None])
	            f.write('{"id":"%s%d","t":%d%s}\n' % (side, i, t, '' if k is None else ',"k":%s' % k))
	PY
	for by in '.k // null' '.k // "none"'; do
		jq -c "[.t, .id, ($by)]" "$T/r" >"$T/rk"
		jq -c "[.t, .id, ($by)]" "$T/l" | python3 -c '
import json, sys
right = {}
for r in map(json.loads, open(sys.argv[1])):
    right.setdefault(json.dumps(r[2]), []).append(r)
for line in sys.stdin:
    t, lid, k = json.loads(line)
    best = max((r for r in right.get(json.dumps(k), []) if r[0] <= t), default=None)
    print(json.dumps([lid, best and best[1]], separators=(",", ":")))
' "$T/rk" >"$T/want"
		[ "$(grep -vc null "$T/want")" -gt 1500 ]
		for threads in 0 2; do
			SS_THREADS=$threads SS_THREADS_CHUNK=4096 ss-asof --on .t --by "$by" --select '[.left.id, .right.id]' "$T/l" "$T/r" >"$T/got"
			cmp "$T/want" "$T/got"
			SS_THREADS=$threads ss-asof --on '.t // 0' --by "$by" --select '[.left.id, .right.id]' <(cat "$T/l") <(cat "$T/r") >"$T/got"
			cmp "$T/want" "$T/got"
		done
	done
}

@test "--select on records that are not objects: jq's error where a path indexes them, not null" {
	# arrays on both sides, their times at .[0]; objects between them
	printf '%s\n' '[1,"a"]' '{"t":2,"aid":"b"}' '[3,"c"]' >"$T/l"
	printf '%s\n' '{"t":0,"w":"x"}' '[2,"y"]' >"$T/r"
	on=(--left-on '.t? // .[0]' --right-on '.t? // .[0]')
	jq -c '[1, .]' "$T/l" >/dev/null
	for threads in 0 2; do
		for src in files pipes; do
			if [ "$src" = files ]; then
				run --separate-stderr env SS_THREADS=$threads SS_THREADS_CHUNK=16 ss-asof "${on[@]}" \
					--select '[.left.aid, .right.w]' --on-error skip "$T/l" "$T/r"
			else
				run --separate-stderr env SS_THREADS=$threads ss-asof "${on[@]}" \
					--select '[.left.aid, .right.w]' --on-error skip <(cat "$T/l") <(cat "$T/r")
			fi
			assert_success
			# jq: the left array cannot be indexed by "aid"; the object at t=2 meets the
			# right array [2,"y"], which cannot be indexed by "w"
			assert_output ''
			[ "$(grep -c 'left: --select: Cannot index array with string "aid" (skipped)' <<<"$stderr")" -eq 2 ]
			[ "$(grep -c 'left: --select: Cannot index array with string "w" (skipped)' <<<"$stderr")" -eq 1 ]
		done
	done
}

@test "records nested as deep as jq parses: joined; a --select that jq cannot parse them in refuses them, no crash" {
	# jq 1.6 parses 256 levels of arrays, 128 of objects (an object counts twice): a
	# record of 254 levels is a good record, but {"left": record} is too deep for it
	deep() { python3 -c "import sys; d = int(sys.argv[1]); print('{\"t\":%s,\"n\":%s1%s}' % (sys.argv[2], '[' * d, ']' * d))" "$@"; }
	{ echo '{"t":1,"n":0}'; deep 253 2; deep 254 3; echo '{"t":4,"n":0}'; } >"$T/l"
	echo '{"t":0,"w":"x"}' >"$T/r"
	for t in 2 3; do jq -e .t <(sed -n "${t}p" "$T/l") >/dev/null; done
	# the whole-record join splices them as they are
	run --separate-stderr ss-asof --on .t "$T/l" "$T/r"
	assert_success
	[ "${#lines[@]}" -eq 4 ]
	[ "${lines[2]}" = '{"left":'"$(sed -n 3p "$T/l")"',"right":{"t":0,"w":"x"}}' ]
	# --select through jq: refused by the policy, with jq's reason; the others answered
	run --separate-stderr ss-asof --on .t --select '[.left.t, .right.w, (.left.n | length)]' --on-error skip "$T/l" "$T/r"
	assert_success
	assert_output '[1,"x",0]
[4,"x",0]'
	[[ "$stderr" == *'l:2: left: --select: Exceeds depth limit for parsing'* ]]
	[[ "$stderr" == *'l:3: left: --select: Exceeds depth limit for parsing'* ]]
	run --separate-stderr ss-asof --on .t --select '[.left.t, (.left.n | length)]' "$T/l" "$T/r"
	assert_failure 1
	assert_output '[1,0]'
	# one level more than jq parses is invalid JSON, as jq says
	deep 255 5 >"$T/l2"
	run jq . "$T/l2"
	assert_failure
	assert_output --partial 'Exceeds depth limit for parsing'
	run --separate-stderr ss-asof --on .t "$T/l2" "$T/r"
	assert_failure 1
	[[ "$stderr" == *'l2:1: left: invalid JSON: nesting too deep'* ]]
}

@test "--select of a projection sees the marks of approximations as jq does" {
	printf '%s\n' '{"t":5,"a":1}' >"$T/l"
	# eager answers at once, from a right stream that has said nothing yet
	run --separate-stderr ss-asof --on .t --emit eager --select '{a: .left.a, right, f: .final}' "$T/l" <(sleep 5)
	assert_success
	assert_output '{"a":1,"right":null,"f":false}'
}

@test "the same key and time on the right: the later record replaces the earlier" {
	printf '%s\n' '{"t":1,"v":"first"}' '{"t":1,"v":"second"}' >"$T/r"
	printf '%s\n' '{"t":2}' >"$T/l"
	run --separate-stderr ss-asof --on .t --select .right.v "$T/l" "$T/r"
	assert_output '"second"'
}

@test "late case through pipes: eager is the seed's incorrect output" {
	late_case --emit eager --select "$pairs" >"$T/out"
	run cat "$T/out"
	assert_output '["swimming","🌞"]
["walking home","🌞"]
["shopping","🌞"]
["lunch","⛅"]'
}

@test "late case through pipes: defer is the seed's deferred output" {
	late_case --emit defer --select "$pairs" >"$T/out"
	run cat "$T/out"
	assert_output '["swimming","🌞"]
["walking home","🌞"]
["shopping","⛅"]
["lunch","🌧"]'
}

@test "late case through pipes: revise emits corrections with revision numbers" {
	late_case --emit revise --select "$pairs" >"$T/out" 2>"$T/err"
	run cat "$T/out"
	assert_output '["swimming","🌞",0]
["walking home","🌞",0]
["shopping","🌞",0]
["shopping","⛅",1]
["lunch","⛅",0]
["lunch","🌧",1]'
	[ ! -s "$T/err" ]
	# without --select the revision is a field of the output object
	late_case --emit revise | jq -e -s 'map(.revision) == [0,0,0,1,0,1]'
}

# late_after_left_end ASOF_OPTION...: through a pipe, the right records at 5 and 20; the
# left record at 10 after both (answered final at once), and the left input ends; then a
# late right record at 8, its answer. ss-asof's output in $T/out, its stderr in $T/err.
# (A run used to end once the left input had and no result was open: the late record,
# still in the pipe, was never read.)
late_after_left_end() {
	mkfifo "$T/r"
	exec 7<>"$T/r"
	printf '%s\n' '{"t":5,"v":"a"}' '{"t":20,"v":"b"}' >&7
	ss-asof --on .t "$@" <(sleep 0.3; printf '{"t":10,"v":"l"}\n') "$T/r" >"$T/out" 2>"$T/err" 7>&- &
	local pid=$!
	sleep 0.8
	printf '{"t":8,"v":"late"}\n' >&7
	exec 7>&-
	wait "$pid"
}

@test "revise: a late right record read after the last left one still revises its result" {
	late_after_left_end --emit revise --select '[.left.v, .right.v, .revision]'
	run cat "$T/out"
	assert_output '["l","a",0]
["l","late",1]'
	grep -q 'right 3 (late 1)' "$T/err"
}

@test "--late-file gets a late right record read after the last left one (defer)" {
	late_after_left_end --late-file "$T/late" --select "$vv"
	run cat "$T/out"
	assert_output '["l","a"]'
	run cat "$T/late"
	assert_output '{"t":8,"v":"late"}'
	grep -q 'right 3 (late 1)' "$T/err"
}

@test "late right records are counted, written to --late-file and not applied" {
	printf '%s\n' '{"t":10,"v":"a"}' '{"t":20,"v":"b"}' '{"t":12,"v":"late"}' '{"t":18,"v":"in grace"}' >"$T/r"
	printf '%s\n' '{"t":13}' '{"t":19}' >"$T/l"
	# both through pipes (a file is complete: nothing in it is late), the left after all
	# the right records
	run --separate-stderr ss-asof --on .t --emit eager --late-file "$T/late" --select .right.v <(sleep 0.3; cat "$T/l") <(cat "$T/r")
	assert_success
	assert_output '"a"
"a"'
	[[ "$stderr" == *"right 4 (late 2)"* ]]
	run cat "$T/late"
	assert_output '{"t":12,"v":"late"}
{"t":18,"v":"in grace"}'
	# with --grace 5s the record at 18 is in time (20 - 5 = 15)
	rm "$T/late"
	run --separate-stderr ss-asof --on .t --emit eager --grace 5s --late-file "$T/late" --select .right.v <(sleep 0.3; cat "$T/l") <(cat "$T/r")
	assert_output '"a"
"in grace"'
	[[ "$stderr" == *"right 4 (late 1)"* ]]
}

@test "bad input on the left names the side, file and line; earlier results are out" {
	activity >"$T/bad"
	sed -i '3s/.*/{"timestamp": oops}/' "$T/bad"
	run --separate-stderr ss-asof --on .timestamp --emit eager "$T/bad" "$T/w"
	assert_failure 1
	[[ "$stderr" == *"ss-asof: $T/bad:3: left: invalid JSON"* ]]
	assert_equal "$(printf '%s\n' "$output" | wc -l)" 2
}

@test "bad input on the right names the side, file and line" {
	printf '%s\n' '{"timestamp":"2023-01-01T10:00:00Z","value":"x"}' '{"timestamp":"not a time","value":"y"}' >"$T/r"
	run --separate-stderr ss-asof --on .timestamp "$T/a" "$T/r"
	assert_failure 1
	[[ "$stderr" == *"ss-asof: $T/r:2: right: .timestamp: "* ]]
	printf '%s\n' '{"value":"no time"}' >"$T/r"
	run --separate-stderr ss-asof --on .timestamp "$T/a" "$T/r"
	assert_failure 1
	[[ "$stderr" == *"$T/r:1: right: .timestamp"* ]]
}

@test "--on-error skip and dead-letter keep going" {
	{ w 1; echo '{broken'; w 2; w 3; } >"$T/r"
	run --separate-stderr ss-asof --on .timestamp --on-error skip --select "$pairs" "$T/a" "$T/r"
	assert_success
	assert_equal "$(printf '%s\n' "$output" | sed -n 4p)" '["lunch","🌧"]'
	[[ "$stderr" == *"$T/r:2: right: invalid JSON"*"(skipped)"* ]]
	run --separate-stderr ss-asof --on .timestamp --on-error "dead-letter=$T/dead" "$T/a" "$T/r"
	assert_success
	jq -e --arg f "$T/r" '.source == $f and .line == 2 and .raw == "{broken"' "$T/dead"
}

# --on-error fail ends a join without state: whatever came before the bad record is
# answered first, whichever way the left side is read (merged with the right file, or
# answered from its index in batches, from a file or a pipe, parsed ahead or not)
@test "--on-error fail: every left record before the bad one is answered, on every path" {
	python3 - "$T" <<'PY'
import random, sys
d = sys.argv[1]
rnd = random.Random(5)
right = ['{"t":%d,"k":"k%d","v":%d}' % (i, rnd.randrange(5), i) for i in range(300)]
left = ['{"t":%d,"k":"k%d","id":%d}' % (i + i // 2, rnd.randrange(5), i) for i in range(200)]
open(d + "/r", "w").write("\n".join(right) + "\n")
for name, recs in (("in-order", left), ("shuffled", rnd.sample(left, len(left)))):
    open(d + "/" + name + ".good", "w").write("\n".join(recs) + "\n")
    open(d + "/" + name + ".bad", "w").write("\n".join(recs) + '\n{"t":"soon","k":"k1","id":-1}\n' + recs[-1] + "\n")
PY
	for left in in-order shuffled; do
		ss-asof --on .t --by .k "$T/$left.good" "$T/r" >"$T/want"
		assert_equal "$(wc -l <"$T/want")" 200
		for threads in 0 1; do
			for in in "$T/$left.bad" -; do
				status=0
				cat "$T/$left.bad" | SS_THREADS=$threads ss-asof --on .t --by .k "$in" "$T/r" \
					>"$T/got" 2>"$T/err" || status=$?
				cmp -s "$T/want" "$T/got" || { echo "$left $in SS_THREADS=$threads: $(wc -l <"$T/got") of 200"; false; }
				assert_equal "$status" 1
				name=$in
				[ "$in" != - ] || name='<stdin>'
				assert_equal "$(cat "$T/err")" "ss-asof: $name:201: left: .t: not an RFC 3339 time"
			done
		done
	done
	# one input of both topics: a file (read twice, right records first) or a pipe
	jq -c '{topic: (if has("id") then "act" else "wx" end), partition: 0, offset: 0, value: .}' \
		"$T/r" "$T/in-order.bad" >"$T/one"
	jq -c '{topic: (if has("id") then "act" else "wx" end), partition: 0, offset: 0, value: .}' \
		"$T/r" "$T/in-order.good" >"$T/one.good"
	one=(--on .value.t --by .value.k --left-topic act --right-topic wx --right-partitions 1)
	ss-asof "${one[@]}" --select '[.left.value.id, .right.value.v]' "$T/one.good" >"$T/want"
	assert_equal "$(wc -l <"$T/want")" 200
	for in in "$T/one" -; do
		status=0
		ss-asof "${one[@]}" --select '[.left.value.id, .right.value.v]' "$in" <"$T/one" \
			>"$T/got" 2>"$T/err" || status=$?
		cmp -s "$T/want" "$T/got" || { echo "one input $in: $(wc -l <"$T/got") of 200"; false; }
		assert_equal "$status" 1
		grep -q ":501: left: .value.t: not an RFC 3339 time" "$T/err"
	done
}

@test "--on-error fail: a bad right line in a file ends the run where the join reads it" {
	# Two files in time order are merged: the left records older than the last good
	# right record before the bad line come before it (their answers are exact: every
	# right record after it is newer), the others after it. A right file indexed whole
	# (the left file out of order) or read whole first (a state) comes before every
	# left record: none is answered.
	python3 - "$T" <<'PY'
import random, sys
d = sys.argv[1]
rnd = random.Random(7)
right = ['{"t":%d,"k":"k%d","v":%d}' % (2 * i, rnd.randrange(4), i) for i in range(300)]
left = ['{"t":%d,"k":"k%d","id":%d}' % (rnd.randrange(600), rnd.randrange(4), i) for i in range(200)]
left.sort(key=lambda r: int(r.split(':')[1].split(',')[0]))
open(d + "/r.good", "w").write("\n".join(right) + "\n")
open(d + "/r.bad", "w").write("\n".join(right[:150]) + '\n{"t":"soon","k":"k1"}\n' + "\n".join(right[150:]) + "\n")
open(d + "/l", "w").write("\n".join(left) + "\n")
open(d + "/l.shuffled", "w").write("\n".join(rnd.sample(left, len(left))) + "\n")
PY
	# the last good right record before the bad line is at t = 298
	ss-asof --on .t --by .k "$T/l" "$T/r.good" | jq -c 'select(.left.t < 298)' >"$T/want"
	[ "$(wc -l <"$T/want")" -gt 50 ]
	for threads in 0 1; do
		status=0
		SS_THREADS=$threads ss-asof --on .t --by .k "$T/l" "$T/r.bad" >"$T/got" 2>"$T/err" || status=$?
		assert_equal "$status" 1
		cmp -s "$T/want" "$T/got" || { echo "merged, SS_THREADS=$threads: $(wc -l <"$T/got") lines"; false; }
		assert_equal "$(cat "$T/err")" "ss-asof: $T/r.bad:151: right: .t: not an RFC 3339 time"
		status=0
		SS_THREADS=$threads ss-asof --on .t --by .k "$T/l.shuffled" "$T/r.bad" >"$T/got" 2>"$T/err" || status=$?
		assert_equal "$status" 1
		assert_equal "$(wc -c <"$T/got")" 0
		assert_equal "$(cat "$T/err")" "ss-asof: $T/r.bad:151: right: .t: not an RFC 3339 time"
	done
	status=0
	ss-asof --on .t --by .k --state "$T/st.db" "$T/l" "$T/r.bad" >"$T/got" 2>"$T/err" || status=$?
	assert_equal "$status" 1
	assert_equal "$(wc -c <"$T/got")" 0
}

@test "--select: several outputs, none, and runtime errors with file and line" {
	run --separate-stderr ss-asof --on .timestamp --select '.left.value, .right.value' "$T/a" "$T/w"
	assert_equal "${#lines[@]}" 8
	run --separate-stderr ss-asof --on .timestamp --select 'select(.left.value == "lunch") | .right.value' "$T/a" "$T/w"
	assert_output '"🌧"'
	run --separate-stderr ss-asof --on .timestamp --select '.left.value | tonumber' "$T/a" "$T/w"
	assert_failure 1
	[[ "$stderr" == *"$T/a:1: left: --select: "* ]]
}

@test "trickle: results come out while both inputs are still open" {
	mkfifo "$T/l" "$T/r"
	ss-asof --on .timestamp --emit eager --select .left.value "$T/l" "$T/r" >"$T/out" &
	pid=$!
	exec 8>"$T/l" 7>"$T/r" # the order ss-asof opens them
	w 1 >&7
	sleep 0.2
	a 1 >&8
	for _ in $(seq 50); do [ -s "$T/out" ] && break; sleep 0.1; done
	run cat "$T/out"
	assert_output '"swimming"'
	# the left side keeps flowing while the right side is silent
	a 2 >&8
	for _ in $(seq 50); do [ "$(wc -l <"$T/out")" = 2 ] && break; sleep 0.1; done
	assert_equal "$(wc -l <"$T/out")" 2
	exec 7>&- 8>&-
	wait "$pid"
}

@test "defer: --max-delay releases a held record while the right side stalls" {
	mkfifo "$T/r"
	exec 7<>"$T/r"
	w 1 >&7
	ss-asof --on .timestamp --max-delay 300ms --select "$pairs" <(a 1; sleep 5) "$T/r" >"$T/out" &
	pid=$!
	for _ in $(seq 40); do [ -s "$T/out" ] && break; sleep 0.1; done
	run cat "$T/out"
	assert_output '["swimming","🌞"]'
	kill "$pid"
	exec 7>&-
}

@test "defer holds a record until the right watermark passes its time, not before" {
	mkfifo "$T/r"
	exec 7<>"$T/r"
	printf '{"t":10,"v":"a"}\n' >&7
	ss-asof --on .t --select "$vv" <(printf '{"t":20,"v":"l"}\n'; sleep 5) "$T/r" >"$T/out" &
	pid=$!
	sleep 0.3
	# a right record at exactly 20 could still match: 20 is not past 20
	printf '{"t":20,"v":"b"}\n' >&7
	sleep 0.3
	[ ! -s "$T/out" ]
	printf '{"t":21,"v":"c"}\n' >&7
	for _ in $(seq 40); do [ -s "$T/out" ] && break; sleep 0.1; done
	run cat "$T/out"
	assert_output '["l","b"]'
	kill "$pid"
	exec 7>&-
}

@test "keys of 1 to 1,000 bytes, left records out of order: a live join gives the batch answer" {
	python3 - "$T" <<-'PY'
		import json, random, sys
		d = sys.argv[1]; r = random.Random(7)
		keys = ["k" * n + str(i) for i, n in enumerate([1, 14, 15, 16, 17, 31, 32, 33, 47, 48, 63, 64, 65, 200, 1000])]
		with open(d + "/r", "w") as f:
		    for t in range(2000):
		        f.write(json.dumps({"t": t, "k": r.choice(keys), "v": t}) + "\n")
		ts = list(range(0, 2000, 3)); r.shuffle(ts)
		with open(d + "/l", "w") as f:
		    for t in ts:
		        f.write(json.dumps({"t": t, "k": r.choice(keys)}) + "\n")
	PY
	ss-asof --on .t --by .k --select '[.left.t, .right.v]' "$T/l" "$T/r" | sort >"$T/want"
	[ "$(grep -c null "$T/want")" -lt 20 ]
	# the right input through a pipe: its history kept in memory, then mostly on disk
	ss-asof --on .t --by .k --select '[.left.t, .right.v]' "$T/l" <(cat "$T/r") | sort >"$T/got"
	diff -u "$T/want" "$T/got"
	SS_ASOF_HISTORY_BYTES=2000 ss-asof --on .t --by .k --select '[.left.t, .right.v]' "$T/l" <(cat "$T/r") \
		2>/dev/null | sort >"$T/got"
	diff -u "$T/want" "$T/got"
}

@test "left records out of order: within --retain they match, older ones are expired" {
	r() { printf '%s\n' '{"t":0,"v":"r0"}' '{"t":10,"v":"r10"}' '{"t":20,"v":"r20"}' '{"t":30,"v":"r30"}'; sleep 1
	      printf '%s\n' '{"t":40,"v":"r40"}'; }
	l() { sleep 0.5; printf '%s\n' '{"t":31}'; sleep 1; printf '%s\n' '{"t":15}' '{"t":25}'; }
	run --separate-stderr ss-asof --on .t --emit eager --retain 1h --select .right.v <(l) <(r)
	assert_output '"r30"
"r10"
"r20"'
	# by default the whole history is kept: the exact answer for any left record
	run --separate-stderr ss-asof --on .t --emit eager --select .right.v <(l) <(r)
	assert_output '"r30"
"r10"
"r20"'
	# --retain 0s keeps history from the slower stream's time (31) on: the older left
	# records are written expired, counted, said on stderr, and go to the --late-file
	run --separate-stderr ss-asof --on .t --emit eager --retain 0s --late-file "$T/late" \
		--select '[.left.t, .right.v, .expired]' <(l) <(r)
	assert_output '[31,"r30",null]
[15,null,true]
[25,null,true]'
	[[ "$stderr" == *"expired 2"* ]]
	[[ "$stderr" == *"older than the right history kept (--retain)"* ]]
	run cat "$T/late"
	assert_output '{"t":15}
{"t":25}'
}

envelopes() {
	python3 -c 'import sys
n = int(sys.argv[1])
with open(sys.argv[2], "w") as l, open(sys.argv[3], "w") as r:
    for i in range(n):
        r.write("{\"topic\":\"wx\",\"partition\":0,\"offset\":%d,\"value\":{\"t\":%d,\"k\":\"s%d\",\"w\":%d}}\n" % (i, 2 * i, i % 50, i))
        l.write("{\"topic\":\"act\",\"partition\":%d,\"offset\":%d,\"value\":{\"t\":%d,\"k\":\"s%d\",\"a\":%d}}\n" % (i % 2, i // 2, 2 * i + 1, (i * 7) % 50, i))' "$@"
}

@test "--state: kill -9 mid-run, restart: no left record lost, no right record applied twice" {
	envelopes 200000 "$T/l" "$T/r"
	opts=(--on .value.t --by .value.k)
	ss-asof "${opts[@]}" "$T/l" "$T/r" 2>/dev/null | sort >"$T/clean"
	ss-asof "${opts[@]}" --state "$T/s.db" "$T/l" "$T/r" >"$T/out1" 2>/dev/null &
	pid=$!
	for _ in $(seq 1500); do [ "$(wc -l <"$T/out1")" -ge 30000 ] && break; sleep 0.02; done # up to 30 s on a loaded machine
	kill -9 "$pid"
	wait "$pid" || true
	# SIGKILL may cut a write(2) short: a last line without its newline is not a result
	[ -z "$(tail -c1 "$T/out1")" ] || sed -i '$d' "$T/out1"
	n1=$(wc -l <"$T/out1")
	[ "$n1" -ge 30000 ] && [ "$n1" -lt 200000 ]
	run --separate-stderr ss-asof "${opts[@]}" --state "$T/s.db" "$T/l" "$T/r"
	assert_success
	printf '%s\n' "$output" >"$T/out2"
	[[ "$stderr" == *"replayed "* ]]
	# at least once: every result of the clean run is there, and nothing else
	cat "$T/out1" "$T/out2" | sed '/^$/d' | sort -u >"$T/all"
	diff -u "$T/clean" "$T/all"
	# each right record applied exactly once in the committed state
	run sqlite3 "$T/s.db" "select value from asof_meta where name = 'rseq'; select offset from ss_offsets where topic = 'wx'"
	assert_output '200000
199999'
	# a third run has nothing to do
	run --separate-stderr ss-asof "${opts[@]}" --state "$T/s.db" "$T/l" "$T/r"
	assert_output ''
	[[ "$stderr" == *"left 0 "*"replayed 400000"* ]]
}

@test "--right-end exit: a right pipe that ends before the left is not the end of the right stream" {
	printf '%s\n' '{"topic":"wx","partition":0,"offset":0,"t":10,"v":"r10"}' >"$T/r1"
	printf '%s\n' '{"topic":"act","partition":0,"offset":0,"t":15,"v":"l15"}' >"$T/l"
	# the right consumer dies while the left one goes on: exit 75, nothing answered
	run --separate-stderr ss-asof --on .t --state "$T/s.db" --right-end exit --right-partitions 1 --select "$vv" \
		<(cat "$T/l"; sleep 2) <(cat "$T/r1")
	assert_failure 75
	assert_output ''
	[[ "$stderr" == *"ended before"*"held records stay in the state"* ]]
	run sqlite3 "$T/s.db" 'SELECT count(*) FROM asof_held'
	assert_output 1
	# the next run, with the weather that came meanwhile, answers it right
	printf '%s\n' '{"topic":"wx","partition":0,"offset":1,"t":12,"v":"r12"}' '{"topic":"wx","partition":0,"offset":2,"t":20,"v":"r20"}' >"$T/r2"
	run --separate-stderr ss-asof --on .t --state "$T/s.db" --right-end exit --right-partitions 1 --select "$vv" \
		<(sleep 2) <(cat "$T/r2"; sleep 1)
	assert_output '["l15","r12"]'
	# by default the end of the right input is the end of the right stream
	rm "$T/s.db"
	run --separate-stderr ss-asof --on .t --state "$T/s.db" --select "$vv" <(cat "$T/l"; sleep 1) <(cat "$T/r1")
	assert_success
	assert_output '["l15","r10"]'
	test_must_fail 2 ss-asof --on .t --right-end exit "$T/l" "$T/r1"
	assert_output --partial '--right-end exit needs --state'
}

@test "--right-end-file: the right input's end is the right stream's only with its consumer's end file" {
	printf '%s\n' '{"topic":"wx","partition":0,"offset":0,"t":10,"v":"r10"}' >"$T/r1"
	printf '%s\n' '{"topic":"act","partition":0,"offset":0,"t":15,"v":"l15"}' >"$T/l"
	# no end file (its consumer was killed): exit 75, nothing answered, the record kept
	run --separate-stderr ss-asof --on .t --state "$T/s.db" --right-end-file "$T/end" --select "$vv" \
		"$T/l" <(cat "$T/r1")
	assert_failure 75
	assert_output ''
	[[ "$stderr" == *"ended without $T/end (its consumer did not finish): held records stay in the state"* ]]
	assert_equal "$(sqlite3 "$T/s.db" 'SELECT count(*) FROM asof_held')" 1
	# an end file naming a record the join has not applied: a predecessor's, not this end
	echo '{"topic":"wx","partition":0,"last":1}' >"$T/end"
	run --separate-stderr ss-asof --on .t --state "$T/s.db" --right-end-file "$T/end" --select "$vv" \
		/dev/null <(true)
	assert_failure 75
	assert_output ''
	# the consumer read to its end (offset 1) and said so: the held record is answered
	printf '%s\n' '{"topic":"wx","partition":0,"offset":1,"t":12,"v":"r12"}' >"$T/r2"
	run --separate-stderr ss-asof --on .t --state "$T/s.db" --right-end-file "$T/end" --select "$vv" \
		/dev/null <(cat "$T/r2")
	assert_success
	assert_output '["l15","r12"]'
	assert_equal "$(sqlite3 "$T/s.db" 'SELECT count(*) FROM asof_held')" 0
	test_must_fail 2 ss-asof --on .t --right-end-file "$T/end" "$T/l" "$T/r1"
	assert_output --partial '--right-end-file needs --state'
}

@test "--right-end-file with --state-dir and with one input of both topics" {
	printf '%s\n' '{"topic":"wx","partition":1,"offset":0,"t":10,"v":"r10"}' '{"topic":"act","partition":1,"offset":0,"t":15,"v":"l15"}' >"$T/in"
	one=(--left-topic act --right-topic wx --on .t --state-dir "$T/d" --right-end-file "$T/end" --select "$vv")
	run --separate-stderr ss-asof "${one[@]}" <(cat "$T/in")
	assert_failure 75
	assert_output ''
	echo '{"topic":"wx","partition":1,"last":0}' >"$T/end"
	echo '{"topic":"act","partition":1,"last":0}' >>"$T/end"
	run --separate-stderr ss-asof "${one[@]}" <(true)
	assert_success
	assert_output '["l15","r10"]'
}

@test "SIGTERM: results written, state committed with held records kept, exit 143" {
	mkfifo "$T/r"
	exec 7<>"$T/r"
	printf '%s\n' '{"topic":"wx","partition":0,"offset":0,"t":10,"v":"a"}' >&7
	ss-asof --on .t --state "$T/s.db" --right-partitions 1 --select "$vv" \
		<(printf '%s\n' '{"topic":"act","partition":0,"offset":0,"t":5,"v":"l5"}' '{"topic":"act","partition":0,"offset":1,"t":20,"v":"l20"}'; exec sleep 30 3>&-) \
		"$T/r" >"$T/out" 2>"$T/err" &
	pid=$!
	for _ in $(seq 50); do [ -s "$T/out" ] && break; sleep 0.1; done
	kill -TERM "$pid"
	wait_status=0
	wait "$pid" || wait_status=$?
	exec 7>&-
	assert_equal "$wait_status" 143
	run cat "$T/out"
	assert_output '["l5",null]'
	# committed at the signal: every record applied, the one at 20 still held
	assert_equal "$(sqlite3 "$T/s.db" 'SELECT topic, offset FROM ss_offsets ORDER BY topic' | tr '\n' ' ')" 'act|1 wx|0 '
	assert_equal "$(sqlite3 "$T/s.db" 'SELECT count(*) FROM asof_held')" 1
	# an exit, not a death: the summary says what is still held
	grep -q 'left 2 .*held 1$' "$T/err"
}

@test "--state: held records survive a restart" {
	printf '%s\n' '{"topic":"wx","partition":0,"offset":0,"t":10,"v":"r10"}' >"$T/r1"
	printf '%s\n' '{"topic":"act","partition":0,"offset":0,"t":15,"v":"l15"}' >"$T/l"
	# the right side stays open and silent: the left record stays held, then we stop
	timeout -s KILL 1 ss-asof --on .t --state "$T/s.db" "$T/l" <(cat "$T/r1"; sleep 5) >"$T/out" 2>/dev/null || true
	[ ! -s "$T/out" ]
	run sqlite3 "$T/s.db" 'select count(*) from asof_held'
	assert_output 1
	printf '%s\n' '{"topic":"wx","partition":0,"offset":1,"t":20,"v":"r20"}' >>"$T/r1"
	run --separate-stderr ss-asof --on .t --state "$T/s.db" --select "$vv" "$T/l" "$T/r1"
	assert_output '["l15","r10"]'
	run sqlite3 "$T/s.db" 'select count(*) from asof_held'
	assert_output 0
}

@test "revise: a left record replayed (same offset) is emitted as its next revision" {
	printf '%s\n' '{"topic":"wx","partition":0,"offset":0,"t":10,"v":"r10"}' '{"topic":"wx","partition":0,"offset":1,"t":20,"v":"r20"}' >"$T/r"
	printf '%s\n' '{"topic":"act","partition":0,"offset":7,"t":15,"v":"l15"}' >"$T/l"
	run --separate-stderr ss-asof --on .t --emit revise --state "$T/s.db" --select "$vv" "$T/l" "$T/r"
	assert_output '["l15","r10",0]'
	run --separate-stderr ss-asof --on .t --emit revise --state "$T/s.db" --select "$vv" "$T/l" "$T/r"
	assert_output '["l15","r10",1]'
}

@test "defer, forward and nearest: records waiting for a right one, held, spilled and back, in release order" {
	# every left record waits (the right side stalls): forward ones with no release
	# point yet, parked beside the release heap in arrival order; the spilled ones come
	# back out of that order, into the heap; nearest ones are in the heap throughout
	python3 -c 'import json, random
random.seed(31)
with open("'"$T"'/l", "w") as l, open("'"$T"'/r", "w") as r:
    for i in range(6000):
        l.write(json.dumps({"t": 3 * i + 1, "k": "s%d" % random.randrange(40), "pad": "x" * 100}) + "\n")
        if i % 3 == 0:
            r.write(json.dumps({"t": 3 * i + random.randrange(6), "k": "s%d" % random.randrange(40)}) + "\n")'
	right() { head -1 "$T/r"; sleep 0.5; tail -n +2 "$T/r"; }
	for dir in nearest forward; do
		python3 "$BATS_TEST_DIRNAME/asof-ref.py" "$T/l" "$T/r" "$dir" 0 -1 1 | sort >"$T/want"
		ss-asof --on .t --by .k --direction "$dir" "$T/l" <(right) >"$T/mem" 2>/dev/null
		sort "$T/mem" | diff -u "$T/want" -
		# (spilled, the order is not the same: they come back by release point)
		SS_ASOF_SPILL_BYTES=60000 ss-asof --on .t --by .k --direction "$dir" "$T/l" <(right) >"$T/spill" 2>"$T/err"
		[ ! -s "$T/err" ]
		sort "$T/spill" | diff -u "$T/want" -
	done
	# forward, in memory: released in the order of their release points, the answers'
	# times (the right records come in time order), ties and the unanswered (at the
	# end) in arrival order, which is the left's time order here
	jq -c '[.right.t // 1e18, .left.t]' "$T/mem" | python3 -c '
import json, sys
order = [json.loads(x) for x in sys.stdin]
assert order == sorted(order) and len(order) == 6000, "not in release order"'
}

@test "defer: held records beyond the memory bound spill to disk, results unchanged" {
	python3 -c 'import json
with open("'"$T"'/l", "w") as l, open("'"$T"'/r", "w") as r:
    for i in range(20000):
        l.write(json.dumps({"t": 2 * i + 1, "k": "s%d" % (i % 10), "pad": "x" * 200}) + "\n")
        r.write(json.dumps({"t": 2 * i, "k": "s%d" % (i % 10)}) + "\n")'
	# the right side stalls after one record: every left record is held
	right() { head -1 "$T/r"; sleep 0.5; tail -n +2 "$T/r"; }
	ss-asof --on .t --by .k "$T/l" <(right) >"$T/mem" 2>/dev/null
	SS_ASOF_SPILL_BYTES=100000 /usr/bin/time -f %M -o "$T/rss.spill" ss-asof --on .t --by .k "$T/l" <(right) >"$T/spill" 2>/dev/null
	cmp "$T/mem" "$T/spill"
	assert_equal "$(wc -l <"$T/spill")" 20000
	# with --state the overflow goes to the state file and survives a kill -9: once the
	# left input is read and the right one silent, the run commits and waits (a slow
	# build, or a loaded machine, takes longer than a fixed second)
	SS_ASOF_SPILL_BYTES=100000 ss-asof --on .t --by .k --state "$T/s.db" "$T/l" <(head -1 "$T/r"; exec sleep 30 3>&-) \
		>/dev/null 2>&1 &
	pid=$!
	q='select count(*) > 19000, sum(spilled) > 18000 from asof_held'
	for _ in $(seq 200); do
		[ "$(sqlite3 "$T/s.db" "$q" 2>/dev/null)" = '1|1' ] && break
		sleep 0.1
	done
	kill -KILL "$pid"
	wait "$pid" || true
	run sqlite3 "$T/s.db" "$q"
	assert_output '1|1'
}

@test "revise: a replay of a record still open continues its revisions" {
	l='{"topic":"act","partition":0,"offset":3,"t":15,"v":"l15"}'
	left() { sleep 0.3; echo "$l"; sleep 0.4; echo "$l"; sleep 1; }
	right() { echo '{"t":10,"v":"r10"}'; sleep 1.1; echo '{"t":12,"v":"r12"}'; sleep 0.4; }
	run --separate-stderr ss-asof --on .t --emit revise --state "$T/s.db" --select "$vv" <(left) <(right)
	assert_output '["l15","r10",0]
["l15","r10",1]
["l15","r12",2]'
	run sqlite3 "$T/s.db" 'select revision from asof_revision'
	assert_output 2
}

@test "revise: a replay older than the retained history revises nothing, counted as expired" {
	printf '%s\n' '{"t":10,"v":"r10"}' '{"t":20,"v":"r20"}' '{"t":30,"v":"r30"}' '{"t":40,"v":"r40"}' '{"t":110,"v":"r110"}' >"$T/r"
	printf '%s\n' '{"topic":"act","partition":0,"offset":0,"t":15,"v":"l15"}' '{"topic":"act","partition":0,"offset":1,"t":100,"v":"l100"}' >"$T/l"
	# the right records come after the left ones, so --retain 0s drops r10 to r30
	run --separate-stderr ss-asof --on .t --emit revise --retain 0s --state "$T/s.db" --select "$vv" \
		"$T/l" <(sleep 0.3; cat "$T/r")
	assert_output '["l15",null,0]
["l100",null,0]
["l100","r10",1]
["l15","r10",1]
["l100","r20",2]
["l100","r30",3]
["l100","r40",4]'
	# l15 again after a seek: r10 was pruned since; its result stands
	head -1 "$T/l" >"$T/l2"
	run --separate-stderr ss-asof --on .t --emit revise --retain 0s --allow-empty-right --state "$T/s.db" \
		--select "$vv" "$T/l2" /dev/null
	assert_success
	assert_output ''
	[[ "$stderr" == *"expired 1"* ]]
}

@test "defer without --state: a bad record that stops the run lets the held records out first" {
	printf '%s\n' '{"t":15,"v":"l15"}' 'bad' >"$T/l"
	printf '%s\n' '{"t":10,"v":"r10"}' '{"t":20,"v":"r20"}' >"$T/r"
	run --separate-stderr ss-asof --on .t --select "$vv" "$T/l" "$T/r"
	assert_failure 1
	assert_output '["l15","r10"]'
	[[ "$stderr" == *"$T/l:2: left: invalid JSON"* ]]
}

@test "Kafka's millisecond timestamps read as seconds: the error suggests --ts-unit ms" {
	printf '%s\n' '{"timestamp":1672567200000,"v":"l"}' >"$T/l"
	printf '%s\n' '{"timestamp":1672567100000,"v":"r"}' >"$T/r"
	run --separate-stderr ss-asof --on .timestamp "$T/l" "$T/r"
	assert_failure 1
	[[ "$stderr" == *".timestamp: time out of range in seconds: if it counts milliseconds (as Kafka's timestamps do), use --ts-unit ms"* ]]
	run --separate-stderr ss-asof --on .timestamp --ts-unit ms --select '[.left.v, .right.v]' "$T/l" "$T/r"
	assert_success
	assert_output '["l","r"]'
	# microseconds are told apart
	printf '%s\n' '{"t":1672567200000000}' | ss-checkpoint "$T/c.db" heartbeat a b --ts .t >/dev/null 2>"$T/err" || true
	grep -q 'if it counts microseconds, use --ts-unit us' "$T/err"
}

@test "over two files on a terminal: a live line (records, rate, share, time left), taken back; none in a file" {
	# big enough that the join outlasts the first redraw (250 ms) on a fast machine
	awk 'BEGIN { for (i = 0; i < 2000000; i++) printf "{\"t\":%d,\"s\":\"s%d\",\"v\":\"left-xxxxxxxxxx\"}\n", i * 2, i % 100 }' >"$T/l"
	awk 'BEGIN { for (i = 0; i < 2000000; i++) printf "{\"t\":%d,\"s\":\"s%d\",\"w\":\"right-yyyyyyyy\"}\n", i * 2 + 1, i % 100 }' >"$T/r"
	on_tty "ss-asof '$T/l' '$T/r' --on .t --by .s >'$T/out'" >"$T/tty"
	grep -aqE 'ss-asof: [0-9]+ records, [0-9]+/s, [0-9]+%, [0-9hms]+ left' "$T/tty"
	[ "$(tail -c 4 "$T/tty" | od -An -c | tr -d ' ')" = '\r033[K' ]
	[ "$(wc -l <"$T/out")" -eq 2000000 ]
	# stderr a file: nothing; --progress: the line even there; --no-progress on a terminal: nothing
	ss-asof "$T/l" "$T/r" --on .t --by .s 2>"$T/err" >/dev/null
	[ ! -s "$T/err" ]
	on_tty "ss-asof '$T/l' '$T/r' --on .t --by .s --no-progress >/dev/null" >"$T/tty2"
	[ ! -s "$T/tty2" ]
	(sleep 0.6; echo '{"t":5}') | ss-asof - "$T/r" --on .t --progress 2>"$T/err2" >/dev/null
	grep -aq 'ss-asof: ' "$T/err2"
}

@test "over pipes on a terminal: no live line unless --progress (their writers show theirs)" {
	on_tty "(echo '{\"t\":1}'; sleep 0.6; echo '{\"t\":2}') | ss-asof - <(echo '{\"t\":0}') --on .t >/dev/null" >"$T/tty"
	[ ! -s "$T/tty" ]
	on_tty "(echo '{\"t\":1}'; sleep 0.6; echo '{\"t\":2}') | ss-asof --progress - <(echo '{\"t\":0}') --on .t >/dev/null" >"$T/tty2"
	grep -aqE 'ss-asof: [0-9]+ records, [0-9]+/s.\[K' "$T/tty2"
}

@test "order of results (ss-asof(1)): defer releases by release point, ties in arrival order; eager and a right file keep the left order" {
	printf '%s\n' '{"t":3,"a":"c"}' '{"t":1,"a":"a"}' '{"t":2,"a":"b"}' '{"t":1,"a":"a2"}' >"$T/l"
	printf '%s\n' '{"t":0,"w":"x"}' '{"t":5,"w":"y"}' >"$T/r"
	run sh -c "cat '$T/r' | ss-asof '$T/l' - --on .t --select .left.a | tr -d '\"' | paste -sd ' '"
	assert_output 'a a2 b c'
	run sh -c "cat '$T/r' | ss-asof '$T/l' - --on .t --emit eager --select .left.a 2>/dev/null | tr -d '\"' | paste -sd ' '"
	assert_output 'c a b a2'
	run sh -c "ss-asof '$T/l' '$T/r' --on .t --select .left.a | tr -d '\"' | paste -sd ' '"
	assert_output 'c a b a2'
	# revise: revision 0 in left order, then the revisions each right record makes when
	# it is read (among those of one right record, the order is not specified); how
	# many there are depends on how the two inputs' records interleave as they come
	printf '%s\n' '{"t":0,"w":"x"}' '{"t":2,"w":"y"}' '{"t":5,"w":"z"}' >"$T/r2"
	cat "$T/r2" | ss-asof "$T/l" - --on .t --emit revise --select '"\(.left.a) \(.revision) \(.right.w)"' 2>/dev/null |
		tr -d '"' >"$T/rev"
	[ "$(awk '$2 == 0 { print $1 }' "$T/rev" | paste -sd ' ')" = 'c a b a2' ]
	# each record's revisions numbered in turn, the last one its exact answer
	run awk '$2 != n[$1]++ { print "revision out of turn: " $0 } { last[$1] = $3 }
		END { print last["a"], last["a2"], last["b"], last["c"] }' "$T/rev"
	assert_output 'x x y y'
}

# big_files N: N left and N right records with 97 keys in $T/bl (in time order), $T/bls
# (the same shuffled) and $T/br, with bad records in the middle of each: one JSON error,
# records without a time or with a bad one, a blank line; and a key only libjq reads on a
# record out of order in the left (a merge turns into an index there).
big_files() {
	python3 - "$T" "$1" <<'PY'
import random, sys
d, n = sys.argv[1], int(sys.argv[2])
left, right = [], []
for i in range(n):
    right.append('{"t":%d,"k":"k%d","v":"r%d","pad":"%s"}' % (2 * i, i % 97, i, "x" * (i % 50)))
    left.append('{"t":%d,"k":"k%d","v":"l%d"}' % (2 * i + 1, i * 7 % 97, i))
    if i == n // 2:
        right += ['{"t": oops}', '{"t":"later","k":"k1"}', '   ']
        left += ['{"k":"k1","v":"no time"}', '{"t":5,"k":{"a":[1]},"v":"object key"}', '[1,2]']
    if i == 3 * n // 4:
        right.append('{"t":%d,"k":"k1"' % (2 * i))
        left.append('{"t":"soon","k":"k1"}\r')
open(d + "/bl", "w").write("\n".join(left) + "\n")
open(d + "/br", "w").write("\n".join(right))  # the last line without its newline
random.Random(7).shuffle(left)
open(d + "/bls", "w").write("\n".join(left) + "\n")
PY
}

# three_runs POLICY CHUNK files|pipes|left-pipe LEFT RIGHT: ss-asof --on .t --by .k
# --on-error POLICY on one thread (run 0), parsed ahead (1), and parsed ahead in reads of
# CHUNK bytes (2), of the files LEFT and RIGHT, of pipes from both, or of a pipe from LEFT
# and the file RIGHT: $T/out.N, err.N, status.N and dead.N (the dead letters of POLICY
# dead-letter).
three_runs() {
	local pol=$1 chunk=$2 how=$3 left=$4 right=$5 opt=$1 run status env
	[ "$pol" = dead-letter ] && opt="dead-letter=$T/dead"
	for run in 0 1 2; do
		rm -f "$T/dead"
		env=(SS_THREADS=0)
		[ "$run" = 1 ] && env=(SS_THREADS=1)
		[ "$run" = 2 ] && env=(SS_THREADS_CHUNK="$chunk")
		status=0
		if [ "$how" = pipes ]; then
			env "${env[@]}" ss-asof --on .t --by .k --on-error "$opt" <(cat "$left") <(cat "$right") \
				>"$T/out.$run" 2>"$T/err.$run" || status=$?
		elif [ "$how" = left-pipe ]; then
			env "${env[@]}" ss-asof --on .t --by .k --on-error "$opt" <(cat "$left") "$right" \
				>"$T/out.$run" 2>"$T/err.$run" || status=$?
		else
			env "${env[@]}" ss-asof --on .t --by .k --on-error "$opt" "$left" "$right" \
				>"$T/out.$run" 2>"$T/err.$run" || status=$?
		fi
		echo "$status" >"$T/status.$run"
		[ ! -f "$T/dead" ] || mv "$T/dead" "$T/dead.$run"
	done
}

# policy_outcome POLICY RUN PATTERN: what three_runs' bad records (6) did under POLICY:
# fail exits 1 with a message of run RUN matching PATTERN (grep -E); skip and
# dead-letter exit 0, setting the six aside (reported in err.RUN, or in dead.RUN).
policy_outcome() {
	local pol=$1 run=$2 pattern=$3
	case $pol in
	fail) assert_equal "$(cat "$T/status.0")" 1
	      grep -Eq "$pattern" "$T/err.$run" ;;
	skip) assert_equal "$(cat "$T/status.0")" 0
	      assert_equal "$(grep -c '(skipped)' "$T/err.$run")" 6 ;;
	dead-letter) assert_equal "$(cat "$T/status.0")" 0
	      assert_equal "$(wc -l <"$T/dead.$run")" 6 ;;
	esac
}

@test "SS_THREADS=0 and threads: large files with bad records in the middle, the same output, messages, dead letters and status" {
	big_files 60000
	for left in bl bls; do for pol in fail skip dead-letter; do
		three_runs "$pol" 4096 files "$T/$left" "$T/br"
		for run in 1 2; do
			cmp "$T/out.0" "$T/out.$run"
			cmp "$T/err.0" "$T/err.$run" || { diff "$T/err.0" "$T/err.$run"; echo "$left $pol $run"; false; }
			cmp "$T/status.0" "$T/status.$run"
			[ "$pol" != dead-letter ] || cmp "$T/dead.0" "$T/dead.$run"
		done
		policy_outcome "$pol" 0 "right: invalid JSON"
	done; done
}

@test "live inputs (pipes) parsed ahead on threads: the same pairs, messages, dead letters and status as on one thread" {
	big_files 30000
	# the same records with envelopes over three partitions each
	python3 - "$T" <<'PY'
import json, sys
for f in ("bl", "br"):
    text = open(sys.argv[1] + "/" + f).read()
    out = []
    for i, line in enumerate(text.split("\n")):
        try:
            o = json.loads(line)
        except ValueError:
            o = None
        if isinstance(o, dict) and "t" in o:
            line = '{"topic":"%s","partition":%d,"offset":%d,%s' % (f, i % 3, i, line[1:])
        out.append(line)
    open(sys.argv[1] + "/" + f + ".env", "w").write("\n".join(out))
PY
	for shape in bare env; do for pol in fail skip dead-letter; do
		sfx=
		[ "$shape" = env ] && sfx=.env
		# (reads of 7 bytes: most lines split across reads)
		three_runs "$pol" 7 pipes "$T/bl$sfx" "$T/br$sfx"
		for run in 0 1 2; do
			sort "$T/out.$run" >"$T/sorted.$run"
			sort "$T/err.$run" | sed 's|/dev/fd/[0-9]*|FD|g' >"$T/msgs.$run"
			[ ! -f "$T/dead.$run" ] || sort -o "$T/dead.$run" "$T/dead.$run"
		done
		for run in 1 2; do
			cmp "$T/status.0" "$T/status.$run"
			# the failing record ends the run where it is read: how far the other input
			# got by then depends on the pipes' timing
			[ "$pol" = fail ] || cmp "$T/sorted.0" "$T/sorted.$run" || { echo "$shape $pol $run: $(wc -l <"$T/out.$run") lines"; false; }
			[ "$pol" = fail ] || cmp "$T/msgs.0" "$T/msgs.$run" || { diff "$T/msgs.0" "$T/msgs.$run"; echo "$shape $pol $run"; false; }
			[ "$pol" != dead-letter ] || cmp "$T/dead.0" "$T/dead.$run"
		done
		policy_outcome "$pol" 1 "invalid JSON|no such field"
		[ "$pol" != skip ] || assert_equal "$(wc -l <"$T/out.1")" 30001
	done; done
}

@test "a left pipe against a right file parsed ahead on a thread: the same output, messages, dead letters and status" {
	big_files 30000
	for left in bl bls; do for pol in fail skip dead-letter; do
		three_runs "$pol" 7 left-pipe "$T/$left" "$T/br"
		for run in 1 2; do
			# (the right file is indexed whole first: all else in the left's order)
			cmp "$T/out.0" "$T/out.$run"
			cmp <(sed 's|/dev/fd/[0-9]*|FD|' "$T/err.0") <(sed 's|/dev/fd/[0-9]*|FD|' "$T/err.$run")
			cmp "$T/status.0" "$T/status.$run"
			[ "$pol" != dead-letter ] || cmp "$T/dead.0" "$T/dead.$run"
		done
		assert_equal "$(cat "$T/status.0")" "$([ "$pol" = fail ] && echo 1 || echo 0)"
		[ "$pol" = fail ] || assert_equal "$(wc -l <"$T/out.1")" 30001
	done; done
}

@test "the right file's order is checked by the time jq reads: the last of a repeated key, escaped or not" {
	# one record of key a, late in the file, repeats "t" (jq keeps the last: 2); read
	# by its first "t" the file would look in order and be merged, and the left record
	# at 3 would miss it
	for dup in '"t":2' '"\u0074":2' '"x":"\"t\"","t":2'; do
		python3 - "$T/r" "$dup" <<'PY'
import sys
lines = ['{"t":0,"k":"a","v":"first"}'] + ['{"t":%d,"k":"b","v":"filler %06d"}' % (i, i) for i in range(1, 3000)]
lines[2500] = '{"t":2500,"k":"a","v":"dup",%s}' % sys.argv[2]
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
PY
		echo '{"t":3,"k":"a"}' >"$T/l"
		for env in SS_THREADS=0 SS_THREADS=1 SS_THREADS_CHUNK=4096; do
			run env "$env" ss-asof --on .t --by .k "$T/l" "$T/r"
			assert_success
			echo "$output" | jq -e '.right.v == "dup"'
		done
	done
}

@test "the history copied and freed by the right file's thread: the reference's pairs, in a merge and after a switch to the index" {
	# right records of 40 keys, some with the same key and time (the later replaces the
	# earlier), pruned as the merge goes; the left file in order (merged to its end), or
	# out of order from its middle (the run goes on from the right file's index, and the
	# right record read ahead is dropped). Batches of 512 bytes hand the pruned buffers
	# back hundreds of times.
	python3 - "$T" <<'PY'
import random, sys
d = sys.argv[1]
rnd = random.Random(11)
right, t = [], 0
for i in range(2000):
    t += rnd.choice((0, 1, 1, 2, 3))
    right.append('{"t":%d,"k":"k%d","v":"r%d","pad":"%s"}' % (t, rnd.randrange(40), i, "x" * rnd.randrange(60)))
left = sorted(('{"t":%d,"k":"k%d","v":"l%d"}' % (rnd.randrange(t + 5), rnd.randrange(40), i) for i in range(800)),
              key=lambda l: int(l.split(":")[1].split(",")[0]))
open(d + "/r", "w").write("\n".join(right) + "\n")
open(d + "/l", "w").write("\n".join(left) + "\n")
tail = left[400:]
rnd.shuffle(tail)
open(d + "/ls", "w").write("\n".join(left[:400] + tail) + "\n")
PY
	for left in l ls; do for dir in backward forward nearest; do
		python3 "$BATS_TEST_DIRNAME/asof-ref.py" "$T/$left" "$T/r" "$dir" 0 -1 1 | sort >"$T/want"
		for env in SS_THREADS=0 SS_THREADS=1 SS_THREADS_CHUNK=512; do
			env "$env" ss-asof --on .t --by .k --direction "$dir" "$T/$left" "$T/r" >"$T/out"
			sort "$T/out" >"$T/got"
			diff -u "$T/want" "$T/got" || { echo "$left $dir $env"; false; }
		done
	done; done
}

@test "SIGTERM with the files parsed ahead on threads, the output blocked: exit 143 at once" {
	big_files 100000
	mkfifo "$T/o"
	# a slow reader: the join waits on its output, the threads on a full queue
	python3 -c 'import sys, time
while sys.stdin.buffer.read(65536):
    time.sleep(0.05)' <"$T/o" &
	reader=$!
	SS_THREADS=1 ss-asof --on .t --by .k --on-error skip "$T/bl" "$T/br" >"$T/o" 2>"$T/err" &
	pid=$!
	sleep 1
	kill -0 "$pid"
	start=$(date +%s%N)
	kill -TERM "$pid"
	wait_status=0
	wait "$pid" || wait_status=$?
	took=$(( ($(date +%s%N) - start) / 1000000 ))
	kill "$reader" 2>/dev/null || true
	wait "$reader" || true
	assert_equal "$wait_status" 143
	[ "$took" -lt 2000 ] || { echo "took $took ms"; false; }
}

@test "a right file's record longer than the index's 16 MB length field is spliced whole, CRLF and all" {
	python3 -c '
import json
big = "x" * (17 << 20)
open("'"$T"'/r", "w").write(json.dumps({"t": 1, "k": "a", "big": big}) + "\r\n" + json.dumps({"t": 5, "k": "b"}) + "\n")
open("'"$T"'/l", "w").write(json.dumps({"t": 3, "k": "a"}) + "\n" + json.dumps({"t": 6, "k": "b"}) + "\n")'
	ss-asof "$T/l" "$T/r" --on .t --by .k >"$T/out"
	run jq -c '[.left.k, (.right.big | length), .right.t]' "$T/out"
	assert_output $'["a",17825792,1]\n["b",0,5]'
}

# The output is written by a thread of its own unless SS_THREADS=0 (ss_writer_async):
# a failed write is still reported by the join's thread, as before.
big_pair() {
	awk 'BEGIN { for (i = 0; i < 60000; i++) printf "{\"t\":%d,\"k\":\"k%d\",\"pad\":\"%0100d\"}\n", 2 * i, i % 97, i }' >"$T/bl"
	awk 'BEGIN { for (i = 0; i < 60000; i++) printf "{\"t\":%d,\"k\":\"k%d\",\"v\":%d}\n", 2 * i + 1, i % 97, i }' >"$T/br"
}

@test "a reader gone (a closed pipe) ends ss-asof quietly with 141, with or without the writer's thread" {
	big_pair
	for threads in 0 1; do
		run --separate-stderr bash -c 'SS_THREADS=$1 ss-asof "$2" "$3" --on .t --by .k | head -c 1000 >/dev/null; echo "${PIPESTATUS[0]}"' _ "$threads" "$T/bl" "$T/br"
		assert_success
		assert_output 141
		[ -z "$stderr" ]
	done
}

@test "a failed write of the output (disk full) exits 1 naming stdout, with or without the writer's thread" {
	big_pair
	for threads in 0 1; do
		run --separate-stderr bash -c 'SS_THREADS=$1 ss-asof "$2" "$3" --on .t --by .k >/dev/full' _ "$threads" "$T/bl" "$T/br"
		assert_failure 1
		[ "$stderr" = 'ss-asof: stdout: write: No space left on device' ] # once
	done
}

@test "the output is the same whole with the writer's thread and without" {
	big_pair
	SS_THREADS=0 ss-asof "$T/bl" "$T/br" --on .t --by .k >"$T/one"
	ss-asof "$T/bl" "$T/br" --on .t --by .k >"$T/two"
	[ "$(wc -l <"$T/one")" -eq 60000 ]
	cmp "$T/one" "$T/two"
	ss-asof "$T/bl" "$T/br" --on .t --by .k --select '[.left.t, .right.v]' | cmp - <(SS_THREADS=0 ss-asof "$T/bl" "$T/br" --on .t --by .k --select '[.left.t, .right.v]')
}

# 40,000 keys of one right record each, then a left record for each: every answer is
# its key's one record, and the history (each key's newest record stays in memory) is
# ~7 MB, a hundred times SS_ASOF_HISTORY_BYTES
many_keys() {
	awk 'BEGIN { for (k = 1; k <= 40000; k++)
		printf "{\"k\":\"k%d\",\"t\":%d,\"w\":%d,\"pad\":\"%0100d\"}\n", k, 10 * k, k, 0 }' >"$T/mr"
	awk 'BEGIN { for (i = 1; i <= 40000; i++) printf "{\"k\":\"k%d\",\"t\":%d,\"a\":%d}\n", (i * 7919) % 40000 + 1, 500000 + i, i }' >"$T/ml"
	awk 'BEGIN { for (i = 1; i <= 40000; i++) printf "[%d,%d]\n", i, (i * 7919) % 40000 + 1 }' >"$T/mwant"
}

@test "a history over its memory bound that evictions cannot shrink (many keys) is not evicted again on every record" {
	many_keys
	# an eviction is a pass over every key: run on each of the 40,000 right records it
	# took minutes; amortized, well under a second (the timeout only stops a regression)
	for state in "" "--state=$T/s.db"; do
		SS_ASOF_HISTORY_BYTES=65536 timeout 30 ss-asof $state <(cat "$T/ml") <(cat "$T/mr") --by .k --on .t \
			--select '[.left.a, .right.w]' >"$T/mgot"
		cmp "$T/mgot" "$T/mwant"
	done
}
