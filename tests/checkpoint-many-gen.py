#!/usr/bin/env python3
"""tests/checkpoint-many-gen.py SEED DIR: a dependent stream of many partitions in a
regular file (DIR/a), interleaved at random, each partition's times rising by random
steps; and the brute-force answer of when a pulse on it against a dependency at a fixed
time starts a downtime (DIR/expect: the number of partitions and the dependency's time,
then for the file and for the same records through a pipe with --partitions: a
threshold in seconds and the dependent marker of the first downtime as RFC 3339, or
"none").

The marker, as checkpoint_parts.h says:
  - a file is read beforehand: unknown while one of its partitions has delivered
    nothing; else the lowest newest time over the partitions not done (done once its
    last record in the file was read); the largest time read when all are done;
  - a pipe that does not say its partitions, with --partitions N: no decision until N
    were heard from; then the lowest newest time over those heard from.
A downtime starts at the first record after which the marker is known and more than
the threshold past the dependency."""
import json
import random
import sys
import time

BASE = 1672567200  # 2023-01-01T10:00:00Z


def rfc(s):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(s))


def main():
    seed, out = int(sys.argv[1]), sys.argv[2]
    rnd = random.Random(seed)
    nparts = rnd.choice([1, 2, 7, 50, 300, rnd.randint(1, 600)])
    recs = []  # per partition, its times in offset order (even seconds)
    for _ in range(nparts):
        t = BASE + 2 * rnd.randint(0, 600)
        times = []
        for _ in range(rnd.randint(1, 12)):
            t += 2 * rnd.randint(0, 300)
            times.append(t)
        recs.append(times)
    # a random interleaving that keeps each partition's offsets in order
    order = [p for p in range(nparts) for _ in recs[p]]
    rnd.shuffle(order)
    nxt = [0] * nparts
    lines, stream = [], []
    for p in order:
        o = nxt[p]
        nxt[p] += 1
        stream.append((p, o, recs[p][o]))
        lines.append(json.dumps({"topic": "activity", "partition": p, "offset": o, "timestamp": 0,
                                 "key": None, "value": {"timestamp": rfc(recs[p][o])}, "headers": {}},
                                separators=(",", ":")))
    dep = BASE - 2 * rnd.randint(0, 300) - 1  # odd: a lag never equals a threshold
    with open(out + "/a", "w") as f:
        f.write("\n".join(lines) + "\n")
    answers = []
    for told in (True, False):
        markers = [m for m in trajectory(stream, recs, told) if m is not None]
        # a threshold that the marker passes somewhere in the stream (at its end, at
        # the latest), or now and then none that it passes
        m = rnd.choice(markers) if markers and rnd.random() < 0.9 else max(markers, default=dep) + 2
        threshold = m - dep - 1
        first = next((rfc(m) for m in markers if m - dep > threshold), "none")
        answers.append("%d %s" % (threshold, first))
    with open(out + "/expect", "w") as f:
        f.write("%d %s %s\n" % (nparts, rfc(dep), " ".join(answers)))


def trajectory(stream, recs, told):
    """The marker after each record, None while unknown."""
    maxt, read, top, out = {}, {}, None, []
    for p, o, t in stream:
        maxt[p] = max(maxt.get(p, t), t)
        read[p] = o
        top = t if top is None else max(top, t)
        if len(maxt) < len(recs):
            out.append(None)  # one has delivered nothing yet, or too few were heard from
            continue
        holding = [maxt[q] for q in maxt if not told or read[q] < len(recs[q]) - 1]
        out.append(min(holding) if holding else top)
    return out


if __name__ == "__main__":
    main()
