#!/usr/bin/env python3
"""The seed's nearby join on slipstream-async, with its handlers and its Cache on rocksdict.

    slipstream_asof.py ACTIVITY WEATHER OUT STATE_DIR

The handlers are the seed's (slipstream-howto.txt, "Nearby Join"): weather is cached by
event time, and each activity takes the first value of a backwards scan of the cache from
its own time. Two changes make it the same join as `ss-asof --by .station`: the cache key
is "station|time" (zero-padded epoch seconds, so byte order is time order within a
station) and a scan that lands on another station's key means "no match"; and the seed's
fall-through `yield a['value'], '?'` only runs when nothing matched (for/else).

Sources are the seed's async_iterable over the NDJSON files, with sleep(0) instead of the
article's demo pacing of sleep(0.01). The activity source starts once the weather source
is exhausted: the only arrangement in which slipstream's eager join gives the exact
answer that ss-asof's default (defer) gives, and also slipstream's fastest one.
"""
import asyncio
import json
import sys

from slipstream import Cache, handle, stream

activity_path, weather_path, out_path, state_dir = sys.argv[1:5]
weather_cache = Cache(state_dir + "/weather")
weather_done = asyncio.Event()
out = open(out_path, "w", encoding="utf-8")


async def async_iterable(path, done=None, after=None):
    if after is not None:
        await after.wait()
    with open(path, encoding="utf-8") as f:
        for line in f:
            await asyncio.sleep(0)
            yield json.loads(line)
    if done is not None:
        done.set()


def cache_key(station, unix_ts):
    return "%s|%012d" % (station, unix_ts)


def write(row):
    out.write(json.dumps(row, ensure_ascii=False) + "\n")


@handle(async_iterable(weather_path, done=weather_done), sink=[weather_cache])
def handle_weather(w):
    unix_ts = w["timestamp"]
    yield cache_key(w["station"], unix_ts), w


@handle(async_iterable(activity_path, after=weather_done), sink=[write])
def handle_activity(a):
    unix_ts = a["timestamp"]
    for w in weather_cache.values(backwards=True, from_key=cache_key(a["station"], unix_ts)):
        if w["station"] == a["station"]:
            yield {**a, "w_timestamp": w["timestamp"], "w_value": w["value"], "temp": w["temp"]}
            break
        yield {**a, "w_timestamp": None, "w_value": None, "temp": None}
        break
    else:
        yield {**a, "w_timestamp": None, "w_value": None, "temp": None}


asyncio.run(stream())
out.close()
