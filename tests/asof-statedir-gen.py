#!/usr/bin/env python3
# Inputs for tests/asof-statedir.bats: co-partitioned topics act (left) and wx (right)
# with PARTS partitions each, keyed so that key k lives in partition k % PARTS of both.
# Partition p of either topic moves through event time at its own speed (1 + 3p per
# record), in order; a consumer interleaves the partitions at the same pace in arrivals,
# so partition 0 of the left is far behind partition 3 in event time at any moment.
# usage: asof-statedir-gen.py SEED DIR [PARTS] [N per partition]
# Writes DIR/left and DIR/right: {"topic","partition","offset","t","k","v"} lines.
import json, random, sys

seed, d = int(sys.argv[1]), sys.argv[2]
parts = int(sys.argv[3]) if len(sys.argv) > 3 else 4
n = int(sys.argv[4]) if len(sys.argv) > 4 else 150
rng = random.Random(seed)
keys = 12


def topic(name, tag, path):
    queues = []
    for p in range(parts):
        step = 1 + 3 * p
        ks = [k for k in range(keys) if k % parts == p]
        queues.append([(i * step + rng.randrange(step), rng.choice(ks)) for i in range(n)])
    offset = [0] * parts
    with open(path, "w") as f:
        while any(queues):
            p = rng.choice([i for i, q in enumerate(queues) if q])
            t, k = queues[p].pop(0)
            r = {"topic": name, "partition": p, "offset": offset[p], "t": t, "k": k,
                 "v": "%s%d.%d" % (tag, p, offset[p])}
            f.write(json.dumps(r, separators=(",", ":")) + "\n")
            offset[p] += 1


topic("wx", "r", d + "/right")
topic("act", "l", d + "/left")
