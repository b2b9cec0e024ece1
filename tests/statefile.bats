#!/usr/bin/env bats
# State files of every tool (lib/statefile): wrong paths say what is wrong and are not
# "retry later"; reading needs no write access; each kind of state is marked and a file
# of another kind, another application or a newer format is refused by name.
load helpers

# the readers and writers of each kind, on a file F
cache_write() { echo '{"k":1,"v":2}' | ss-cache "$1" put --key .k --value .v; }
cache_read() { ss-cache "$1" scan; }
checkpoint_write() { echo '{"t":1}' | ss-checkpoint "$1" heartbeat a b --ts .t >/dev/null; }
checkpoint_read() { ss-checkpoint "$1" status --json; }
asof_write() {
	echo '{"t":1}' >"$T/asof-l"
	echo '{"t":0}' >"$T/asof-r"
	ss-asof --on .t --state "$1" "$T/asof-l" "$T/asof-r" >/dev/null
}
acks_write() { echo '{}' | ss-produce --dry-run --acks "$1" t >/dev/null; }

header() { sqlite3 "$1" 'PRAGMA application_id; PRAGMA user_version' | tr '\n' ' '; }

# as_other CMD...: run as a user who may not write what root made (nobody), or as
# ourselves when we are not root (then permissions apply to us already)
as_other() {
	chmod 755 "$T"
	if [ "$(id -u)" -eq 0 ]; then
		setpriv --reuid=65534 --regid=65534 --clear-groups env PATH="$PATH" "$@"
	else
		"$@"
	fi
}

@test "a directory, a missing parent directory, a file that is not a database: path and reason, exit 1" {
	mkdir "$T/dir"
	echo 'not sqlite at all, but longer than a header would be: 0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789' >"$T/junk.db"
	for tool in cache checkpoint asof acks; do
		test_must_fail 1 ${tool}_write "$T/dir"
		assert_output --partial "$T/dir: is a directory"
		test_must_fail 1 ${tool}_write "$T/nowhere/s.db"
		assert_output --partial "$T/nowhere/s.db: cannot create: directory $T/nowhere: No such file"
		test_must_fail 1 ${tool}_write "$T/junk.db"
		assert_output --partial "$T/junk.db: cannot open: file is not a database"
	done
	for tool in cache checkpoint; do
		test_must_fail 1 ${tool}_read "$T/dir"
		assert_output --partial "$T/dir: is a directory"
		test_must_fail 1 ${tool}_read "$T/junk.db"
		assert_output --partial "$T/junk.db: cannot read: file is not a database"
		test_must_fail 1 ${tool}_read "$T/missing.db"
		assert_output --partial "$T/missing.db: No such file"
	done
}

@test "reading needs no write access: a read-only file, a read-only directory" {
	cache_write "$T/c.db"
	checkpoint_write "$T/cp.db"
	mkdir "$T/ro"
	cp "$T/c.db" "$T/cp.db" "$T/ro/"
	chmod 444 "$T/c.db" "$T/cp.db" "$T/ro/c.db" "$T/ro/cp.db"
	chmod 555 "$T/ro"
	for f in "$T/c.db" "$T/ro/c.db"; do
		run as_other ss-cache "$f" scan
		assert_success
		assert_output '{"key":1,"value":2}'
		run as_other ss-cache "$f" get 1
		assert_success
		assert_output 2
	done
	for f in "$T/cp.db" "$T/ro/cp.db"; do
		run as_other ss-checkpoint "$f" status --json
		assert_success
		assert_output --partial '"checkpoint":"a"'
	done
	[ "$(ls "$T/ro")" = "$(printf 'c.db\ncp.db')" ]
	# a write is refused with the path, not retried
	run as_other ss-cache "$T/ro/c.db" put --key .k <<<'{"k":2}'
	[ "$status" -eq 1 ]
	assert_output --partial "$T/ro/c.db"
}

@test "a hot journal on a file the reader may not write: said, with what to do" {
	cache_write "$T/c.db"
	leave_hot_journal "$T/c.db" ss_kv
	chmod 444 "$T/c.db"
	run as_other ss-cache "$T/c.db" scan
	[ "$status" -eq 1 ]
	assert_output --partial "hot journal ($T/c.db-journal)"
	# who may write it rolls it back and reads
	run ss-cache "$T/c.db" scan
	assert_success
	assert_output '{"key":1,"value":2}'
}

