"""The command line the batch peers share (pandas, Polars, DuckDB), so one script per
engine joins every shape of bench/gen.py:

    SCRIPT ACTIVITY WEATHER OUT [--by PATH] [--on FIELD] [--select LEFT,RIGHT]

--by is the key's dotted path in both records (station; meta.station for the wide shape),
--on the time field (timestamp; ts), numbers compared as they are (seconds or
milliseconds alike). By default each output row is the whole activity record with the
whole weather record beside it, its fields prefixed w_ (w_timestamp, w_value, ...) but for
the key's top-level field, which equals the activity's. --select aid,wid writes only those
two fields instead (an activity field, a weather field), as ss-asof's --select does.
"""
import argparse
import re

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def parse(doc):
    p = argparse.ArgumentParser(description=doc.strip().splitlines()[0])
    p.add_argument("activity")
    p.add_argument("weather")
    p.add_argument("out")
    p.add_argument("--by", default="station")
    p.add_argument("--on", default="timestamp")
    p.add_argument("--select")
    a = p.parse_args()
    a.path = a.by.split(".")
    names = a.path + [a.on] + (a.select.split(",") if a.select else [])
    if not all(NAME.match(x) for x in names):
        p.error("field names are plain identifiers: %s" % ", ".join(names))
    a.top = a.path[0]  # the right record's field that the key is in, left out of its w_ copy
    a.left = a.right = None
    if a.select:
        if a.select.count(",") != 1:
            p.error("--select takes two fields, LEFT,RIGHT")
        a.left, a.right = a.select.split(",")
    return a
