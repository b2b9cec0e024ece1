#!/usr/bin/env python3
"""Reference partitioners for the ss-produce partitioning tests, written from their
definitions and independent of librdkafka.

  partition-ref.py keys
      print one envelope per test key, {"key":{"base64":...},"value":I}, I its index
  partition-ref.py check murmur2|crc32 N
      read "PARTITION I" lines (kcat -f '%p %s\\n' of those records) and check that
      key I is in the partition the hash gives for N partitions; exit 1 if not
  partition-ref.py partitions murmur2|crc32 N KEY...
      print "PARTITION I" for each text KEY (I its position), as check reads them

murmur2 is Kafka's Utils.murmur2, and a keyed record of Kafka's Java producer goes to
toPositive(murmur2(key)) % N (toPositive: & 0x7fffffff). crc32 is what librdkafka's
partitioner=consistent does: crc32(key) % N.
"""
import base64
import json
import random
import sys
import zlib


def murmur2(data):
    length = len(data)
    seed, m, r = 0x9747B28C, 0x5BD1E995, 24
    h = (seed ^ length) & 0xFFFFFFFF
    for i in range(0, length - length % 4, 4):
        k = data[i] | data[i + 1] << 8 | data[i + 2] << 16 | data[i + 3] << 24
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> r
        k = (k * m) & 0xFFFFFFFF
        h = (h * m) & 0xFFFFFFFF
        h ^= k
    tail = length & ~3
    rest = length % 4
    if rest == 3:
        h ^= data[tail + 2] << 16
    if rest >= 2:
        h ^= data[tail + 1] << 8
    if rest >= 1:
        h ^= data[tail]
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return h


def signed(h):
    return h - (1 << 32) if h & 0x80000000 else h


# Kafka's UtilsTest.testMurmur2 vectors: the reference is Kafka's function, not a guess.
for text, want in [(b"21", -973932308), (b"foobar", -790332482),
                   (b"a-little-bit-long-string", -985981536),
                   (b"a-little-bit-longer-string", -1486304829),
                   (b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971),
                   (b"abc", 479470107)]:
    assert signed(murmur2(text)) == want, (text, signed(murmur2(text)), want)


def keys():
    rnd = random.Random(7)
    ks = [b"", b"a", b"21", b"foobar", "é".encode(), "s\u00fcd-17".encode(), b"\x00",
          b"a\x00b", b"\xff\xfe", b"\"quoted\"", b"{\"id\":1}", b"123456789"]
    ks += [b"user-%d" % i for i in range(60)]
    ks += [bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 40))) for _ in range(60)]
    return ks


def partition(how, key, n):
    if how == "murmur2":
        return (murmur2(key) & 0x7FFFFFFF) % n
    return zlib.crc32(key) % n


def main():
    ks = keys()
    if sys.argv[1] == "keys":
        for i, k in enumerate(ks):
            print(json.dumps({"key": {"base64": base64.b64encode(k).decode()}, "value": i}))
        return 0
    how, n = sys.argv[2], int(sys.argv[3])
    if sys.argv[1] == "partitions":
        for i, k in enumerate(sys.argv[4:]):
            print(partition(how, k.encode(), n), i)
        return 0
    seen, bad = set(), 0
    for line in sys.stdin:
        p, i = map(int, line.split())
        seen.add(i)
        want = partition(how, ks[i], n)
        if p != want:
            bad += 1
            print(f"key {ks[i]!r}: partition {p}, {how} gives {want}", file=sys.stderr)
    if seen != set(range(len(ks))):
        print(f"read {len(seen)} of {len(ks)} keys", file=sys.stderr)
        return 1
    return 1 if bad else 0


sys.exit(main())
