#!/usr/bin/env python3
"""Create a topic and load an NDJSON file into it (setup, untimed).

    kafka_load.py [--partitions N] BROKERS TOPIC [FILE]

Each line becomes one message: key = the record's station, value = the line as is, Kafka
timestamp = the record's event time (epoch seconds -> ms), so a consumer that orders by
Kafka timestamp (Quix Streams across topics) sees event-time order. Those times lie in
2023, so the topic keeps its data forever (retention.ms=-1): with the default retention
the broker would delete the segments as soon as they roll. Without FILE the topic is only
created (for output topics, whose records inherit the 2023 times).

--partitions N (default 1) creates N partitions; the producer's default partitioner puts
each record by its key, the station, so two topics loaded with the same N are
co-partitioned (a station's weather and activity share a partition number), and each
partition keeps the file's order of its stations' records.
"""
import json
import sys

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

args = sys.argv[1:]
partitions = 1
if args[:1] == ["--partitions"]:
    partitions = int(args[1])
    args = args[2:]
brokers, topic = args[:2]
admin = AdminClient({"bootstrap.servers": brokers})
new = NewTopic(topic, partitions, 1, config={"retention.ms": "-1"})
for f in admin.create_topics([new]).values():
    f.result()
if len(args) < 3:
    sys.exit(0)
path = args[2]
p = Producer({"bootstrap.servers": brokers, "linger.ms": 20, "enable.idempotence": True})
n = 0
with open(path, "rb") as f:
    for line in f:
        rec = json.loads(line)
        while True:
            try:
                p.produce(topic, value=line.rstrip(b"\n"), key=rec["station"].encode(),
                          timestamp=int(rec["timestamp"]) * 1000)
                break
            except BufferError:
                p.poll(0.1)
        n += 1
        if n % 10000 == 0:
            p.poll(0)
left = p.flush(120)
if left:
    sys.exit("kafka_load: %d messages not delivered to %s" % (left, topic))
