# Common setup for the bats suites: load bats-support/bats-assert, put bin/ first on PATH,
# and give each test a scratch directory $T that is removed afterwards.
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

ROOT=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
[ -d "$ROOT/bin" ] || ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
export PATH="$ROOT/bin:$PATH"
# The library of the variant `make` built last (bin/ holds its tools): build/current names
# it (release, or sanitize after make SANITIZE=1). A program linked against the library
# needs the sanitizers too when built_sanitized.
LIBSS=$ROOT/build/current/lib/libss.a
built_sanitized() { [ "$(readlink "$ROOT/build/current")" = sanitize ]; }
# script(1) runs its command with $SHELL; a CI runner may leave it unset (then /bin/sh,
# dash here), and the commands the tests give it use bash (process substitution).
SHELL=$(command -v bash)
export SHELL
# process_gone, stop_process
# shellcheck source=tests/process.bash
. "$(dirname "${BASH_SOURCE[0]}")/process.bash"

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

# leave_hot_journal DB TABLE: as a writer killed mid-transaction before WAL mode (as
# while it created the file): TABLE emptied in pages already written, the journal that
# undoes it left behind. A reader must roll it back, not fail.
leave_hot_journal() {
	python3 - "$1" "$2" <<-'PY'
		import os, sqlite3, sys
		con = sqlite3.connect(sys.argv[1], isolation_level=None)
		con.execute("PRAGMA journal_mode=DELETE")
		con.execute("PRAGMA cache_size=2")
		con.execute("BEGIN")
		con.execute("DELETE FROM " + sys.argv[2])
		con.execute("CREATE TABLE pad(x)")
		for i in range(500):
		    con.execute("INSERT INTO pad VALUES (?)", ("x" * 1000,))
		os._exit(0)
	PY
	[ -s "$1-journal" ]
}

# latest FILE...: the last result of each left record (what compaction keeps), sorted
latest() {
	python3 -c 'import json, sys
last = {}
for f in sys.argv[1:]:
    for line in open(f):
        if line.strip():
            o = json.loads(line); l = o["left"]
            last[(l["partition"], l["offset"])] = json.dumps({"left": l, "right": o["right"]}, separators=(",", ":"))
print("\n".join(last.values()))' "$@" | sort
}

# after IN OUT DB...: the records of IN after the offsets applied in the state files, as
# `ss-consume --offsets-from` would deliver them
after() {
	local in=$1 out=$2
	shift 2
	for db in "$@"; do sqlite3 -separator ' ' "$db" 'SELECT topic, partition, offset FROM ss_offsets'; done >"$T/applied"
	python3 -c 'import json, sys
done = {}
for line in open(sys.argv[1]):
    t, p, o = line.split(); done[(t, int(p))] = max(done.get((t, int(p)), -1), int(o))
for line in open(sys.argv[2]):
    r = json.loads(line)
    if r["offset"] > done.get((r["topic"], r["partition"]), -1): sys.stdout.write(line)' "$T/applied" "$in" >"$out"
}

# trickle FILE [LINES [SECONDS]]: FILE's lines, LINES (default 100) at a time with a pause
# of SECONDS (default 0.005) between: an input that arrives over time, as from a topic
trickle() {
	python3 -c 'import sys, time
n, pause = int(sys.argv[2]), float(sys.argv[3])
lines = open(sys.argv[1]).readlines()
for i in range(0, len(lines), n):
    sys.stdout.writelines(lines[i:i + n]); sys.stdout.flush(); time.sleep(pause)' "$1" "${2:-100}" "${3:-0.005}"
}

# on_tty CMD: run the shell command CMD with stdout and stderr on a terminal (script),
# print what the terminal showed.
on_tty() {
	script -qec "$*" /dev/null </dev/null
}
