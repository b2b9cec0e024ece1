#!/usr/bin/env bash
# bench/checkpoint.sh [N]: N activity envelopes (4 partitions, RFC 3339 event times) and
# N weather records. Times `ss-checkpoint heartbeat` and `ss-checkpoint pulse` (no
# downtime: the bookkeeping cost of a healthy pipeline) against `jq -c .value.timestamp`
# over the same file, in the same run, then both filters at once on one state file.
# Prints seconds, peak RSS and the ratio (goal: ratio well below 1.0, flat RSS).
set -eu
cd "$(dirname "$0")/.."
n=${1:-1000000}
dir=${BENCH_DIR:-$(mktemp -d)}
trap 'rm -rf "$dir"' EXIT
make -s bin/ss-checkpoint >/dev/null
python3 - "$n" "$dir" <<'PY'
import sys, time
n, d = int(sys.argv[1]), sys.argv[2]
base = 1672567200  # 2023-01-01T10:00:00Z
def ts(s): return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(s))
with open(d + "/weather", "w") as w, open(d + "/activity", "w") as a:
    for i in range(n):
        w.write('{"timestamp":"%s","value":"sun"}\n' % ts(base + i))
        a.write('{"topic":"activity","partition":%d,"offset":%d,"timestamp":0,"key":null,'
                '"value":{"timestamp":"%s","value":"walking home"},"headers":{}}\n'
                % (i % 4, i // 4, ts(base + i)))
PY
timed() { /usr/bin/time -f '%e %M' -o "$dir/time" "$@" >/dev/null 2>"$dir/err" || { cat "$dir/err" >&2; exit 1; }; cat "$dir/time"; }
read -r jq_s jq_kb < <(timed jq -c .value.timestamp "$dir/activity")
read -r hb_s hb_kb < <(timed sh -c "bin/ss-checkpoint '$dir/hb.db' heartbeat activity weather <'$dir/weather'")
read -r pu_s pu_kb < <(timed sh -c "bin/ss-checkpoint '$dir/pu.db' pulse activity --dependency weather=30d --ts .value.timestamp <'$dir/activity'")
start=$(date +%s.%N)
bin/ss-checkpoint "$dir/both.db" heartbeat activity weather <"$dir/weather" >/dev/null &
bin/ss-checkpoint "$dir/both.db" pulse activity --dependency weather=30d --ts .value.timestamp <"$dir/activity" >/dev/null
wait
both_s=$(echo "$(date +%s.%N) - $start" | bc)
echo "records: $n activity envelopes, $n weather"
echo "jq -c .value.timestamp (activity): ${jq_s}s, ${jq_kb} kB"
echo "heartbeat (weather):               ${hb_s}s, ${hb_kb} kB"
echo "pulse (activity):                  ${pu_s}s, ${pu_kb} kB"
echo "heartbeat + pulse, one state file: ${both_s}s"
echo "ratio pulse/jq: $(echo "scale=3; $pu_s / $jq_s" | bc)"
