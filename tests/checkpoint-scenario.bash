# The seed's Checkpoint scenario, shared by tests/checkpoint-pipeline.bats (mock broker) and
# tests/integration/checkpoint.bats (real Kafka): records, and the checks on the results
# the pipeline keeps in $T/out.db. WAIT_TRIES bounds wait_until (0.1 s each).

wait_until() {
	for _ in $(seq "${WAIT_TRIES:-300}"); do "$@" && return 0; sleep 0.1; done
	echo "timed out waiting for: $*" >&2
	return 1
}
wth() { printf '{"timestamp":"2023-01-01T%s:00Z","value":"%s"}\n' "$1" "$2"; }
act() { printf '{"timestamp":"2023-01-01T%s:00Z","value":"%s"}\n' "$1" "$2"; }
has() { grep -q "$1" "$2" 2>/dev/null; }
# hasnt PATTERN FILE...: none has it (a test fails on it; `! has` never fails a bats test)
hasnt() { ! grep -q "$1" "${@:2}" 2>/dev/null; }
weather_of() { ss-cache "$T/out.db" get "\"$1\"" 2>/dev/null | jq -r '.[1]'; }
corrected() {
	[ "$(weather_of swimming)" = "🌞" ] && [ "$(weather_of 'walking home')" = "🌞" ] &&
		[ "$(weather_of shopping)" = "⛅" ] && [ "$(weather_of lunch)" = "🌧" ]
}
