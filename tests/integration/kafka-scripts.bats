#!/usr/bin/env bats
# The real-Kafka test infrastructure itself: scripts/kafka-{fetch,up,down,topic} and the
# helpers every other integration test relies on. One broker for the file, more on demand.

load helpers

setup_file() {
  kafka_setup_file
}

teardown_file() {
  kafka_teardown_file
}

# A TCP connect to HOST:PORT succeeds.
connectable() {
  timeout 2 bash -c "exec 3<>/dev/tcp/${1%:*}/${1##*:}" 2>/dev/null
}

@test "kafka-fetch is idempotent: a second run is a no-op that prints the lib dir" {
  run "$SS_SCRIPTS/kafka-fetch"
  assert_success
  lib=$output
  assert [ -f "$lib/.complete" ]
  run bash -c "ls '$lib' | grep -c '^kafka_2\.13-.*\.jar$'"
  assert_output 1
  for jar in 'kafka-tools-[0-9]' 'log4j-core-2' 'log4j-slf4j2-impl-2' 'slf4j-api-2'; do
    run bash -c "ls '$lib' | grep -c '^$jar.*\.jar$'"
    assert_output 1
  done
}

@test "the broker comes up on loopback and lists itself in metadata" {
  [[ $BROKERS =~ ^127\.0\.0\.1:[0-9]+$ ]]
  run kcat -L -J -b "$BROKERS" -m 10
  assert_success
  assert_output --partial "\"brokers\":[{\"id\":1,\"name\":\"$BROKERS\"}]"
  pid=$(cat "$KAFKA_TMP/broker1/kafka.pid")
  kill -0 "$pid"
  assert_equal "$(cat "$KAFKA_TMP/broker1/brokers")" "$BROKERS"
  # Every socket it listens on is bound to 127.0.0.1.
  run bash -c "ss -Hltnp | grep 'pid=$pid,' | awk '{print \$4}'"
  assert_success
  [[ -n $output ]]
  run bash -c "ss -Hltnp | grep 'pid=$pid,' | awk '{print \$4}' | grep -v '^127\.0\.0\.1:'"
  assert_output ''
  # It logs (Log4j2 binding present) to its kafka.log.
  run grep -c 'Kafka Server started' "$KAFKA_TMP/broker1/kafka.log"
  assert_output 1
  # DIR/kafka.version records the version it runs (kafka-fetch's default)
  lib=$("$SS_SCRIPTS/kafka-fetch")
  assert_equal "$(cat "$KAFKA_TMP/broker1/kafka.version")" "$(cat "$lib/.complete")"
  grep -q "Kafka version: $(cat "$lib/.complete")" "$KAFKA_TMP/broker1/kafka.log"
}

@test "kcat round trip: keys, values and order survive produce and consume" {
  t=$(kafka_topic_name)
  kafka_create_topic "$t" 1
  printf 'k1\tv1\nk2\tv2\nk3\t{"a": 1}\n' |
    kcat -P -b "$BROKERS" -t "$t" -K $'\t' -X acks=all
  run kcat -C -b "$BROKERS" -t "$t" -o beginning -e -q -f '%k=%s@%o\n'
  assert_success
  assert_output $'k1=v1@0\nk2=v2@1\nk3={"a": 1}@2'
}

@test "auto-created topics work and get 1 partition" {
  t=$(kafka_topic_name auto)
  printf 'x\ny\n' | kafka_produce "$t"
  run kafka_consume_values "$t"
  assert_success
  assert_output $'x\ny'
  run kcat -L -J -b "$BROKERS" -t "$t"
  assert_output --partial '"partitions":[{"partition":0,'
  refute_output --partial '"partition":1,'
}

@test "every compression codec librdkafka 2.0.2 offers is accepted" {
  t=$(kafka_topic_name)
  kafka_create_topic "$t" 1
  for codec in none gzip snappy lz4 zstd; do
    printf '%s-1\n%s-2\n' "$codec" "$codec" |
      kcat -P -b "$BROKERS" -t "$t" -z "$codec" -X acks=all
  done
  run kafka_consume_values "$t"
  assert_success
  assert_output "$(printf '%s-1\n%s-2\n' none none gzip gzip snappy snappy lz4 lz4 zstd zstd)"
}

@test "a kcat consumer group commits offsets (classic protocol)" {
  t=$(kafka_topic_name)
  kafka_create_topic "$t" 2
  printf 'a\nb\nc\nd\n' | kafka_produce "$t"
  # (kcat's -o would override committed offsets at every assignment: use the reset policy.)
  run timeout 60 kcat -b "$BROKERS" -G "g-$t" -X auto.offset.reset=earliest -e -q -f '%s\n' "$t"
  assert_success
  assert_equal "$(sort <<<"$output" | tr '\n' ' ')" "a b c d "
  printf 'e\n' | kafka_produce "$t"
  # The same group resumes after its committed offsets.
  run timeout 60 kcat -b "$BROKERS" -G "g-$t" -X auto.offset.reset=earliest -e -q -f '%s\n' "$t"
  assert_success
  assert_output e
}

