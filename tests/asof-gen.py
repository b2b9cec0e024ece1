#!/usr/bin/env python3
# Random inputs for tests/asof-property.bats.
# usage: asof-gen.py SEED DIR GRACE(seconds) SHUFFLE_LEFT(0|1)
# Writes DIR/left and DIR/right: {"t":N,"k":K,"v":...}. Right records arrive out of order
# by less than GRACE (none is late); left records are shuffled if asked.
import json, random, sys
seed, d, grace, shuffle_left = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
rng = random.Random(seed)
keys = ["a", "b", 1, "1", [1, "x"], None]
def rec(t, i, side):
    return json.dumps({"t": t, "k": rng.choice(keys), "v": "%s%d" % (side, i)}, separators=(",", ":"))
span = rng.choice([20, 60, 200])
right = sorted((rng.randrange(span), i) for i in range(rng.randrange(1, 80)))
# arrival order: each record delayed by less than grace seconds of event time
arrive = sorted(right, key=lambda r: (r[0] + (rng.random() * grace if grace else 0), r[1]))
left = sorted((rng.randrange(-5, span + 5), i) for i in range(rng.randrange(1, 80)))
if shuffle_left:
    rng.shuffle(left)
with open(d + "/right", "w") as f:
    for t, i in arrive:
        f.write(rec(t, i, "r") + "\n")
with open(d + "/left", "w") as f:
    for t, i in left:
        f.write(rec(t, i, "l") + "\n")
