#!/usr/bin/env bash
# bench/kafka.sh [N]: ss-produce and ss-consume against kcat, in one run, on a real Apache
# Kafka broker (scripts/kafka-up; or $BROKERS if set) and on the mock (ss-mock-broker).
#   produce: N (default 1,000,000) seed-shaped NDJSON lines, `ss-produce` vs `kcat -P`
#   consume: the same topic read to its end, `ss-consume -e` vs `kcat -C -J -e`, each piped
#            into wc -l (both read the topic kcat wrote, so they read the same messages)
# Prints the best of BENCH_ROUNDS (default 3) runs of each, wall and CPU seconds, records/s
# and the ratio ss/kcat (target >= 1.0 both ways).
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

rounds=${BENCH_ROUNDS:-3}
# run INPUT CMD...: wall and CPU (user+sys) seconds of one run on INPUT, "wall cpu"
run() {
	local input=$1
	shift
	/usr/bin/time -f '%e %U %S' -o "$dir/time" "$@" <"$input"
	awk '{printf "%s %.2f\n", $1, $2 + $3}' "$dir/time"
}
# best VAR INPUT CMD...: the fastest of $rounds runs (the machine may be shared) into VAR
best() {
	local var=$1 input=$2 w c bw=999999 bc=0
	shift 2
	for ((r = 0; r < rounds; r++)); do
		read -r w c < <(run "$input" "$@")
		if (($(echo "$w < $bw" | bc))); then bw=$w bc=$c; fi
	done
	printf -v "$var" '%s %s' "$bw" "$bc"
}
line() { # what n wall cpu [ratio]
	printf '  %-34s %8d  %6.2f s wall %6.2f s cpu %9.0f/s%s\n' "$1" "$2" "$3" "$4" \
		"$(echo "$2 / $3" | bc -l)" "${5:+   ss/kcat $5}"
}

# bench_on TITLE BROKERS TOPIC_KCAT TOPIC_SS: both produce the file (each round adds it
# again: throughput is what counts), both read kcat's topic to its end.
bench_on() {
	local title=$1 b=$2 tk=$3 tss=$4 kp ki sp kc sc kc_n sc_n
	best kp "$data" kcat -P -b "$b" -t "$tk"
	best ki "$data" kcat -P -X enable.idempotence=true -b "$b" -t "$tss"
	best sp "$data" bin/ss-produce -b "$b" "$tss"
	best kc /dev/null sh -c "kcat -C -J -e -q -b '$b' -t '$tk' -o beginning | wc -l >'$dir/kc_n'"
	best sc /dev/null sh -c "bin/ss-consume -e -b '$b' '$tk' | wc -l >'$dir/sc_n'"
	kc_n=$(cat "$dir/kc_n") sc_n=$(cat "$dir/sc_n")
	read -r kpw kpc <<<"$kp"; read -r kiw kic <<<"$ki"; read -r spw spc <<<"$sp"
	read -r kcw kcc <<<"$kc"; read -r scw scc <<<"$sc"
	printf '%s, %d partitions, best of %d\n' "$title" "$parts" "$rounds"
	line "produce lines: kcat -P" "$n" "$kpw" "$kpc"
	line "produce lines: kcat -P, idempotent" "$n" "$kiw" "$kic"
	line "produce lines: ss-produce" "$n" "$spw" "$spc" "$(printf %.2f "$(echo "$kpw / $spw" | bc -l)")"
	printf '  %-34s %s\n' "(ss-produce is idempotent:" "ss/kcat-idempotent $(printf %.2f "$(echo "$kiw / $spw" | bc -l)"))"
	line "consume msgs:  kcat -C -J -e" "$kc_n" "$kcw" "$kcc"
	line "consume msgs:  ss-consume -e" "$sc_n" "$scw" "$scc" \
		"$(printf %.2f "$(echo "($sc_n / $scw) / ($kc_n / $kcw)" | bc -l)")"
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
