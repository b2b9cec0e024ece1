# tests/integration/helpers.bash: real-Kafka helpers for the integration suite.
#
#   load helpers
#   setup_file()    { kafka_setup_file; }      # one broker per test file -> $BROKERS
#   teardown_file() { kafka_teardown_file; }
#
# kafka_start_second starts a second, independent cluster -> $BROKERS2 (cross-cluster tests).
# Brokers live under tests/.tmp/kafka.XXXXXX/ (config, data, kafka.log) and are stopped by
# kafka_teardown_file, or by kafka-up's watchdog if the bats process dies first.
# SS_KEEP_KAFKA_TMP=1 keeps that directory after the run (for reading kafka.log).

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

SS_ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
SS_SCRIPTS=$SS_ROOT/scripts
export SS_ROOT SS_SCRIPTS
PATH=$SS_ROOT/bin:$PATH

# process_gone PID, stop_process PID
# shellcheck source=tests/process.bash
. "$SS_ROOT/tests/process.bash"

# _kafka_up NAME VAR [--secure]: start broker NAME under $KAFKA_TMP, export
# VAR=127.0.0.1:PORT.
_kafka_up() {
  local name=$1 var=$2 out
  if ! out=$(SS_KAFKA_WATCH_PID=$KAFKA_WATCH_PID "$SS_SCRIPTS/kafka-up" ${3:+"$3"} "$KAFKA_TMP/$name"); then
    echo "kafka-up $KAFKA_TMP/$name failed" >&2
    return 1
  fi
  [[ $out == BROKERS=* ]] || { echo "kafka-up printed '$out'" >&2; return 1; }
  printf -v "$var" '%s' "${out#BROKERS=}"
  export "${var?}"
}

# Start this file's broker: exports KAFKA_TMP and BROKERS.
kafka_setup_file() {
  mkdir -p "$SS_ROOT/tests/.tmp"
  KAFKA_TMP=$(mktemp -d "$SS_ROOT/tests/.tmp/kafka.XXXXXX")
  # In setup_file $$ is the process that runs the whole file (in a test, only that test):
  # brokers started through these helpers live as long as it, and no longer.
  KAFKA_WATCH_PID=$$
  export KAFKA_TMP KAFKA_WATCH_PID
  _kafka_up broker1 BROKERS
}

# Start this file's broker with kafka-up --secure (TLS + SASL, ACLs): exports KAFKA_TMP,
# BROKERS and SECURE, the broker's dir (SECURE/USER.conf: client properties per user).
kafka_setup_file_secure() {
  mkdir -p "$SS_ROOT/tests/.tmp"
  KAFKA_TMP=$(mktemp -d "$SS_ROOT/tests/.tmp/kafka.XXXXXX")
  KAFKA_WATCH_PID=$$
  SECURE=$KAFKA_TMP/secure1
  export KAFKA_TMP KAFKA_WATCH_PID SECURE
  _kafka_up secure1 BROKERS --secure
}

# Start a second cluster (its own dir, ports and cluster id): exports BROKERS2.
kafka_start_second() {
  [[ -n ${KAFKA_TMP:-} ]] || { echo "kafka_start_second: call kafka_setup_file first" >&2; return 1; }
  _kafka_up broker2 BROKERS2
}

# Stop every broker this file started and remove their dir (unless SS_KEEP_KAFKA_TMP=1).
kafka_teardown_file() {
  [[ -n ${KAFKA_TMP:-} && -d $KAFKA_TMP ]] || return 0
  local d rc=0
  if [[ -f $KAFKA_TMP/registry/registry.pid ]]; then
    "$SS_SCRIPTS/registry-down" "$KAFKA_TMP/registry" || rc=1
  fi
  for d in "$KAFKA_TMP"/*/; do
    [[ -f $d/server.properties ]] || continue
    "$SS_SCRIPTS/kafka-down" "$d" || rc=1
  done
  if [[ ${SS_KEEP_KAFKA_TMP:-0} != 1 && $rc == 0 ]]; then
    rm -rf "$KAFKA_TMP"
  fi
  return "$rc"
}

# A topic name unique to this test: t-<test number>-<random>[-SUFFIX].
kafka_topic_name() {
  printf 't-%s-%s%s\n' "${BATS_TEST_NUMBER:-0}" "$RANDOM$RANDOM" "${1:+-$1}"
}

# kafka_create_topic NAME PARTITIONS [BROKERS] [--config K=V]...: create and wait for it
# (as admin, with $SECURE/admin.conf, on this file's --secure broker).
kafka_create_topic() {
  local name=$1 parts=$2 brokers=$BROKERS login=()
  shift 2
  if (($# > 0)) && [[ $1 != -* ]]; then brokers=$1; shift; fi
  [[ -z ${SECURE:-} || $brokers != "$BROKERS" ]] || login=(-F "$SECURE/admin.conf")
  "$SS_SCRIPTS/kafka-topic" "${login[@]}" "$brokers" "$name" "$parts" "$@"
}

# kafka_produce TOPIC [BROKERS]: each line on stdin becomes one message (null key).
kafka_produce() {
  local topic=$1 brokers=${2:-$BROKERS}
  kcat -P -b "$brokers" -t "$topic" -X acks=all -X message.timeout.ms=30000
}

# kafka_consume_values TOPIC [BROKERS]: every message value, one per line, from the start
# to the current end of each partition, then exit.
kafka_consume_values() {
  local topic=$1 brokers=${2:-$BROKERS}
  kcat -C -b "$brokers" -t "$topic" -o beginning -e -q -f '%s\n' -m 10
}

# registry_start: start a real schema registry (scripts/registry-up: Apicurio Registry,
# in-memory) under $KAFKA_TMP/registry; exports REGISTRY, the base URL of its
# Confluent-compatible API. Stopped by kafka_teardown_file, or by registry-up's watchdog.
registry_start() {
  [[ -n ${KAFKA_TMP:-} ]] || { echo "registry_start: call kafka_setup_file first" >&2; return 1; }
  local out
  if ! out=$(SS_REGISTRY_WATCH_PID=$KAFKA_WATCH_PID "$SS_SCRIPTS/registry-up" "$KAFKA_TMP/registry"); then
    echo "registry-up $KAFKA_TMP/registry failed" >&2
    return 1
  fi
  [[ $out == REGISTRY=* ]] || { echo "registry-up printed '$out'" >&2; return 1; }
  REGISTRY=${out#REGISTRY=}
  export REGISTRY
}
