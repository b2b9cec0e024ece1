# tests/asof-topo.bash: random Kafka topologies for ss-asof with default flags, checked
# against the brute-force reference of tests/asof-topo.py. Shared by tests/asof-topology.bats
# (the mock broker) and tests/integration/asof-topology.bats (a real broker).
#
# A seed is one case: its topology and records (asof-topo.py gen), in $TOPO_DIR/seed-SEED.
# The loading file's setup_file calls
#   topo_gen SEED...      draw the cases
# then creates each case's topics, act$SEED and wx$SEED with $PL and $PR partitions
# (topo_plan SEED reads them), writes its bootstrap address to $TOPO_DIR/seed-SEED/tb, and
# calls
#   topo_fill SEED...     produce the topics (all but the seeds read while produced: those
#                         are produced by the "trickle" test, or by topo_fill at their first
#                         use) and dump them (kcat for the reference, ss-consume -e to files)
# Each test then calls `topo_kind KIND EMIT SEED...`: every run of that kind and emit mode
# of each case (KIND: live2, live1, trickle, files, shuffled; EMIT: defer, revise, eager,
# or any), checked against the reference. It fails at the end, listing the failing seeds;
# each failure prints what differs (left record, the right record wanted, the one got, a
# hint at the cause), the ss-asof command and a one-line repro:
#   SS_TOPO_SEEDS="SEED..." bats FILE -f 'TEST NAME'
# SS_TOPO_KEEP=DIR keeps a failing case's records, dumps and outputs in DIR/seed-SEED;
# SS_TOPO_VERBOSE=1 prints a line for every run.

TOPO_PY=$BATS_TEST_DIRNAME/asof-topo.py
[ -f "$TOPO_PY" ] || TOPO_PY=$BATS_TEST_DIRNAME/../asof-topo.py
TOPO_DIR=${BATS_FILE_TMPDIR:-${T:-/tmp}}

# topo_seed_list DEFAULT...: $SS_TOPO_SEEDS if given, else the defaults, and with SS_SOAK=1
# SS_SOAK_SEEDS (default 300) more from FIRST (SS_SOAK_FIRST)
topo_seed_list() {
	if [ -n "${SS_TOPO_SEEDS:-}" ]; then
		echo "$SS_TOPO_SEEDS"
	elif [ "${SS_SOAK:-0}" = 1 ]; then
		echo "$* $(seq -s ' ' "${SS_SOAK_FIRST:-1000}" $((${SS_SOAK_FIRST:-1000} + ${SS_SOAK_SEEDS:-300} - 1)))"
	else
		echo "$*"
	fi
}

topo_gen() {
	local seed
	for seed in "$@"; do
		mkdir -p "$TOPO_DIR/seed-$seed"
		python3 "$TOPO_PY" gen "$seed" "$TOPO_DIR/seed-$seed" || return 1
	done
}

# topo_plan SEED: the case's variables (PL PR LMETH RMETH NL NR TRICKLE BROKERS_N), its
# directory D, topics LT RT and bootstrap TB (once known), in the caller's scope
topo_plan() {
	D=$TOPO_DIR/seed-$1 LT=act$1 RT=wx$1
	# shellcheck disable=SC1091
	. "$D/plan"
	TB=$(cat "$D/tb" 2>/dev/null || true)
	mapfile -t runs <"$D/runs"
}

# topo_produce SIDE TOPIC METHOD PARTITIONS [FROM [TO]]: lines FROM..TO of $D/SIDE.tsv
topo_produce() {
	local side=$1 topic=$2 meth=$3 parts=$4 from=${5:-1} to=${6:-\$} p
	sed -n "${from},${to}p" "$D/$side.tsv" >"$D/chunk"
	[ -s "$D/chunk" ] || return 0
	case $meth in
	ss-key) cut -f3 "$D/chunk" | ss-produce -b "$TB" --key .k "$topic" ;;
	ss-part) cut -f3 "$D/chunk" | ss-produce -b "$TB" --partition .p "$topic" ;;
	ss-null) cut -f3 "$D/chunk" | ss-produce -b "$TB" "$topic" ;;
	kcat-null) cut -f3 "$D/chunk" | kcat -P -b "$TB" -t "$topic" -X acks=all -X message.timeout.ms=30000 ;;
	kcat-key)
		cut -f2,3 "$D/chunk" | sed 's/\t/|/' |
			kcat -P -b "$TB" -t "$topic" -K '|' -X acks=all -X message.timeout.ms=30000
		;;
	kcat-part)
		for ((p = 0; p < parts; p++)); do
			awk -F'\t' -v p="$p" '$1 == p' "$D/chunk" | cut -f3 >"$D/chunk.p"
			[ -s "$D/chunk.p" ] || continue
			kcat -P -b "$TB" -t "$topic" -p "$p" -X acks=all -X message.timeout.ms=30000 <"$D/chunk.p" || return 1
		done
		;;
	*) echo "unknown method $meth" >&2; return 1 ;;
	esac
}

