#!/usr/bin/env bats
# lib/README's map holds: lib/ is in subsystem folders, each includes and calls only its
# own folder or a lower layer, no subsystem includes another's *_impl.h, and no files call
# each other but the pairs the map still lists (tests/layers.py).
load helpers

@test "lib/: includes and calls point down the map; no call cycles but those lib/README lists" {
	run python3 "$ROOT/tests/layers.py" "$ROOT"
	assert_success
	assert_output ''
	# no known cycles are left, and lib/README names none
	! grep -q 'call each other' "$ROOT/lib/README"
}

# a copy of the sources with the build's objects, to plant breaches in
copy_tree() {
	mkdir -p "$T/tree/build"
	cp -r "$ROOT/lib" "$ROOT/cmd" "$T/tree/"
	ln -s "$(readlink -f "$ROOT/build/current")" "$T/tree/build/current"
}

@test "lib/: an include up the map, of another subsystem's internals, or outside a folder is named" {
	copy_tree
	printf '#include "join/asof.h"\n' >>"$T/tree/lib/base/buf.c"
	printf '#include "join/asof_impl.h"\n' >>"$T/tree/lib/kafka/kafka.c"
	touch "$T/tree/lib/loose.c"
	run python3 "$ROOT/tests/layers.py" "$T/tree"
	assert_failure
	assert_line 'base/buf includes join/asof.h: not below it'
	assert_line "kafka/kafka includes join/asof_impl.h: another subsystem's internals"
	assert_line --partial 'files outside a subsystem folder:'
}
