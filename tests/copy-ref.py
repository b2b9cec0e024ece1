#!/usr/bin/env python3
"""Records for the exact-copy property test (tests/copy.bats), and an exact reader.

  copy-ref.py gen OUT EXPECTED FILE...
      write to OUT one ss-produce --envelope line per record (every key, value and header
      in {"base64":...} form, so that any bytes can be given), and to EXPECTED the dump
      lines of those records, in partition order. The records: each FILE's bytes as a
      value (keys, headers, timestamps and partitions vary with them), then hand-made
      cases of every kind the envelope has to carry exactly.
  copy-ref.py dump
      read `kcat -C -J` lines and print one dump line per record, in partition order:
      partition, timestamp, key, value (hex, or null) and headers ([name, value] in hex).

kcat -J writes payloads and headers as JSON strings with the raw bytes inside (only
quotes, backslashes and control characters escaped), so decoding each line as Latin-1
gives every byte back, whatever it is: the reader is independent of ss and exact.
"""
import base64
import json
import sys

PARTITIONS = 3

# Hand-made payloads: each is used as a value, and as a key.
CASES = [
    b'"quoted"', b'""', b'"a\\u0041\\n"', b' {"a":1} ', b'{"a":1}\n', b'\t[1,2]', b'[1, 2]',
    b'{"a":\n1}', b'{"a":\r\n1}', b'null', b' null', b'null\n', b'nul', b'true', b'-0',
    b'1.0', b'1e400', b'123456789012345678901234567890', b'{"base64":"aGk="}',
    b'{ "base64" : "aGk=" }', b'{"base64":"!!"}', b'{"base64":"aGk=","x":1}', b'{}', b'[]',
    b'', b' ', b'\n', b'plain text', b'caf\xc3\xa9', b'\xff\xfe\x00bin', b'a\x00b',
    b'\xef\xbb\xbf{"bom":1}', b'"\\ud800"', b'"unterminated', b'\x1b[31mred\x1b[0m',
    b'{"nested":{"a":[1,{"b":null}]}}', b'\xc0\xaf', b'\xed\xa0\x80',
]

# Header lists: (name, value) pairs in order; value None is a header without a value.
HEADERS = [
    [],
    [(b"src", b"x")],
    [(b"a", b"1"), (b"a", b"2"), (b"b", b"3")],
    [(b"a", b"1"), (b"b", b"2"), (b"a", b"3")],
    [(b"a", b"1"), (b"b", b"2"), (b"b", b"3"), (b"a", b"4"), (b"c", None)],
    [(b"n", None), (b"e", b""), (b"bin", b"\xff\x00\x01"), (b"look", b'{"base64":"aGk="}')],
    [(b"q", b'"quoted"'), (b"ws", b" x "), (b"json", b'{"a":1}'), (b"nl", b"a\nb")],
    [("h\u00e9".encode(), "v\u00e9".encode()), (b"", b"empty name")],
    [(b"\xff\xfename", b"v"), (b"a", b"1")],
    [(b"r", b"1"), (b"r", b"2"), (b"r", b"3")],
]


def b64(data):
    return None if data is None else {"base64": base64.b64encode(data).decode()}


def hexs(data):
    return None if data is None else data.hex()


def dump_line(partition, ts, key, value, headers):
    return json.dumps([partition, ts, hexs(key), hexs(value),
                       [[hexs(n), hexs(v)] for n, v in headers]])


def records(files):
    recs = []
    values = [open(f, "rb").read() for f in files]
    for i, value in enumerate(values):
        key = [None, b"", b"k%d" % i, values[i - 1], CASES[i % len(CASES)]][i % 5]
        if i % 97 == 13:
            value = None  # a tombstone now and then
        recs.append((i % PARTITIONS, 1500000000000 + i * 1000, key, value,
                     HEADERS[i % len(HEADERS)]))
    n = len(recs)
    for j, case in enumerate(CASES):
        recs.append((j % PARTITIONS, 1 + j, case, case, HEADERS[j % len(HEADERS)]))
        recs.append(((j + 1) % PARTITIONS, 1700000000000 + n + j, None, case, []))
    recs.append((0, 1700000000000, b"tombstone", None, [(b"a", b"1"), (b"b", b"2"), (b"a", b"3")]))
    recs.append((1, 1700000000001, None, None, []))
    return recs


def gen(out, expected, files):
    recs = records(files)
    with open(out, "w") as f:
        for p, ts, k, v, hs in recs:
            f.write(json.dumps({"partition": p, "timestamp": ts, "key": b64(k), "value": b64(v),
                                "headers": [[b64(n), b64(hv)] for n, hv in hs]}) + "\n")
    with open(expected, "w") as f:
        for p in range(PARTITIONS):
            for rp, ts, k, v, hs in recs:
                if rp == p:
                    f.write(dump_line(p, ts, k, v, hs) + "\n")


def raw(s):
    return None if s is None else s.encode("latin-1")


def dump():
    out = []
    for line in sys.stdin.buffer:
        r = json.loads(line.decode("latin-1"))
        h = r.get("headers") or []
        headers = [(raw(h[i]), raw(h[i + 1])) for i in range(0, len(h), 2)]
        out.append((r["partition"], r["offset"],
                    dump_line(r["partition"], r["ts"], raw(r["key"]), raw(r["payload"]), headers)))
    for _, _, line in sorted(out):
        print(line)


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        dump()