# topo_dump: the topics as the reference reads them (kcat: partition, offset, value) and
# as files of envelopes (ss-consume -e); then the case is ready
topo_dump() {
	kcat -C -b "$TB" -t "$LT" -o beginning -e -q -f '%p\t%o\t%s\n' >"$D/left.dump" &&
		kcat -C -b "$TB" -t "$RT" -o beginning -e -q -f '%p\t%o\t%s\n' >"$D/right.dump" &&
		ss-consume -b "$TB" -e "$LT" >"$D/left.file" && ss-consume -b "$TB" -e "$RT" >"$D/right.file" ||
		{ echo "dumping the topics failed"; return 1; }
	if [ "$(wc -l <"$D/left.dump") $(wc -l <"$D/right.dump")" != "$NL $NR" ]; then
		echo "the topics hold $(wc -l <"$D/left.dump") and $(wc -l <"$D/right.dump") records, not $NL and $NR"
		return 1
	fi
	touch "$D/ready"
}

# topo_fill SEED...: produce and dump each case (a trickle case only with FORCE=1)
topo_fill() {
	local seed D LT RT TB PL PR LMETH RMETH NL NR TRICKLE BROKERS_N runs
	for seed in "$@"; do
		topo_plan "$seed"
		[ -e "$D/ready" ] && continue
		[ "$TRICKLE" = 1 ] && [ "${FORCE:-0}" != 1 ] && continue
		topo_produce left "$LT" "$LMETH" "$PL" && topo_produce right "$RT" "$RMETH" "$PR" ||
			{ echo "seed $seed: producing failed"; return 1; }
		topo_dump || { echo "seed $seed: $(topo_dump 2>&1)"; return 1; }
	done
}

# topo_consume PIDFILE SPEED ARG...: write our pid, then become `ss-consume -b $TB ARG...`
# at the speed asked: none, fetch (tiny fetches), delay:S (start S seconds late), stop:...
# (topo_stopper does the stopping)
topo_consume() {
	local pidfile=$1 speed=$2
	shift 2
	local extra=()
	echo "$BASHPID" >"$pidfile.tmp" && mv "$pidfile.tmp" "$pidfile"
	case $speed in
	delay:*) sleep "${speed#delay:}" ;;
	fetch) extra=(-X fetch.max.bytes=1000 -X message.max.bytes=1000 -X max.partition.fetch.bytes=64
		-X queued.min.messages=1 -X fetch.wait.max.ms=20) ;;
	esac
	exec ss-consume -b "$TB" "${extra[@]}" "$@"
}

# topo_stopper PIDFILE SPEED: for stop:A/B,C/D...: after A seconds SIGSTOP the consumer,
# SIGCONT it B seconds later, and so on; nothing for other speeds
topo_stopper() {
	local pidfile=$1 speed=$2 pid i step steps
	[[ $speed == stop:* ]] || return 0
	for ((i = 0; i < 100; i++)); do [ -s "$pidfile" ] && break; sleep 0.05; done
	pid=$(cat "$pidfile" 2>/dev/null) || return 0
	IFS=, read -ra steps <<<"${speed#stop:}"
	for step in "${steps[@]}"; do
		sleep "${step%/*}"
		kill -STOP "$pid" 2>/dev/null || return 0
		sleep "${step#*/}"
		kill -CONT "$pid" 2>/dev/null || return 0
	done
}

# topo_subscribe SEED N PARTITIONS ARRAY: how a consumer of run N is told what to read,
# appended to the array named: the whole topic, -p with every partition listed in a
# shuffled order, or -G with a group of its own (the group's assignment)
topo_subscribe() {
	local -n into=$4
	local p list=()
	case $((($1 * 7 + $2) % 3)) in
	1)
		for ((p = 0; p < $3; p++)); do list+=("$p"); done
		list=($(printf '%s\n' "${list[@]}" | shuf --random-source=<(yes "$1$2")))
		into+=(-p "$(IFS=,; echo "${list[*]}")")
		;;
	2) into+=(-G "topo-$1-$2-$RANDOM$RANDOM") ;;
	esac
	return 0
}

