#!/bin/sh
# tests/torture/sanitize.sh: the fast suite under ASan+UBSan, then every tool under valgrind.
#  1. make SANITIZE=1 (everything in build/sanitize, which bin/ then points to), then bats tests/
#     with leak detection on and any report fatal; counts suites' tests and failures.
#  2. make (back to the normal build), then valgrind --error-exitcode=99 over each tool on
#     representative inputs: only errors and definite leaks count ("still reachable"
#     memory of librdkafka and libjq is not a leak).
#  3. "suite" (not run by default: slow): the bats files with every tool run under
#     valgrind (wrappers in a copy of tests/), counting the runs with errors or definite
#     leaks; tests bound by time may fail under valgrind's slowness and do not count.
# Prints figures; exits 1 if a test failed under the sanitizers or valgrind found anything.
# SANITIZE_BATS: the bats files to run (default: every tests/*.bats);
# SANITIZE_STAGES: "asan valgrind" (the default), and/or "suite".
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
fail=0
# shellcheck disable=SC2086
files=${SANITIZE_BATS:-$(ls tests/*.bats)}

stages=${SANITIZE_STAGES:-asan valgrind}
case " $stages " in *" asan "*)
echo "== sanitizers: make SANITIZE=1, bats under ASan+UBSan"
make -s SANITIZE=1 >/dev/null || { echo "sanitize: build failed"; exit 1; }
# Reports go to files as well as failing the run: a test that captures a tool's stderr
# with `run` would otherwise keep the report to itself (CI once counted "0 sanitizer
# reports" for a test that had failed on one).
reps=$(mktemp -d)
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1:log_path=$reps/asan"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$reps/ubsan"
# libjq 1.6 leaks the pending object key on a parse error inside an object (its bug)
export LSAN_OPTIONS="suppressions=$ROOT/tests/fuzz/lsan.supp:print_suppressions=0"
# The random topologies, join inputs and downtime episodes: a few seeds (the normal run
# has 10-30); what ASan looks for is in the code paths, which a few seeds already take.
export SS_TOPO_SEEDS=${SS_TOPO_SEEDS:-1 2}
export SS_PROPERTY_SEEDS=${SS_PROPERTY_SEEDS:-3}
export SS_CHECKPOINT_SEEDS=${SS_CHECKPOINT_SEEDS:-8}
log=$(mktemp)
t0=$(date +%s)
# shellcheck disable=SC2086
bats --timing $files >"$log" 2>&1
total=$(grep -c '^ok \|^not ok ' "$log")
failed=$(grep -c '^not ok ' "$log")
# (a report is a file with an ERROR or a runtime error; LSan also writes a file for a
# warning such as "Unable to get registers from thread N", a thread that was exiting)
reports=$(grep -l 'ERROR: \|runtime error:' -r "$reps" | wc -l)
echo "sanitize: $total tests under ASan+UBSan, $failed failed, $reports sanitizer reports ($(($(date +%s) - t0)) s)"
echo "sanitize: the slowest tests:"
sed -n 's/^ok \(.*\) in \([0-9]*\)ms$/\2 \1/p' "$log" | sort -rn | head -8 | sed 's/^/  ms /'
if [ "$failed" -gt 0 ] || [ "$reports" -gt 0 ]; then
	grep -A30 '^not ok ' "$log" | head -120
	grep -l 'ERROR: \|runtime error:' -r "$reps" | xargs -r head -40 | head -160
	fail=1
fi
rm -rf "$log" "$reps"
;; esac

case " $stages " in *" suite "*)
echo "== valgrind suite: bats with every tool under valgrind"
make -s >/dev/null || { echo "sanitize: normal build failed"; exit 1; }
V=$(mktemp -d)
mkdir "$V/bin" "$V/logs"
cp -r tests man scripts "$V/"
for t in bin/ss-*; do
	n=${t#bin/}
	if [ "$n" = ss-mock-broker ]; then # the test cluster, not a tool under test
		ln -s "$ROOT/$t" "$V/bin/$n"
		continue
	fi
	printf '#!/bin/sh\nexec valgrind -q --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite --suppressions=%s --log-file=%s/%s.%%p.log %s "$@"\n' \
		"$ROOT/tests/torture/valgrind.supp" "$V/logs" "$n" "$ROOT/$t" >"$V/bin/$n"
	chmod +x "$V/bin/$n"
done
(cd "$V" && bats $files) >"$V/bats.log" 2>&1
runs=$(find "$V/logs" -type f | wc -l)
bad=$(find "$V/logs" -type f -size +0 | wc -l)
echo "valgrind suite: $(grep -c '^ok ' "$V/bats.log") of $(grep -c '^ok \|^not ok ' "$V/bats.log") tests passed, $runs tool runs, $bad with errors or definite leaks"
find "$V/logs" -type f -size +0 -exec cat {} + | head -80
[ "$bad" -eq 0 ] || fail=1
rm -rf "$V"
;; esac

case " $stages " in *" valgrind "*) ;; *) exit $fail ;; esac
echo "== valgrind: make, each tool over representative inputs"
make -s >/dev/null || { echo "sanitize: normal build failed"; exit 1; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
runs=0 errs=0
# vg NAME STDIN CMD...: one valgrind run; counts runs and the ones with errors or leaks.
vg() {
	name=$1 in=$2
	shift 2
	runs=$((runs + 1))
	valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
		--show-leak-kinds=definite --suppressions="$ROOT/tests/torture/valgrind.supp" \
		--log-file="$W/vg.$runs" "$@" <"$in" >"$W/out.$runs" 2>"$W/err.$runs"
	st=$?
	if [ "$st" -eq 99 ] || [ "$st" -ge 128 ]; then
		errs=$((errs + 1))
		echo "valgrind: $name: status $st"
		head -40 "$W/vg.$runs"
	fi
}

python3 -c '
import json
for i in range(3000):
    print(json.dumps({"topic": "t", "partition": i % 3, "offset": i // 3, "timestamp": 1672567200000 + i,
                      "key": "s%d" % (i % 7), "value": {"station": "s%d" % (i % 7), "t": 1672567200 + i, "v": i}}))' >"$W/env"
printf '%s\n' '{"key":"a"}' '{"key":"b","x":[1,{"y":null}]}' '{"bad' >"$W/bad"
: >"$W/empty"
vg "ss-cache put" "$W/env" bin/ss-cache "$W/c.db" put
vg "ss-cache put replay" "$W/env" bin/ss-cache "$W/c.db" put --tee
vg "ss-cache put tuple key" "$W/env" bin/ss-cache "$W/t.db" put --key '[.value.station, .value.t]' --value .value --retain-count 100
vg "ss-cache put jq key" "$W/env" bin/ss-cache "$W/j.db" put --key '.value | "\(.station)-\(.v % 10)"' --retain-age 1h --ts-unit s
vg "ss-cache put --state-dir" "$W/env" bin/ss-cache --state-dir "$W/sd" put --tee
vg "ss-cache put bad record" "$W/bad" bin/ss-cache "$W/b.db" put
vg "ss-cache put dead-letter" "$W/bad" bin/ss-cache "$W/d.db" put --on-error dead-letter="$W/dl"
vg "ss-cache get" "$W/empty" bin/ss-cache "$W/c.db" get '"s1"' '"nope"'
vg "ss-cache scan" "$W/empty" bin/ss-cache "$W/t.db" scan --backwards --from '["s3", 1672569000]' --prefix '["s3"]' --limit 5
vg "ss-cache scan --state-dir" "$W/empty" bin/ss-cache --state-dir "$W/sd" scan --keys
vg "ss-cache stats" "$W/empty" bin/ss-cache "$W/c.db" stats
vg "ss-cache del" "$W/empty" bin/ss-cache "$W/c.db" del '"s1"'
vg "ss-cache bad expression" "$W/empty" bin/ss-cache "$W/x.db" put --key '.['
vg "ss-cache usage" "$W/empty" bin/ss-cache "$W/x.db" put --bogus
if [ -x bin/ss-asof ]; then
	jq -c 'select(.partition == 0) | .value' "$W/env" >"$W/left"
	jq -c 'select(.partition != 0) | .value' "$W/env" >"$W/right"
	for mode in eager defer revise; do
		vg "ss-asof --emit $mode" "$W/empty" bin/ss-asof "$W/left" "$W/right" --on .t --by .station --emit "$mode"
		vg "ss-asof --emit $mode --state" "$W/empty" bin/ss-asof "$W/left" "$W/right" --on .t --by .station --emit "$mode" --state "$W/a-$mode.db"
	done
	# results kept (nobody reports them delivered), then written again by the next run
	vg "ss-asof --acks" "$W/empty" bin/ss-asof "$W/left" "$W/right" --on .t --by .station --emit revise --state "$W/ak.db" --acks "$W/ak.acks"
	vg "ss-asof --acks again" "$W/empty" bin/ss-asof "$W/empty" "$W/empty" --on .t --by .station --emit revise --state "$W/ak.db" --acks "$W/ak.acks"
fi
if [ -x bin/ss-checkpoint ]; then
	vg "ss-checkpoint heartbeat" "$W/env" bin/ss-checkpoint "$W/k.db" heartbeat act wx --ts .timestamp --ts-unit ms
	vg "ss-checkpoint pulse" "$W/env" bin/ss-checkpoint "$W/k.db" pulse act --dependency wx=1h --ts .timestamp --ts-unit ms --events "$W/events"
	vg "ss-checkpoint status" "$W/empty" bin/ss-checkpoint "$W/k.db" status
	vg "ss-checkpoint status --json" "$W/empty" bin/ss-checkpoint "$W/k.db" status --json
	vg "ss-checkpoint bad record" "$W/bad" bin/ss-checkpoint "$W/k2.db" heartbeat act wx --ts .key
fi
if [ -x bin/ss-produce ] && [ -x bin/ss-consume ] && [ -x bin/ss-mock-broker ]; then
	vg "ss-produce --dry-run" "$W/env" bin/ss-produce --dry-run --envelope t
	vg "ss-produce --dry-run bad record" "$W/bad" bin/ss-produce --dry-run --key .key t
	mkfifo "$W/mockin"
	bin/ss-mock-broker --topic vg:3 <"$W/mockin" >"$W/mock" 2>/dev/null &
	mock=$!
	exec 9>"$W/mockin"
	for _ in $(seq 50); do [ -s "$W/mock" ] && break; sleep 0.1; done
	brokers=$(sed -n 's/^BROKERS=//p' "$W/mock")
	vg "ss-produce" "$W/env" bin/ss-produce -b "$brokers" --key .key vg
	vg "ss-produce --envelope" "$W/env" bin/ss-produce -b "$brokers" --envelope vg
	vg "ss-produce --acks" "$W/env" bin/ss-produce -b "$brokers" --acks "$W/ak.acks" vg
	vg "ss-consume -e" "$W/empty" bin/ss-consume -b "$brokers" -e vg
	vg "ss-consume --offsets-from" "$W/empty" bin/ss-consume -b "$brokers" -e --offsets-from "$W/c.db" vg
	vg "ss-consume --end-file" "$W/empty" bin/ss-consume -b "$brokers" -e --end-file "$W/end" vg
	exec 9>&-
	wait "$mock"
	vg "ss-mock-broker" "$W/empty" bin/ss-mock-broker --topic x:2
fi
echo "valgrind: $runs tool runs, $errs with errors or definite leaks"
[ "$errs" -eq 0 ] || fail=1
exit $fail
