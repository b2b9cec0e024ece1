#!/usr/bin/env python3
"""tests/registry.py PORTFILE: a stand-in for a Confluent-compatible schema registry on
127.0.0.1 (an ephemeral port, written to PORTFILE), for the unit-level tests of the
registry client. Its answers are shaped as Confluent's Schema Registry API reference
documents them (written from that reference; tests/integration/registry.bats runs ss
against a real registry, Apicurio's, through scripts/registry-up): GET /schemas/ids/ID ->
{"schema": "..."}; POST /subjects/S/versions -> {"id": N} (the same id again for a schema
already registered); GET /subjects/S/versions/latest -> {"subject", "version", "id",
"schema"}; errors -> {"error_code": 40403, "message": "Schema 7 not found"} with HTTP 404.
Every request is logged to PORTFILE.log as "METHOD PATH". It stops after 10 minutes
whatever happens."""
import json, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

schemas = {}   # id -> schema text
subjects = {}  # subject -> [id, ...]
CT = "application/vnd.schemaregistry.v1+json"

def preload(path):
    # a file of lines "ID SCHEMA-JSON" registers schemas under fixed ids
    for line in open(path):
        i, text = line.rstrip("\n").split(" ", 1)
        schemas[int(i)] = text

class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass

    def answer(self, code, obj):
        # logged before the answer: the client sends its next request only after
        # reading this one's, so the log keeps the order the requests were made in
        with open(sys.argv[1] + ".log", "a") as f:
            f.write(f"{self.command} {self.path}\n")
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", CT)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        p = self.path.strip("/").split("/")
        if len(p) == 3 and p[:2] == ["schemas", "ids"] and p[2].isdigit():
            i = int(p[2])
            if i in schemas:
                return self.answer(200, {"schema": schemas[i]})
            return self.answer(404, {"error_code": 40403, "message": f"Schema {i} not found"})
        if len(p) == 4 and p[0] == "subjects" and p[2:] == ["versions", "latest"]:
            ids = subjects.get(p[1])
            if not ids:
                return self.answer(404, {"error_code": 40401, "message": f"Subject '{p[1]}' not found."})
            return self.answer(200, {"subject": p[1], "version": len(ids), "id": ids[-1], "schema": schemas[ids[-1]]})
        self.answer(404, {"error_code": 404, "message": "HTTP 404 Not Found"})

    def do_POST(self):
        p = self.path.strip("/").split("/")
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if len(p) == 3 and p[0] == "subjects" and p[2] == "versions":
            text = body["schema"]
            try:
                json.loads(text)
            except ValueError:
                return self.answer(422, {"error_code": 42201, "message": "Either the input schema or one of its references is invalid"})
            canon = json.dumps(json.loads(text), separators=(",", ":"))
            for i, s in schemas.items():
                if json.dumps(json.loads(s), separators=(",", ":")) == canon:
                    break
            else:
                i = max(schemas, default=0) + 1
                schemas[i] = canon
            if i not in subjects.setdefault(p[1], []):
                subjects[p[1]].append(i)
            return self.answer(200, {"id": i})
        self.answer(404, {"error_code": 404, "message": "HTTP 404 Not Found"})

if len(sys.argv) > 2:
    preload(sys.argv[2])
srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
import os
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
threading.Timer(600, srv.shutdown).start()
srv.serve_forever()
