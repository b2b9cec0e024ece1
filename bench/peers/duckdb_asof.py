#!/usr/bin/env python3
"""DuckDB ASOF LEFT JOIN, end to end: read_json of both NDJSON files, COPY to NDJSON.

    duckdb_asof.py ACTIVITY WEATHER OUT
"""
import sys

import duckdb

activity_path, weather_path, out_path = sys.argv[1:4]
duckdb.sql(f"""
COPY (
    SELECT a.station, a.timestamp, a.value,
           w.timestamp AS w_timestamp, w.value AS w_value, w.temp
    FROM read_json('{activity_path}', format = 'newline_delimited') a
    ASOF LEFT JOIN read_json('{weather_path}', format = 'newline_delimited') w
      ON a.station = w.station AND a.timestamp >= w.timestamp
) TO '{out_path}' (FORMAT json)
""")