# topo_opts EMIT DIRECTION STRICT TOL BY: the ss-asof options in $opts (defaults left out)
topo_opts() {
	opts=(--on .value.t)
	[ "$5" = 1 ] && opts+=(--by .value.k)
	[ "$2" = backward ] || opts+=(--direction "$2")
	[ "$3" = 1 ] && opts+=(--strict)
	[ "$4" -ge 0 ] && opts+=(--tolerance "${4}s")
	[ "$1" = defer ] || opts+=(--emit "$1")
	return 0
}

# topo_trickle SEED: produce both topics in a few chunks, with pauses, while consumed
topo_trickle() {
	local k chunks=$((2 + $1 % 4)) lf=1 rf=1 lt rt
	RANDOM=$1
	sleep "0.$((RANDOM % 6))" # the consumers connect meanwhile, or not
	for ((k = 1; k <= chunks; k++)); do
		lt=$((k == chunks ? NL : NL * k / chunks)) rt=$((k == chunks ? NR : NR * k / chunks))
		if ((RANDOM % 2)); then
			topo_produce right "$RT" "$RMETH" "$PR" "$rf" "$rt" && topo_produce left "$LT" "$LMETH" "$PL" "$lf" "$lt" || return 1
		else
			topo_produce left "$LT" "$LMETH" "$PL" "$lf" "$lt" && topo_produce right "$RT" "$RMETH" "$PR" "$rf" "$rt" || return 1
		fi
		lf=$((lt + 1)) rf=$((rt + 1))
		sleep "0.$((2 + RANDOM % 6))"
	done
}

# topo_exec SEED N KIND EMIT DIRECTION STRICT TOL BY LSPEED RSPEED MEM: run ss-asof for
# run N of the case (MEM: - or SPILL/HISTORY, its SS_ASOF_SPILL_BYTES and
# SS_ASOF_HISTORY_BYTES); its exit status, the inputs the reference reads and the command
# are left in $D/meta.N for topo_verify
topo_exec() {
	local seed=$1 n=$2 kind=$3 emit=$4 dir=$5 strict=$6 tol=$7 by=$8 ls=$9 rs=${10} mem=${11:--}
	local out=$D/out.$n err=$D/err.$n rc=0 input=live lref=$D/left.dump rref=$D/right.dump cmd s1 s2 opts t0=$SECONDS
	local memenv=()
	topo_opts "$emit" "$dir" "$strict" "$tol" "$by"
	[ "$mem" = - ] || memenv=(SS_ASOF_SPILL_BYTES="${mem%/*}" SS_ASOF_HISTORY_BYTES="${mem#*/}")
	rm -f "$D/lpid" "$D/rpid"
	case $kind in
	live2 | trickle)
		local lend=(-e) rend=(-e)
		[ "$kind" = trickle ] && lend=(-c "$NL") rend=(-c "$NR")
		topo_subscribe "$seed" "$n" "$PL" lend
		topo_subscribe "$seed" "$((n + 1))" "$PR" rend
		cmd="${memenv[*]}${memenv:+ }ss-asof ${opts[*]} <(ss-consume -b \$B ${lend[*]} $LT) <(ss-consume -b \$B ${rend[*]} $RT)"
		topo_stopper "$D/lpid" "$ls" & s1=$!
		topo_stopper "$D/rpid" "$rs" & s2=$!
		env "${memenv[@]}" timeout 120 ss-asof "${opts[@]}" <(topo_consume "$D/lpid" "$ls" "${lend[@]}" "$LT") \
			<(topo_consume "$D/rpid" "$rs" "${rend[@]}" "$RT") >"$out" 2>"$err" &
		local apid=$!
		if [ "$kind" = trickle ] && ! topo_trickle "$seed"; then
			echo "producing failed" >>"$err"
			kill "$apid" 2>/dev/null
		fi
		wait "$apid" || rc=$?
		wait "$s1" "$s2"
		;;
	live1)
		cmd="ss-consume -b \$B -e $LT $RT | ${memenv[*]}${memenv:+ }ss-asof --left-topic $LT --right-topic $RT - ${opts[*]}"
		topo_stopper "$D/lpid" "$ls" & s1=$!
		topo_consume "$D/lpid" "$ls" -e "$LT" "$RT" |
			env "${memenv[@]}" timeout 120 ss-asof --left-topic "$LT" --right-topic "$RT" - "${opts[@]}" >"$out" 2>"$err" || rc=$?
		wait "$s1"
		;;
	files)
		input=file lref=$D/left.file rref=$D/right.file
		cmd="${memenv[*]}${memenv:+ }ss-asof ${opts[*]} left.file right.file"
		env "${memenv[@]}" ss-asof "${opts[@]}" "$lref" "$rref" >"$out" 2>"$err" || rc=$?
		;;
	shuffled)
		input=file lref=$D/left.shuf.$n rref=$D/right.shuf.$n
		python3 "$TOPO_PY" shuffle "$((seed * 100 + n))" "$D/left.file" "$lref"
		python3 "$TOPO_PY" shuffle "$((seed * 100 + n + 50))" "$D/right.file" "$rref"
		cmd="${memenv[*]}${memenv:+ }ss-asof ${opts[*]} left.shuf right.shuf"
		env "${memenv[@]}" ss-asof "${opts[@]}" "$lref" "$rref" >"$out" 2>"$err" || rc=$?
		;;
	esac
	printf '%s\n' "$rc" "$input" "$lref" "$rref" "$cmd" >"$D/meta.$n"
	[ "${SS_TOPO_VERBOSE:-0}" = 0 ] ||
		echo "# seed $seed run $n: $kind $emit $dir strict=$strict tol=$tol by=$by $ls $rs mem=$mem: exit $rc, $(wc -l <"$out") lines ($((SECONDS - t0)) s)" >&3
}

