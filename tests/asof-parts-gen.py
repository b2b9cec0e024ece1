#!/usr/bin/env python3
# Inputs for tests/asof-partitions.bats: a right topic of PARTS partitions that progress
# through event time at different speeds, interleaved as a consumer would see them.
# usage: asof-parts-gen.py SEED DIR GRACE(seconds) [PARTS]
# Writes DIR/right (enveloped: topic, partition, offset at the top level, keyed so that
# one key lives in one partition), DIR/right.bare (the same records without envelope)
# and DIR/left ({"t","k","v"}, in time order). Within its partition, a right record is
# out of order by at most GRACE: none is late in its own partition, many would be late
# against one watermark for the whole topic.
import json, random, sys
seed, d, grace = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
parts = int(sys.argv[4]) if len(sys.argv) > 4 else 4
rng = random.Random(seed)
n = 150
queues = []
for p in range(parts):
    step = 1 + 3 * p                       # partition p covers (1+3p) times the event time
    times = [i * step + rng.randrange(step) for i in range(n)]
    arrive = sorted(times, key=lambda t: t + rng.random() * grace)
    keys = [k for k in range(max(12, parts)) if k % parts == p]
    queues.append([(t, rng.choice(keys)) for t in arrive])
end = max(q[-1][0] for q in queues)
offset = [0] * parts
with open(d + "/right", "w") as env, open(d + "/right.bare", "w") as bare:
    while any(queues):
        p = rng.choice([i for i, q in enumerate(queues) if q])   # same pace in arrivals
        t, k = queues[p].pop(0)
        r = {"t": t, "k": k, "v": "r%d.%d" % (p, offset[p])}
        bare.write(json.dumps(r, separators=(",", ":")) + "\n")
        r.update(topic="wx", partition=p, offset=offset[p])
        env.write(json.dumps(r, separators=(",", ":")) + "\n")
        offset[p] += 1
with open(d + "/left", "w") as f:
    for i, t in enumerate(sorted(rng.randrange(-5, end + 5) for _ in range(300))):
        f.write(json.dumps({"t": t, "k": rng.randrange(max(12, parts)), "v": "l%d" % i}, separators=(",", ":")) + "\n")
