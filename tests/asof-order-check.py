#!/usr/bin/env python3
"""tests/asof-order-check.py [--dedup] [--shuffled] DEFAULT ORDERED...: the results of
ORDERED (files, one run's output after another's) are those of DEFAULT, and each left
partition's come in the order of its offsets (records without envelope: of their "i",
their index in the left input), which DEFAULT's do not (--shuffled: so the case shows
something). --dedup: a result written again after a restart (at least once) counts once,
where it came first. A last line cut short by kill -9 is not a result."""
import json
import sys

args = sys.argv[1:]
dedup = "--dedup" in args
shuffled = "--shuffled" in args
args = [a for a in args if not a.startswith("--")]


def lines(path):
    with open(path) as f:
        text = f.read()
    if text and not text.endswith("\n"):
        text = text[: text.rfind("\n") + 1]
    return [l for l in text.split("\n") if l]


def pos(line):
    left = json.loads(line)["left"]
    if "partition" in left:
        return left["topic"], left["partition"], left["offset"]
    return "", -1, left["i"]


def in_order(results):
    last = {}
    for r in results:
        part, off = pos(r)[:2], pos(r)[2]
        if off <= last.get(part, -1):
            return "%s offset %d after %d" % (part, off, last[part])
        last[part] = off
    return None


default = lines(args[0])
ordered = [l for f in args[1:] for l in lines(f)]
if dedup:
    seen = set()
    ordered = [l for l in ordered if not (l in seen or seen.add(l))]
if sorted(default) != sorted(ordered):
    sys.exit("not the same results: %d and %d lines" % (len(default), len(ordered)))
why = in_order(ordered)
if why:
    sys.exit("out of order: " + why)
if shuffled and in_order(default) is None:
    sys.exit("the default order is the left order already: the case shows nothing")
print(len(ordered), "results in order")