@test "each kind of state is marked with its own application_id and format version" {
	cache_write "$T/c.db"
	checkpoint_write "$T/cp.db"
	asof_write "$T/j.db"
	acks_write "$T/a.db"
	[ "$(header "$T/c.db")" = '1936933697 2 ' ]  # "ssCA", format 2: the rowid layout
	[ "$(header "$T/cp.db")" = '1936933712 1 ' ] # "ssCP"
	[ "$(header "$T/j.db")" = '1936933194 1 ' ]  # "ssAJ"
	[ "$(header "$T/a.db")" = '1936933185 1 ' ]  # "ssAA"
}

@test "a new state is marked in the transaction that makes it: a kill never leaves an ss-asof state that reads as a cache" {
	# the left input a FIFO nobody writes: ss-asof has made its state and waits; killed
	# there, the WAL keeps every transaction, and the first must already carry the mark
	mkfifo "$T/never"
	echo '{"t":0}' >"$T/r"
	ss-asof --on .t --state "$T/a.db" "$T/never" "$T/r" >/dev/null 2>&1 &
	local pid=$!
	for _ in $(seq 100); do
		[ "$(sqlite3 "$T/a.db" 'PRAGMA application_id' 2>/dev/null)" = "$(printf '%d' 0x7373414a)" ] && break
		sleep 0.05
	done
	kill -9 "$pid"
	wait "$pid" || true
	run "$BATS_TEST_DIRNAME/wal-first-commit.py" "$T/a.db-wal"
	assert_output "$(printf '%d' 0x7373414a) yes"
	# and the killed state opens again as what it is
	echo '{"t":1}' >"$T/l"
	run ss-asof --on .t --state "$T/a.db" "$T/l" "$T/r"
	assert_success
}

@test "the wrong kind of state file is named as what it is" {
	cache_write "$T/c.db"
	checkpoint_write "$T/cp.db"
	asof_write "$T/j.db"
	acks_write "$T/a.db"
	test_must_fail 1 cache_read "$T/cp.db"
	assert_output "ss-cache: $T/cp.db is an ss-checkpoint state, not an ss-cache state"
	test_must_fail 1 cache_write "$T/j.db"
	assert_output "ss-cache: $T/j.db is an ss-asof state, not an ss-cache state"
	test_must_fail 1 checkpoint_read "$T/c.db"
	assert_output "ss-checkpoint: $T/c.db is an ss-cache state, not an ss-checkpoint state"
	test_must_fail 1 checkpoint_write "$T/a.db"
	assert_output "ss-checkpoint: $T/a.db is an ss --acks file, not an ss-checkpoint state"
	test_must_fail 1 asof_write "$T/c.db"
	assert_output "ss-asof: $T/c.db is an ss-cache state, not an ss-asof state"
	test_must_fail 1 acks_write "$T/cp.db"
	assert_output "ss-produce: $T/cp.db is an ss-checkpoint state, not an ss --acks file"
	# nothing was added to them
	[ "$(sqlite3 "$T/cp.db" "SELECT count(*) FROM sqlite_master WHERE name = 'ss_kv'")" -eq 0 ]
	# another application's database, by its tables or its application_id
	sqlite3 "$T/app.db" 'CREATE TABLE people(name)'
	test_must_fail 1 cache_write "$T/app.db"
	assert_output "ss-cache: $T/app.db: a database with tables of its own (people), not an ss-cache state"
	sqlite3 "$T/other.db" 'PRAGMA application_id = 42'
	test_must_fail 1 checkpoint_read "$T/other.db"
	assert_output --partial 'a database of another application (application_id 0x0000002a)'
}

@test "a newer format version than the tool knows is refused" {
	cache_write "$T/c.db"
	sqlite3 "$T/c.db" 'PRAGMA user_version = 3'
	test_must_fail 1 cache_read "$T/c.db"
	assert_output "ss-cache: $T/c.db: an ss-cache state of format version 3, newer than this ss-cache knows (2): use the ss that wrote it"
	test_must_fail 1 cache_write "$T/c.db"
}

