#!/usr/bin/env python3
"""pandas merge_asof, end to end: activity and weather NDJSON in, joined NDJSON out.

    pandas_asof.py ACTIVITY WEATHER OUT [--by PATH] [--on FIELD] [--select LEFT,RIGHT]

(the options: peers/asof_args.py). read_json keeps a nested object as a column of dicts;
a nested --by is taken out of it into a column first (merge_asof's by takes columns).
"""
import pandas as pd

import asof_args

a = asof_args.parse(__doc__)
# dtype=False: a column named "timestamp" would otherwise become datetime64
left = pd.read_json(a.activity, lines=True, dtype=False)
right = pd.read_json(a.weather, lines=True, dtype=False)
by = a.top
if len(a.path) > 1:
    def key(obj):
        for field in a.path[1:]:
            obj = obj[field]
        return obj
    by = "__by"
    left[by] = left[a.top].map(key)
    right[by] = right[a.top].map(key)
    right = right.drop(columns=[a.top])
right = right.rename(columns={c: "w_" + c for c in right.columns if c not in (a.top, by)})
# merge_asof needs both sides sorted on the time column (the late variant is not)
left = left.sort_values(a.on, kind="stable")
right = right.sort_values("w_" + a.on, kind="stable")
joined = pd.merge_asof(left, right, left_on=a.on, right_on="w_" + a.on,
                       by=by, direction="backward")
if a.select:
    joined = joined[[a.left, "w_" + a.right]].rename(
        columns={"w_" + a.right: a.right if a.right != a.left else "w_" + a.right})
elif by != a.top:
    joined = joined.drop(columns=[by])
joined.to_json(a.out, orient="records", lines=True, force_ascii=False)
