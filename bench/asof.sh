#!/usr/bin/env bash
# bench/asof.sh [N]: N weather + N activity records (the seed's shape, 100 stations, in
# time order); times `ss-asof --by .station --on .timestamp --emit defer` against
# `jq -c .timestamp` over both files, in the same run. Prints seconds, peak RSS and the
# ratio (goal: ratio <= 1.0, RSS < 100 MB and flat as N grows).
set -eu
cd "$(dirname "$0")/.."
n=${1:-1000000}
dir=${BENCH_DIR:-$(mktemp -d)}
trap 'rm -rf "$dir"' EXIT
make -s bin/ss-asof >/dev/null
python3 - "$n" "$dir" <<'PY'
import sys, time
n, d = int(sys.argv[1]), sys.argv[2]
base = 1672567200  # 2023-01-01T10:00:00Z
sky = ["\U0001F31E", "\u26C5", "\U0001F327"]
acts = ["swimming", "walking home", "shopping", "lunch"]
def ts(s): return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(s))
with open(d + "/weather", "w") as w, open(d + "/activity", "w") as a:
    for i in range(n):
        w.write('{"timestamp":"%s","station":"st%d","value":"%s"}\n' % (ts(base + 2 * i), i % 100, sky[i % 3]))
        a.write('{"timestamp":"%s","station":"st%d","value":"%s"}\n' % (ts(base + 2 * i + 1), (i * 7) % 100, acts[i % 4]))
PY
timed() { /usr/bin/time -f '%e %M' -o "$dir/time" "$@" >/dev/null 2>"$dir/err" || { cat "$dir/err" >&2; exit 1; }; cat "$dir/time"; }
read -r jq_s jq_kb < <(timed sh -c "jq -c .timestamp '$dir/weather' '$dir/activity'")
read -r ss_s ss_kb < <(timed bin/ss-asof --by .station --on .timestamp --emit defer "$dir/activity" "$dir/weather")
echo "records: $n + $n"
echo "jq -c .timestamp: ${jq_s}s, ${jq_kb} kB"
echo "ss-asof defer:    ${ss_s}s, ${ss_kb} kB"
echo "ratio ss-asof/jq: $(echo "scale=3; $ss_s / $jq_s" | bc)"
