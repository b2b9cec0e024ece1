#!/usr/bin/env python3
"""Fingerprint a nearby-join output so peers can be compared with ss-asof.

    check.py OUT...       prints, per file, "PAIRS DIGEST" (order-independent)
    check.py --diff A B   prints up to 5 pairs found in one file and not the other
    check.py --expect ACTIVITY WEATHER
                          prints "PAIRS DIGEST" of the right answer, computed here by
                          brute force: each activity with its station's latest weather
                          at or before it, over the whole weather file, in any order

Every peer writes the join in its own natural shape: ss-asof's {"left":L,"right":R}
(L and R may be Kafka envelopes with the record in .value), or a flat row
{"station","timestamp","value","w_timestamp","w_value",...} from the dataframe engines.
Each line is reduced to the pair (station, activity time, activity value, weather time,
weather value), times as integer epoch seconds, no match as null; the digest is the sum
of the pairs' hashes, so output order does not matter but every pair and its count does.

The wide shape (gen.py --shape wide) carries an id per record, so its lines reduce to
(activity id, weather id or null): from {"left":{"aid":..},"right":{"wid":..}|null}, from
a flat row {"aid":..,"w_wid":..,...}, and from the projection runs' two fields, ss-asof's
[aid, wid] (--select '[.left.aid, .right.wid]') or a peer's {"aid":..,"wid":..}. Ids are
compared as integers (pandas writes a column with nulls as floats).
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


def ident(x):
    return None if x is None else int(x)


def pair(obj):
    if isinstance(obj, list):  # a projection: [activity id, weather id]
        return (ident(obj[0]), ident(obj[1]))
    if "left" in obj:
        a, w = unwrap(obj["left"]), unwrap(obj.get("right")) or {}
        if "aid" in a:
            return (ident(a["aid"]), ident(w.get("wid")))
        return (a["station"], epoch(a["timestamp"]), a["value"],
                epoch(w.get("timestamp")), w.get("value"))
    if "aid" in obj:
        return (ident(obj["aid"]), ident(obj["wid"] if "wid" in obj else obj.get("w_wid")))
    return (obj["station"], epoch(obj["timestamp"]), obj["value"],
            epoch(obj.get("w_timestamp")), obj.get("w_value"))


def pairs(path):
    with open(path, "rb") as f:
        for line in f:
            if line.strip():
                yield pair(json.loads(line))


def pair_hash(p):
    return int.from_bytes(hashlib.blake2b(repr(p).encode(), digest_size=8).digest(), "little")


def digest(path):
    n, total = 0, 0
    for p in pairs(path):
        total = (total + pair_hash(p)) % (1 << 64)
        n += 1
    return n, "%016x" % total


def expect(activity, weather):
    """The backward as-of join by station, from sorted lists: the reference when no
    ss-asof run on the same files is there to compare with. Either shape: the wide one
    (.meta.station, .ts, ids) is told by its first weather record."""
    from bisect import bisect_right
    wide = None
    hist = {}
    for w in records(weather):
        if wide is None:
            wide = "meta" in w
        if wide:
            hist.setdefault(w["meta"]["station"], []).append((w["ts"], w["wid"]))
        else:
            hist.setdefault(w["station"], []).append((epoch(w["timestamp"]), w["value"]))
    times = {}
    for s, h in hist.items():
        h.sort()
        times[s] = [t for t, _ in h]
    n, total = 0, 0
    for a in records(activity):
        if wide:
            s, t = a["meta"]["station"], a["ts"]
        else:
            s, t = a["station"], epoch(a["timestamp"])
        i = bisect_right(times.get(s, ()), t)
        wt, wv = hist[s][i - 1] if i else (None, None)
        p = (a["aid"], wv) if wide else (s, t, a["value"], wt, wv)
        total = (total + pair_hash(p)) % (1 << 64)
        n += 1
    return n, "%016x" % total


def records(path):
    with open(path, "rb") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


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
    if sys.argv[1:2] == ["--expect"]:
        print(*expect(sys.argv[2], sys.argv[3]))
        return
    for path in sys.argv[1:]:
        n, d = digest(path)
        print(n, d)


if __name__ == "__main__":
    main()
