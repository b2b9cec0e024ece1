#!/usr/bin/env bash
# bench/keys.sh [N]: does a key cost the same with 100, 10,000 or 1,000,000 distinct keys
# (issue 14: the key map stays O(1))? N (default 1,000,000) records per side of the wide
# shape (bench/gen.py --shape wide --stations K), the key at .meta.station. For each K:
# ss-asof's join (whole records, --select of two fields, and whole records with both
# files given through pipes, a live join, whose right history is bounded in memory and
# evicted to disk beyond it: with many keys its newest records per key stay) and
# ss-cache put keyed by the station (K rows, each overwritten N/K times), each against
# the same run at K = 100 in this invocation: the ratio is the cost of more keys (1.0:
# none). Also the topic-
# partitions of ss-checkpoint's pulse: 300,000 records over 100, 10,000 and 100,000
# partitions, each against 100. Then the key's form at 10,000 keys: the same join and
# put keyed by an array of paths ([.meta.station]) and by a path with a literal for a
# missing key (.meta.station // null), each against the plain path. Prints wall and CPU
# seconds, peak RSS and the ratios.
# KEYS_IR=1 also counts each run's instructions (valgrind's cachegrind, one thread, the
# same inputs): flat instructions beside rising times say the work per record stays the
# same and the time goes to memory; about 4 minutes per million records and run.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000000}
dir=${BENCH_DIR:-bench/.data}
mkdir -p "$dir"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
make -s bin/ss-asof bin/ss-cache bin/ss-checkpoint >/dev/null

# run NAME CMD...: wall, CPU (user + system) and peak RSS of CMD, its output dropped
run() {
	local name=$1
	shift
	/usr/bin/time -f '%e %U %S %M' -o "$out/time" "$@" >/dev/null
	read -r wall user sys kb <"$out/time"
	echo "$name $wall $(echo "$user + $sys" | bc) $((kb / 1024))"
}

# ir NAME K RECORDS CMD...: instructions CMD executes, per record, its output dropped
ir() {
	local name=$1 k=$2 records=$3
	shift 3
	SS_THREADS=0 valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
		"$@" >/dev/null 2>"$out/cg"
	echo "$name $k $(sed -n 's/.*I *refs: *//p' "$out/cg" | tr -d ,) $records"
}

data() { # data K: the wide files with K stations
	local d="$dir/keys-$n-$1"
	[ -f "$d/.done" ] || { python3 bench/gen.py "$n" "$d" --shape wide --stations "$1" >/dev/null && touch "$d/.done"; }
	echo "$d"
}

parts() { # parts P: 300,000 enveloped records over P partitions, times rising
	local f="$dir/parts-$1.ndjson"
	[ -s "$f" ] || python3 - "$1" >"$f" <<'PY'
import sys
p = int(sys.argv[1])
for i in range(300000):
    print('{"topic":"activity","partition":%d,"offset":%d,"timestamp":0,"key":null,'
          '"value":{"timestamp":%d,"value":"walking home"},"headers":{}}' % (i % p, i // p, 1672567200 + i))
PY
	echo "$f"
}

join=(--by .meta.station --on .ts --ts-unit ms)
{
	for k in 100 10000 1000000; do
		d=$(data "$k")
		run "ss-asof $k" bin/ss-asof "$d/activity.ndjson" "$d/weather.ndjson" "${join[@]}"
		run "ss-asof--select $k" bin/ss-asof "$d/activity.ndjson" "$d/weather.ndjson" "${join[@]}" \
			--select '[.left.aid, .right.wid]'
		run "ss-asof-pipes $k" bash -c 'bin/ss-asof <(cat "$1") <(cat "$2") "${@:3}"' _ \
			"$d/activity.ndjson" "$d/weather.ndjson" "${join[@]}"
		rm -f "$out"/c.db*
		run "ss-cache-put $k" bin/ss-cache "$out/c.db" put --key .meta.station <"$d/weather.ndjson"
	done
	for p in 100 10000 100000; do
		f=$(parts "$p")
		rm -f "$out"/p.db*
		run "ss-checkpoint-pulse $p" sh -c "bin/ss-checkpoint '$out/p.db' pulse activity \
			--dependency weather=30d --ts .value.timestamp <'$f'"
	done
} >"$out/runs"
echo "records: $n per side (ss-checkpoint: 300,000)"
# ratios COLUMN RATIO FILE: the runs of FILE ("name column wall cpu rss" lines), each
# with its wall time against the first run of its name
ratios() {
	printf '%-22s %10s %8s %8s %8s %10s\n' run "$1" wall_s cpu_s rss_mb "$2"
	awk '{ if (!($1 in base)) base[$1] = $3
		printf "%-22s %10s %8.2f %8.2f %8d %9.2fx\n", $1, $2, $3, $4, $5, $3 / base[$1] }' "$3"
}
ratios keys x_first "$out/runs"

# the key's form: the same keys written three ways (every record has .meta.station)
forms=(path .meta.station array '[.meta.station]' alternative '.meta.station // null')
{
	d=$(data 10000)
	for ((i = 0; i < ${#forms[@]}; i += 2)); do
		run "ss-asof ${forms[i]}" bin/ss-asof "$d/activity.ndjson" "$d/weather.ndjson" \
			--by "${forms[i + 1]}" --on .ts --ts-unit ms
		rm -f "$out"/c.db*
		run "ss-cache-put ${forms[i]}" bin/ss-cache "$out/c.db" put --key "${forms[i + 1]}" \
			<"$d/weather.ndjson"
	done
} >"$out/forms"
echo
echo "the key's form at 10,000 keys: path .meta.station, array [.meta.station]," \
	"alternative .meta.station // null"
ratios form x_path "$out/forms"
[ "${KEYS_IR:-0}" = 1 ] || exit 0
{
	for k in 100 10000 1000000; do
		d=$(data "$k")
		ir ss-asof "$k" $((2 * n)) bin/ss-asof "$d/activity.ndjson" "$d/weather.ndjson" "${join[@]}"
		ir ss-asof--select "$k" $((2 * n)) bin/ss-asof "$d/activity.ndjson" "$d/weather.ndjson" \
			"${join[@]}" --select '[.left.aid, .right.wid]'
		rm -f "$out"/c.db*
		ir ss-cache-put "$k" "$n" bin/ss-cache "$out/c.db" put --key .meta.station <"$d/weather.ndjson"
	done
	for p in 100 10000 100000; do
		f=$(parts "$p")
		rm -f "$out"/p.db*
		ir ss-checkpoint-pulse "$p" 300000 bin/ss-checkpoint "$out/p.db" pulse activity \
			--dependency weather=30d --ts .value.timestamp <"$f"
	done
} >"$out/irs"
echo
echo "instructions (cachegrind, SS_THREADS=0), per record"
printf '%-22s %10s %12s %10s\n' run keys instr_per_rec "x_first"
awk '{ name = $1; per = $3 / $4
	if (!(name in base)) base[name] = per
	printf "%-22s %10s %12.0f %9.3fx\n", name, $2, per, per / base[name] }' "$out/irs"