# topo_verify SEED N KIND EMIT DIRECTION STRICT TOL BY LSPEED RSPEED MEM: check run N
# against the reference; prints the report and returns 1 when they differ
topo_verify() {
	local seed=$1 n=$2 kind=$3 emit=$4 dir=$5 strict=$6 tol=$7 by=$8 ls=$9 rs=${10} mem=${11:--}
	local out=$D/out.$n err=$D/err.$n rc input lref rref cmd report
	{ read -r rc; read -r input; read -r lref; read -r rref; read -r cmd; } <"$D/meta.$n"
	if [ "$rc" != 0 ]; then
		report="ss-asof exit $rc"
	else
		report=$(python3 "$TOPO_PY" check "$input" "$emit" "$dir" "$strict" "$tol" "$by" \
			"$lref" "$rref" "$out" "$err") && return 0
	fi
	echo "--- seed $seed run $n: $kind $emit $dir strict=$strict tol=$tol by=$by speeds $ls $rs memory $mem"
	echo "topology: $(cat "$D/plan")"
	echo "$report"
	[ -s "$err" ] && echo "stderr: $(head -c 600 "$err")"
	echo "command: $cmd"
	return 1
}

# topo_case KIND EMIT SEED: the runs of that kind and emit mode (any: every one) of a case
topo_case() {
	local kind=$1 emit=$2 seed=$3 n fails=0 r
	local D LT RT TB PL PR LMETH RMETH NL NR TRICKLE BROKERS_N runs
	topo_plan "$seed"
	if [ "$kind" = trickle ]; then
		[ "$TRICKLE" = 1 ] || return 0
		if [ -e "$D/ready" ]; then
			echo "# seed $seed: its topics were filled before: not read while produced" >&3
			return 0
		fi
		topo_exec "$seed" 0 ${runs[0]}
		topo_dump || { echo "seed $seed: $(topo_dump 2>&1)"; return 1; }
		topo_verify "$seed" 0 ${runs[0]} || fails=1
	else
		FORCE=1 topo_fill "$seed" || return 1
		for ((n = 0; n < ${#runs[@]}; n++)); do
			r=(${runs[$n]})
			[ "${r[0]}" = "$kind" ] || continue
			[ "$emit" = any ] || [ "${r[1]}" = "$emit" ] || continue
			topo_exec "$seed" "$n" "${r[@]}"
			topo_verify "$seed" "$n" "${r[@]}" || fails=1
		done
	fi
	if [ "$fails" != 0 ] && [ -n "${SS_TOPO_KEEP:-}" ]; then
		mkdir -p "$SS_TOPO_KEEP" && rm -rf "$SS_TOPO_KEEP/seed-$seed" && cp -r "$D" "$SS_TOPO_KEEP/" &&
			echo "records and outputs kept in $SS_TOPO_KEEP/seed-$seed"
	fi
	return "$fails"
}

# topo_kind KIND EMIT SEED...: every case; at the end, the failing seeds and their repro
topo_kind() {
	local kind=$1 emit=$2 seed failed=() t0=$SECONDS
	shift 2
	for seed in "$@"; do
		topo_case "$kind" "$emit" "$seed" || failed+=("$seed")
	done
	echo "# $kind $emit: ${#failed[@]} of $# seeds failed ($((SECONDS - t0)) s)" >&3
	if ((${#failed[@]})); then
		echo "failing seeds: ${failed[*]}"
		echo "repro: SS_TOPO_SEEDS='${failed[*]}' bats $BATS_TEST_FILENAME -f '$BATS_TEST_DESCRIPTION'"
		return 1
	fi
}
