#!/usr/bin/env python3
"""wal-first-commit.py WAL: the application_id in page 1 as the first transaction in a
SQLite WAL file left it, and whether that page then held a table named ss_kv: "ID yes|no".
(The WAL format: a 32-byte header with the page size at offset 8, then frames of a
24-byte header -- page number, the database size after a commit or 0 -- and the page.)"""
import struct
import sys

data = open(sys.argv[1], 'rb').read()
page_size = struct.unpack('>I', data[8:12])[0]
pos, page1 = 32, None
while pos + 24 + page_size <= len(data):
    pgno, commit = struct.unpack('>II', data[pos:pos + 8])
    page = data[pos + 24:pos + 24 + page_size]
    if pgno == 1:
        page1 = page
    pos += 24 + page_size
    if commit:
        break
if page1 is None:
    sys.exit('no page 1 in the first transaction')
app_id = struct.unpack('>I', page1[68:72])[0]
print(app_id, 'yes' if b'ss_kv' in page1 else 'no')