@test "what the librdkafka mock lacks works here: offsets by time, headers, idempotence, transactions" {
  t=$(kafka_topic_name)
  kafka_create_topic "$t" 1
  printf 'a\nb\n' | kcat -P -b "$BROKERS" -t "$t" -X enable.idempotence=true -H h1=v1 -H h2=v2
  sleep 0.3
  since=$(date +%s%3N)
  sleep 0.3
  printf 'c\nd\n' | timeout 60 kcat -P -b "$BROKERS" -t "$t" -X "transactional.id=tx-$t"
  run kcat -C -b "$BROKERS" -t "$t" -o beginning -e -q -X isolation.level=read_committed -f '%o %s %h\n'
  assert_success
  assert_output $'0 a h1=v1,h2=v2\n1 b h1=v1,h2=v2\n2 c \n3 d '
  # ListOffsets by timestamp (the mock always answers -1).
  run kcat -Q -b "$BROKERS" -t "$t:0:$since"
  assert_success
  assert_output "$t [0] offset 2"
  run kcat -C -b "$BROKERS" -t "$t" -o "s@$since" -e -q -f '%s\n'
  assert_output $'c\nd'
}

@test "kafka-topic creates a 4-partition topic that kcat sees with leaders" {
  t=$(kafka_topic_name four)
  run "$SS_SCRIPTS/kafka-topic" "$BROKERS" "$t" 4
  assert_success
  assert_output ''
  run kcat -L -J -b "$BROKERS" -t "$t"
  assert_success
  for p in 0 1 2 3; do
    assert_output --partial "{\"partition\":$p,\"leader\":1,"
  done
  refute_output --partial '"partition":4,'
  # Each partition takes writes and gives them back.
  for p in 0 1 2 3; do
    printf 'to-%s\n' "$p" | kcat -P -b "$BROKERS" -t "$t" -p "$p" -X acks=all
  done
  for p in 0 1 2 3; do
    run kcat -C -b "$BROKERS" -t "$t" -p "$p" -o beginning -e -q -f '%s\n'
    assert_output "to-$p"
  done
}

@test "kafka-topic: same count again is fine, a different count or a bad name fails" {
  t=$(kafka_topic_name)
  "$SS_SCRIPTS/kafka-topic" "$BROKERS" "$t" 3
  run "$SS_SCRIPTS/kafka-topic" "$BROKERS" "$t" 3
  assert_success
  run "$SS_SCRIPTS/kafka-topic" "$BROKERS" "$t" 5
  assert_failure 1
  assert_output --partial "kafka-topic: topic '$t' already exists with 3 partitions, not 5"
  run "$SS_SCRIPTS/kafka-topic" "$BROKERS" 'bad name!' 1
  assert_failure 1
  run "$SS_SCRIPTS/kafka-topic" "$BROKERS" x 0
  assert_failure 64
}

@test "kafka-topic passes --config through (a compacted topic)" {
  t=$(kafka_topic_name compact)
  kafka_create_topic "$t" 1 --config cleanup.policy=compact
  lib=$("$SS_SCRIPTS/kafka-fetch")
  run java -cp "$lib/*" -Dlog4j2.level=ERROR org.apache.kafka.tools.ConfigCommand \
    --bootstrap-server "$BROKERS" --entity-type topics --entity-name "$t" --describe
  assert_success
  assert_output --partial 'cleanup.policy=compact'
}

@test "kafka-topic never auto-creates the topic it checks for" {
  t=$(kafka_topic_name)
  run "$SS_SCRIPTS/kafka-topic" "$BROKERS" "$t" 3
  assert_success
  run kcat -L -J -b "$BROKERS"
  [[ $(jq --arg t "$t" '[.topics[] | select(.topic == $t) | .partitions[]] | length' <<<"$output") == 3 ]]
}

@test "kafka-topic fails fast when no broker answers" {
  run "$SS_SCRIPTS/kafka-topic" 127.0.0.1:1 x 1
  assert_failure 75
  assert_output --partial 'kafka-topic: no broker answers at 127.0.0.1:1'
}

@test "two brokers run at once as separate clusters" {
  kafka_start_second
  [[ $BROKERS2 =~ ^127\.0\.0\.1:[0-9]+$ ]]
  [[ $BROKERS2 != "$BROKERS" ]]
  t=$(kafka_topic_name)
  kafka_create_topic "$t" 1
  kafka_create_topic "$t" 2 "$BROKERS2"
  printf 'one\n' | kafka_produce "$t" "$BROKERS"
  printf 'two\n' | kafka_produce "$t" "$BROKERS2"
  run kafka_consume_values "$t" "$BROKERS"
  assert_output one
  run kafka_consume_values "$t" "$BROKERS2"
  assert_output two
  # Different cluster ids.
  id1=$(sed -n 's/^cluster.id=//p' "$KAFKA_TMP/broker1/data/meta.properties")
  id2=$(sed -n 's/^cluster.id=//p' "$KAFKA_TMP/broker2/data/meta.properties")
  [[ -n $id1 && -n $id2 && $id1 != "$id2" ]]
}