@test "unmarked files of earlier versions open as version 0; a writer marks them" {
	# as ss before the marks made them
	sqlite3 "$T/c.db" "PRAGMA journal_mode=WAL;
		CREATE TABLE ss_kv(k BLOB PRIMARY KEY, key TEXT NOT NULL, value TEXT NOT NULL, t INTEGER) WITHOUT ROWID;
		CREATE TABLE ss_offsets(topic TEXT NOT NULL, partition INTEGER NOT NULL, offset INTEGER NOT NULL,
			PRIMARY KEY(topic, partition)) WITHOUT ROWID;" >/dev/null
	echo '{"k":1,"v":2}' | ss-cache "$T/c.db" put --key .k --value .v
	sqlite3 "$T/c.db" 'PRAGMA application_id = 0; PRAGMA user_version = 0'
	[ "$(header "$T/c.db")" = '0 0 ' ]
	run cache_read "$T/c.db"
	assert_success
	assert_output '{"key":1,"value":2}'
	[ "$(header "$T/c.db")" = '0 0 ' ]
	# an unmarked checkpoint state is still known by its tables
	checkpoint_write "$T/cp.db"
	sqlite3 "$T/cp.db" 'PRAGMA application_id = 0; PRAGMA user_version = 0'
	test_must_fail 1 cache_read "$T/cp.db"
	assert_output --partial 'is an ss-checkpoint state, not an ss-cache state'
	run checkpoint_read "$T/cp.db"
	assert_success
	cache_write "$T/c.db"
	checkpoint_write "$T/cp.db"
	[ "$(header "$T/c.db")" = '1936933697 1 ' ]
	[ "$(header "$T/cp.db")" = '1936933712 1 ' ]
}


@test "a cache of format 1 (WITHOUT ROWID) keeps its layout and its version, and works as before" {
	# as ss-cache 1 made them
	sqlite3 "$T/c.db" "PRAGMA journal_mode=WAL; PRAGMA application_id = 1936933697; PRAGMA user_version = 1;
		CREATE TABLE ss_kv(k BLOB PRIMARY KEY, key TEXT NOT NULL, value TEXT NOT NULL, t INTEGER) WITHOUT ROWID;
		CREATE INDEX ss_kv_t ON ss_kv(t) WHERE t IS NOT NULL;
		CREATE TABLE ss_offsets(topic TEXT NOT NULL, partition INTEGER NOT NULL, offset INTEGER NOT NULL,
			PRIMARY KEY(topic, partition)) WITHOUT ROWID;" >/dev/null
	printf '%s\n' '{"k":2,"v":"a"}' '{"k":1,"v":"b"}' '{"k":2,"v":"c"}' | ss-cache "$T/c.db" put --key .k --value .v
	printf '%s\n' '{"k":3,"v":"d"}' '{"k":0,"v":"e"}' | ss-cache "$T/c.db" put --key .k --value .v --retain-count 3
	run ss-cache "$T/c.db" scan
	assert_success
	assert_output '{"key":1,"value":"b"}
{"key":2,"value":"c"}
{"key":3,"value":"d"}'
	[ "$(header "$T/c.db")" = '1936933697 1 ' ]
	[ "$(sqlite3 "$T/c.db" "SELECT count(*) FROM sqlite_master WHERE name = 'ss_kv_k'")" -eq 0 ]
	# and a new file has the rowid layout
	cache_write "$T/n.db"
	[ "$(sqlite3 "$T/n.db" "SELECT count(*) FROM sqlite_master WHERE name = 'ss_kv_k'")" -eq 1 ]
}

@test "a new cache has 64 KiB pages; a cache of 4 KiB pages keeps them and works as before" {
	cache_write "$T/n.db"
	[ "$(sqlite3 "$T/n.db" 'PRAGMA page_size')" -eq 65536 ]
	# as ss-cache made them before: SQLite's default page size
	sqlite3 "$T/c.db" "PRAGMA page_size = 4096; PRAGMA journal_mode=WAL; PRAGMA application_id = 1936933697;
		PRAGMA user_version = 2;
		CREATE TABLE ss_kv(k BLOB NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, t INTEGER);
		CREATE UNIQUE INDEX ss_kv_k ON ss_kv(k);" >/dev/null
	seq 1 3000 | sed 's/.*/{"k":&,"v":"&"}/' | ss-cache "$T/c.db" put --key .k --value .v
	seq 2000 4000 | sed 's/.*/{"k":&,"v":"x&"}/' | ss-cache "$T/c.db" put --key .k --value .v
	[ "$(sqlite3 "$T/c.db" 'PRAGMA page_size')" -eq 4096 ]
	[ "$(sqlite3 "$T/c.db" 'PRAGMA integrity_check')" = ok ]
	run ss-cache "$T/c.db" get 1999 2000 4000
	assert_success
	assert_output '"1999"
"x2000"
"x4000"'
	[ "$(ss-cache "$T/c.db" stats | jq .keys)" -eq 4000 ]
}
