#!/usr/bin/env python3
"""Polars join_asof, end to end: activity and weather NDJSON in, joined NDJSON out.

    polars_asof.py ACTIVITY WEATHER OUT
"""
import sys

import polars as pl

activity_path, weather_path, out_path = sys.argv[1:4]
a = pl.read_ndjson(activity_path).sort("timestamp")
w = (pl.read_ndjson(weather_path)
     .rename({"timestamp": "w_timestamp", "value": "w_value"})
     .sort("w_timestamp"))
joined = a.join_asof(w, left_on="timestamp", right_on="w_timestamp",
                     by="station", strategy="backward", check_sortedness=False)
joined.write_ndjson(out_path)
