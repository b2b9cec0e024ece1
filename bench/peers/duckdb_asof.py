#!/usr/bin/env python3
"""DuckDB ASOF LEFT JOIN, end to end: read_json of both NDJSON files, COPY to NDJSON.

    duckdb_asof.py ACTIVITY WEATHER OUT [--by PATH] [--on FIELD] [--select LEFT,RIGHT]

(the options: peers/asof_args.py; a nested --by is a struct path, a.meta.station)
"""
import duckdb

import asof_args

a = asof_args.parse(__doc__)
if a.select:
    out = "a.%s, w.%s" % (a.left, a.right) if a.left != a.right else \
        "a.%s, w.%s AS w_%s" % (a.left, a.right, a.right)
else:
    out = "a.*, COLUMNS(w.* EXCLUDE (%s)) AS \"w_\\0\"" % a.top
duckdb.sql(f"""
COPY (
    SELECT {out}
    FROM read_json('{a.activity}', format = 'newline_delimited') a
    ASOF LEFT JOIN read_json('{a.weather}', format = 'newline_delimited') w
      ON a.{a.by} = w.{a.by} AND a.{a.on} >= w.{a.on}
) TO '{a.out}' (FORMAT json)
""")
