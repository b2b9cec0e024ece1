#!/usr/bin/env bash
# bench/cache.sh [N]: ss-cache put of N (default 1,000,000) seed-shaped weather records
# keyed by [station, timestamp], against jq -c .timestamp over the same file, in one run.
# Prints both times, the ratio (target <= 2.0) and ss-cache's peak RSS (target < 64 MB).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000000}
dir=${BENCH_DIR:-bench/.data}
mkdir -p "$dir"
data="$dir/weather-$n.ndjson"
[ -s "$data" ] || python3 - "$n" >"$data" <<'PY'
import json, random, sys
random.seed(1)
values = ["🌞", "⛅", "🌧", "❄", "🌫"]
t = 1672531200
for i in range(int(sys.argv[1])):
    t += random.randint(0, 2)
    print(json.dumps({"station": "s%d" % random.randrange(100), "timestamp": t,
                      "value": random.choice(values), "temp": round(random.uniform(-10, 35), 1)},
                     ensure_ascii=False, separators=(",", ":")))
PY
timed() { /usr/bin/time -f '%e %M' -o "$dir/time" "$@" >/dev/null; cat "$dir/time"; }
rm -f "$dir/cache.db" "$dir/cache.db-wal" "$dir/cache.db-shm"
read -r jq_s _ < <(timed jq -c .timestamp "$data")
read -r ss_s ss_kb < <(timed bin/ss-cache "$dir/cache.db" put --key '[.station,.timestamp]' <"$data")
read -r scan_s _ < <(timed bin/ss-cache "$dir/cache.db" scan)
printf 'records            %d\n' "$n"
printf 'jq -c .timestamp   %6.2f s\n' "$jq_s"
printf 'ss-cache put       %6.2f s   %.0f records/s   peak RSS %d MB\n' "$ss_s" "$(echo "$n / $ss_s" | bc -l)" $((ss_kb / 1024))
printf 'ss-cache scan      %6.2f s\n' "$scan_s"
printf 'ratio put/jq       %6.2f   (target <= 2.0)\n' "$(echo "$ss_s / $jq_s" | bc -l)"
