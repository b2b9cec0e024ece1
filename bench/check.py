#!/usr/bin/env python3
"""Fingerprint a nearby-join output so peers can be compared with ss-asof.

    check.py OUT...       prints, per file, "PAIRS DIGEST" (order-independent)
    check.py --diff A B   prints up to 5 pairs found in one file and not the other

Every peer writes the join in its own natural shape: ss-asof's {"left":L,"right":R}
(L and R may be Kafka envelopes with the record in .value), or a flat row
{"station","timestamp","value","w_timestamp","w_value",...} from the dataframe engines.
Each line is reduced to the pair (station, activity time, activity value, weather time,
weather value), times as integer epoch seconds, no match as null; the digest is the sum
of the pairs' hashes, so output order does not matter but every pair and its count does.
"""
import calendar
import hashlib
try:
    import orjson as json  # same answers, ten times faster on big outputs
except ImportError:
    import json
import sys
import time


def epoch(t):
    if t is None:
        return None
    if isinstance(t, str):
        return calendar.timegm(time.strptime(t, "%Y-%m-%dT%H:%M:%SZ"))
    return int(t)


def unwrap(r):
    """A Kafka envelope carries the record in .value."""
    if isinstance(r, dict) and "topic" in r and "offset" in r and "value" in r:
        return r["value"]
    return r


def pair(obj):
    if "left" in obj:
        a, w = unwrap(obj["left"]), unwrap(obj.get("right")) or {}
        return (a["station"], epoch(a["timestamp"]), a["value"],
                epoch(w.get("timestamp")), w.get("value"))
    return (obj["station"], epoch(obj["timestamp"]), obj["value"],
            epoch(obj.get("w_timestamp")), obj.get("w_value"))


def pairs(path):
    with open(path, "rb") as f:
        for line in f:
            if line.strip():
                yield pair(json.loads(line))


def digest(path):
    n, total = 0, 0
    for p in pairs(path):
        h = hashlib.blake2b(repr(p).encode(), digest_size=8).digest()
        total = (total + int.from_bytes(h, "little")) % (1 << 64)
        n += 1
    return n, "%016x" % total


def diff(a, b):
    from collections import Counter
    ca, cb = Counter(pairs(a)), Counter(pairs(b))
    only_a, only_b = ca - cb, cb - ca
    print("%d pairs only in %s, %d only in %s" % (sum(only_a.values()), a,
                                                 sum(only_b.values()), b))
    for p in list(only_a)[:5]:
        print("  <", p)
    for p in list(only_b)[:5]:
        print("  >", p)


def main():
    if sys.argv[1:2] == ["--diff"]:
        diff(sys.argv[2], sys.argv[3])
        return
    for path in sys.argv[1:]:
        n, d = digest(path)
        print(n, d)


if __name__ == "__main__":
    main()
