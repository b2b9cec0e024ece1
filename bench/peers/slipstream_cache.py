#!/usr/bin/env python3
"""The seed's Cache (slipstream-async on rocksdict): fill it as a sink, or scan it in order.

    slipstream_cache.py put WEATHER STATE_DIR   weather NDJSON -> Cache, key "station|time"
    slipstream_cache.py scan STATE_DIR OUT      every {"key":K,"value":V} in key order

put is the weather half of the seed's nearby join (handle_weather with the Cache as its
sink); the key is the composite (station, time) that ss-cache gets as
'[.station,.timestamp]', written the only way rocksdict orders it: a string with the time
zero-padded.
"""
import asyncio
import json
import sys

from slipstream import Cache, handle, stream


def put(weather_path, state_dir):
    cache = Cache(state_dir)

    async def async_iterable(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                await asyncio.sleep(0)
                yield json.loads(line)

    @handle(async_iterable(weather_path), sink=[cache])
    def handle_weather(w):
        yield "%s|%012d" % (w["station"], w["timestamp"]), w

    asyncio.run(stream())
    cache.close()


def scan(state_dir, out_path):
    cache = Cache(state_dir)
    with open(out_path, "w", encoding="utf-8") as out:
        for key, value in cache.items():
            out.write(json.dumps({"key": key, "value": value}, ensure_ascii=False) + "\n")
    cache.close()


if __name__ == "__main__":
    {"put": put, "scan": scan}[sys.argv[1]](*sys.argv[2:4])
