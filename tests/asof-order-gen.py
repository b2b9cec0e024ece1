#!/usr/bin/env python3
"""tests/asof-order-gen.py N PARTS SEED DIR [plain|env]: inputs for --order left.

DIR/left: N left records, each of a key k0..k15 in partition key % PARTS of topic act
with its offset (plain: no envelope, and "i" its index), whose event times run up to 50
out of order; DIR/right: right records in time order, one each 3 time units, keys in
turn, plain or with envelopes (topic wx, the same partitions: co-partitioned)."""
import json
import random
import sys

n, parts, seed, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
env = len(sys.argv) > 5 and sys.argv[5] == "env"
rnd = random.Random(seed)
off, roff = [0] * parts, [0] * parts
with open(out + "/left", "w") as f:
    for i in range(n):
        k = rnd.randrange(16)
        p = k % parts
        value = {"t": max(0, i + rnd.randrange(-50, 50)), "k": "k%d" % k, "i": i}
        if len(sys.argv) > 5 and sys.argv[5] == "plain":
            f.write(json.dumps(value) + "\n")
        else:
            f.write(json.dumps({"topic": "act", "partition": p, "offset": off[p], "value": value}) + "\n")
        off[p] += 1
with open(out + "/right", "w") as f:
    for t in range(0, n + 100, 3):
        k = t % 16
        rec = {"t": t, "k": "k%d" % k}
        if env:
            p = k % parts
            rec = {"topic": "wx", "partition": p, "offset": roff[p], "value": rec}
            roff[p] += 1
        f.write(json.dumps(rec) + "\n")
