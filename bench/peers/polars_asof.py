#!/usr/bin/env python3
"""Polars join_asof, end to end: activity and weather NDJSON in, joined NDJSON out.

    polars_asof.py ACTIVITY WEATHER OUT [--by PATH] [--on FIELD] [--select LEFT,RIGHT]

(the options: peers/asof_args.py). Whole records are read with read_ndjson; a --select
run is lazy (scan_ndjson ... sink_ndjson), so Polars reads only the columns it needs, as
DuckDB does by itself. A nested --by is taken out of its struct into a column first
(join_asof's by takes columns).
"""
import polars as pl

import asof_args

a = asof_args.parse(__doc__)
lazy = a.select is not None
read = pl.scan_ndjson if lazy else pl.read_ndjson
left, right = read(a.activity), read(a.weather)
by = a.top
if len(a.path) > 1:
    key = pl.col(a.top)
    for field in a.path[1:]:
        key = key.struct.field(field)
    by = "__by"
    left, right = left.with_columns(key.alias(by)), right.with_columns(key.alias(by))
names = right.collect_schema().names()
right = right.rename({c: "w_" + c for c in names if c not in (a.top, by)})
if by != a.top:
    right = right.drop(a.top)
joined = left.sort(a.on).join_asof(right.sort("w_" + a.on), left_on=a.on,
                                   right_on="w_" + a.on, by=by, strategy="backward",
                                   check_sortedness=False)
if lazy:
    joined.select(pl.col(a.left), pl.col("w_" + a.right).alias(
        a.right if a.right != a.left else "w_" + a.right)).sink_ndjson(a.out)
else:
    if by != a.top:
        joined = joined.drop(by)
    joined.write_ndjson(a.out)
