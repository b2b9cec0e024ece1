#!/usr/bin/env bash
# bench/kafka.sh [N]: ss-produce and ss-consume against kcat, in one run, on a real Apache
# Kafka broker (scripts/kafka-up; or $BROKERS if set) and on the mock (ss-mock-broker).
#   produce: N (default 1,000,000) seed-shaped NDJSON lines, `ss-produce` vs `kcat -P`
#   consume: the same topic read to its end, `ss-consume -e` vs `kcat -C -J -e`, each piped
#            into wc -l (both read the topic kcat wrote, so they read the same messages)
# Prints records/s and the ratio ss/kcat for each (target >= 1.0 both ways).
# The mock keeps only ~5 MB per partition, so it holds fewer than N records at the end.
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
parts=${BENCH_PARTITIONS:-4}
cleanup=()
trap 'for c in "${cleanup[@]}"; do eval "$c"; done' EXIT

secs() { /usr/bin/time -f '%e' -o "$dir/time" "$@"; cat "$dir/time"; }
rate() { echo "$1 / $2" | bc -l; }

# bench_on TITLE BROKERS TOPIC_KCAT TOPIC_SS: both produce the file, both read kcat's topic.
bench_on() {
	local title=$1 b=$2 tk=$3 tss=$4 k_s ss_s kc_s sc_s kc_n sc_n
	k_s=$(secs kcat -P -b "$b" -t "$tk" <"$data")
	ss_s=$(secs bin/ss-produce -b "$b" "$tss" <"$data")
	kc_s=$(secs sh -c "kcat -C -J -e -q -b '$b' -t '$tk' -o beginning | wc -l >'$dir/kc_n'")
	sc_s=$(secs sh -c "bin/ss-consume -e -b '$b' '$tk' | wc -l >'$dir/sc_n'")
	kc_n=$(cat "$dir/kc_n") sc_n=$(cat "$dir/sc_n")
	printf '%s, %d partitions\n' "$title" "$parts"
	printf '  produce %7d lines  kcat -P        %6.2f s %9.0f/s\n' "$n" "$k_s" "$(rate "$n" "$k_s")"
	printf '  produce %7d lines  ss-produce     %6.2f s %9.0f/s   ss/kcat %.2f\n' "$n" "$ss_s" \
		"$(rate "$n" "$ss_s")" "$(echo "$k_s / $ss_s" | bc -l)"
	printf '  consume %7d msgs   kcat -C -J -e  %6.2f s %9.0f/s\n' "$kc_n" "$kc_s" "$(rate "$kc_n" "$kc_s")"
	printf '  consume %7d msgs   ss-consume -e  %6.2f s %9.0f/s   ss/kcat %.2f\n' "$sc_n" "$sc_s" \
		"$(rate "$sc_n" "$sc_s")" "$(echo "($sc_n / $sc_s) / ($kc_n / $kc_s)" | bc -l)"
}

if [ -z "${BROKERS:-}" ] && [ "${BENCH_REAL:-1}" = 1 ]; then
	kdir=$(mktemp -d "${TMPDIR:-/tmp}/ss-bench-kafka.XXXXXX")
	BROKERS=$(scripts/kafka-up "$kdir" | sed -n 's/^BROKERS=//p')
	cleanup+=("scripts/kafka-down '$kdir' >/dev/null 2>&1; rm -rf '$kdir'")
fi
if [ -n "${BROKERS:-}" ]; then
	tk=bench-kcat-$$-$RANDOM tss=bench-ss-$$-$RANDOM
	scripts/kafka-topic "$BROKERS" "$tk" "$parts" >/dev/null
	scripts/kafka-topic "$BROKERS" "$tss" "$parts" >/dev/null
	bench_on "real Kafka $BROKERS" "$BROKERS" "$tk" "$tss"
fi

# The mock, kept alive by an open pipe on its stdin.
mkfifo "$dir/mock.in.$$"
bin/ss-mock-broker --topic bench-k:"$parts" --topic bench-s:"$parts" <"$dir/mock.in.$$" \
	>"$dir/mock.out" 2>/dev/null &
exec 9>"$dir/mock.in.$$"
cleanup+=("exec 9>&-; rm -f '$dir/mock.in.$$'")
for _ in $(seq 50); do MB=$(sed -n 's/^BROKERS=//p' "$dir/mock.out"); [ -n "$MB" ] && break; sleep 0.1; done
bench_on "mock cluster (keeps ~5 MB per partition)" "$MB" bench-k bench-s
