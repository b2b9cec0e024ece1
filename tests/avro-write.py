#!/usr/bin/env python3
"""tests/avro-write.py SCHEMA [ID]: JSON records on stdin (one a line, in fastavro's JSON
form: unions as {"type": value}) written as Avro binary by fastavro, a real Avro writer,
each printed as {"base64": ...} for `ss-produce --value .` to send as bytes. With ID: the
schema registry's wire format (a zero byte, ID as 4 big-endian bytes, then the Avro).
tests/avro-write.py --read SCHEMA: the reverse, bytes in base64 form on stdin (as
ss-consume prints them) to fastavro's JSON of each record (the wire prefix removed when
present)."""
import base64, io, json, struct, sys
import fastavro
from fastavro import json_reader, json_writer

def parse(path):
    return fastavro.parse_schema(json.load(open(path)))

def from_json(schema, line):
    return next(iter(json_reader(io.StringIO(line), schema)))

def to_json(schema, rec):
    out = io.StringIO()
    json_writer(out, schema, [rec])
    return out.getvalue().strip()

if sys.argv[1] == "--read":
    schema = parse(sys.argv[2])
    for line in sys.stdin:
        raw = base64.b64decode(json.loads(line)["base64"])
        if raw[:1] == b"\0":
            print("id", struct.unpack(">I", raw[1:5])[0], end=" ")
            raw = raw[5:]
        print(to_json(schema, fastavro.schemaless_reader(io.BytesIO(raw), schema)))
    sys.exit(0)
schema = parse(sys.argv[1])
prefix = b"\0" + struct.pack(">I", int(sys.argv[2])) if len(sys.argv) > 2 else b""
for line in sys.stdin:
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, schema, from_json(schema, line))
    print(json.dumps({"base64": base64.b64encode(prefix + buf.getvalue()).decode()}))