@test "the second broker is still up in a later test" {
  # Started inside the previous test, it must outlive that test's process (the watchdog
  # polls once a second).
  sleep 2.5
  [[ -z ${BROKERS2:-} ]]   # a test's exports do not reach the next test
  BROKERS2=$(cat "$KAFKA_TMP/broker2/brokers")
  run kcat -L -b "$BROKERS2" -m 10
  assert_success
}

@test "kafka-up on a running DIR prints the same address and starts nothing" {
  pid=$(cat "$KAFKA_TMP/broker1/kafka.pid")
  run "$SS_SCRIPTS/kafka-up" "$KAFKA_TMP/broker1"
  assert_success
  assert_output "BROKERS=$BROKERS"
  assert_equal "$(cat "$KAFKA_TMP/broker1/kafka.pid")" "$pid"
  run "$SS_SCRIPTS/kafka-up" "$KAFKA_TMP/broker1" 1
  assert_failure 64
}

@test "kafka-up exits 75 with a message when its port is taken" {
  run "$SS_SCRIPTS/kafka-up" "$KAFKA_TMP/busy" "${BROKERS##*:}"
  assert_failure 75
  assert_output --partial 'kafka-up: port'
  [[ ! -f $KAFKA_TMP/busy/kafka.pid ]]
}

@test "kafka-up and kafka-down refuse bad usage" {
  run "$SS_SCRIPTS/kafka-up"
  assert_failure 64
  run "$SS_SCRIPTS/kafka-up" "$KAFKA_TMP/x" notaport
  assert_failure 64
  run "$SS_SCRIPTS/kafka-up" --bogus "$KAFKA_TMP/x"
  assert_failure 64
  run "$SS_SCRIPTS/kafka-up" --kafka-version 3.x "$KAFKA_TMP/x"
  assert_failure 64
  assert_output "kafka-up: bad Kafka version '3.x'"
  run "$SS_SCRIPTS/kafka-up" "$KAFKA_TMP/x" --kafka-version
  assert_failure 64
  # a DIR formatted with one Kafka version is not started with another
  mkdir -p "$KAFKA_TMP/v/data"
  touch "$KAFKA_TMP/v/data/meta.properties"
  echo 3.9.1 >"$KAFKA_TMP/v/kafka.version"
  run "$SS_SCRIPTS/kafka-up" --kafka-version 4.4.0 "$KAFKA_TMP/v"
  assert_failure 64
  assert_output "kafka-up: $KAFKA_TMP/v holds a Kafka 3.9.1 broker, not 4.4.0 (use another DIR)"
  SS_KAFKA_VERSION=4.4.0 run "$SS_SCRIPTS/kafka-up" "$KAFKA_TMP/v"
  assert_failure 64
  [[ ! -f $KAFKA_TMP/v/kafka.pid ]]
  run "$SS_SCRIPTS/kafka-down"
  assert_failure 64
}

@test "kafka-down stops a broker (port closed, pid gone), is idempotent, data survives restart" {
  dir=$KAFKA_TMP/downer
  run "$SS_SCRIPTS/kafka-up" "$dir"
  assert_success
  b=${output#BROKERS=}
  pid=$(cat "$dir/kafka.pid")
  t=$(kafka_topic_name)
  printf 'kept\n' | kafka_produce "$t" "$b"

  run "$SS_SCRIPTS/kafka-down" "$dir"
  assert_success
  process_gone "$pid"
  run connectable "$b"
  assert_failure
  [[ ! -f $dir/kafka.pid ]]
  run grep -c 'Kafka Server started' "$dir/kafka.log"
  assert_output 1

  run "$SS_SCRIPTS/kafka-down" "$dir"
  assert_success
  run "$SS_SCRIPTS/kafka-down" "$KAFKA_TMP/never-existed"
  assert_success

  # Restarting the same DIR keeps its port, cluster and data.
  run "$SS_SCRIPTS/kafka-up" "$dir"
  assert_success
  assert_output "BROKERS=$b"
  run kafka_consume_values "$t" "$b"
  assert_output kept
  "$SS_SCRIPTS/kafka-down" "$dir"
  run connectable "$b"
  assert_failure
}

@test "kafka-down leaves a process alone whose pid was reused" {
  dir=$KAFKA_TMP/stale
  mkdir -p "$dir"
  sleep 30 &
  other=$!
  echo "$other" >"$dir/kafka.pid"
  touch "$dir/server.properties"
  run "$SS_SCRIPTS/kafka-down" "$dir"
  assert_success
  kill -0 "$other"
  kill "$other"
  [[ ! -f $dir/kafka.pid ]]
}
