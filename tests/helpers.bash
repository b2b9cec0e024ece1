# Common setup for the bats suites: load bats-support/bats-assert, put bin/ first on PATH,
# and give each test a scratch directory $T that is removed afterwards.
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

ROOT=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
[ -d "$ROOT/bin" ] || ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
export PATH="$ROOT/bin:$PATH"

common_setup() {
	T=$(mktemp -d "${BATS_TMPDIR:-/tmp}/ss-test.XXXXXX")
	export T
}
common_teardown() {
	[ -n "${T:-}" ] && rm -rf "$T"
}
setup() { common_setup; }
teardown() { common_teardown; }

# test_must_fail STATUS CMD...: run CMD, require that exact exit status (git t/ style).
test_must_fail() {
	local want=$1; shift
	run "$@"
	if [ "$status" -ne "$want" ]; then
		echo "expected exit $want, got $status: $*" >&2
		echo "output: $output" >&2
		return 1
	fi
}
