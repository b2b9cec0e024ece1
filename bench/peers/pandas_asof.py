#!/usr/bin/env python3
"""pandas merge_asof, end to end: activity and weather NDJSON in, joined NDJSON out.

    pandas_asof.py ACTIVITY WEATHER OUT
"""
import sys

import pandas as pd

activity_path, weather_path, out_path = sys.argv[1:4]
# dtype=False: a column named "timestamp" would otherwise become datetime64
a = pd.read_json(activity_path, lines=True, dtype=False)
w = pd.read_json(weather_path, lines=True, dtype=False)
w = w.rename(columns={"timestamp": "w_timestamp", "value": "w_value"})
# merge_asof needs both sides sorted on the time column (the late variant is not)
a = a.sort_values("timestamp", kind="stable")
w = w.sort_values("w_timestamp", kind="stable")
joined = pd.merge_asof(a, w, left_on="timestamp", right_on="w_timestamp",
                       by="station", direction="backward")
joined.to_json(out_path, orient="records", lines=True, force_ascii=False)
