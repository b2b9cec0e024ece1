#!/usr/bin/env python3
"""Generate the seed's weather and activity streams as NDJSON for the benchmarks.

    gen.py N OUTDIR [--shape seed|wide|numeric] [--stations 100] [--late FRACTION]
                    [--late-span SECONDS] [--shuffle-left] [--ts epoch|rfc3339] [--seed S]

writes OUTDIR/weather.ndjson (right side) and OUTDIR/activity.ndjson (left side),
N records each, shaped like the seed's messages plus a station:

    {"station":"s17","timestamp":1672567200,"value":"🌞","temp":12.5}
    {"station":"s42","timestamp":1672567201,"value":"swimming"}

Weather record i happens at BASE + 2*i (even seconds), activity record j at BASE + 2*j + 1
(odd seconds), stations drawn at random. Right times are unique and never equal a left
time, so every peer (batch or streaming, <= or <) has exactly one correct answer and ties
cannot make two fair engines disagree.

--late F moves a fraction F of the weather records later in the file, by up to
--late-span seconds of event time (default 1800): out-of-order right records that a join
with a grace of at least that span must still apply.

--shuffle-left writes the activity records in random order (a fixed permutation drawn
from the seed): the same lines as without it, the weather file unchanged.

Times stay epoch seconds (numbers) by default, which every peer reads natively;
--ts rfc3339 writes "2023-01-01T10:00:00Z".

--shape wide writes another ordinary shape instead (issue 14): records of about 200 bytes
with a 120-character text field (varied words, some of them non-ASCII, an occasional
quote or newline escaped), 10,000 stations (--stations), the key at a nested path
(.meta.station), epoch-millisecond times in .ts, and an id per record (wid, aid):

    {"wid":17,"ts":1672567234567,"meta":{"station":"s4711"},"temp":-3.5,"text":"…"}
    {"aid":17,"ts":1672567235890,"meta":{"station":"s815"},"kind":"cycling","note":"…"}

Weather record i happens at a random millisecond of second BASE + 2*i, activity j at one
of second BASE + 2*j + 1, so the rules above hold in milliseconds: right times unique and
never equal to a left time. --late-span stays in
seconds; --ts does not apply (times are numbers).

--shape numeric is the wide shape with 30 numeric members (f0 ... f29: integers and
decimals of up to six places, some negative) in place of the text: records of about 475
bytes and 33 members, as a row of sensor readings or a flattened table has.

    {"wid":17,"ts":1672567234567,"meta":{"station":"s4711"},"f0":-81.25,"f1":7,…}
"""
import argparse
import heapq
import json
import os
import random
import time

BASE = 1672567200  # 2023-01-01T10:00:00Z, the seed's first weather message
WEATHER = ["🌞", "⛅", "🌧", "🌩", "❄", "🌫"]
ACTIVITY = ["swimming", "walking home", "shopping", "lunch", "cycling", "reading"]


def fmt_time(t, style):
    if style == "epoch":
        return str(t)
    return '"' + time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t)) + '"'


def weather_lines(n, stations, style, rnd):
    for i in range(n):
        t = BASE + 2 * i
        s = rnd.randrange(stations)
        temp = rnd.randrange(-150, 350) / 10
        yield t, ('{"station":"s%d","timestamp":%s,"value":"%s","temp":%s}\n'
                  % (s, fmt_time(t, style), WEATHER[(s + i // 500) % len(WEATHER)], temp))


def activity_lines(n, stations, style, rnd):
    for j in range(n):
        t = BASE + 2 * j + 1
        s = rnd.randrange(stations)
        yield ('{"station":"s%d","timestamp":%s,"value":"%s"}\n'
               % (s, fmt_time(t, style), ACTIVITY[rnd.randrange(len(ACTIVITY))]))


# The wide shape's text: slices of a long run of seeded random words. About one word in
# twelve is not ASCII (accents, Cyrillic, CJK, emoji: 2 to 4 bytes a character).
WORDS = ("the of and to in is was for on that with as at by from sensor reading station "
         "north south east west river bridge harbour market street garden morning evening "
         "light heavy rain wind cloud clear cold warm dry humid pressure falling rising "
         "steady report update delayed normal expected route walk ride run swim shop lunch "
         "meeting office home school park trail coast hill valley city centre").split()
WORDS_INTL = ["café", "Zürich", "São", "Kraków", "naïve", "Møller", "façade", "Ελλάδα",
              "Москва", "東京", "北京", "서울", "🌧", "☀", "⛅", "€5", "—", "«ok»", "Łódź"]
TEXT_LEN = 120


def corpus(rnd, chars=1 << 20):
    out, n = [], 0
    while n < chars:
        r = rnd.random()
        w = (rnd.choice(WORDS_INTL) if r < 0.08 else '"%s"' % rnd.choice(WORDS) if r < 0.09
             else rnd.choice(WORDS) + ".\n" if r < 0.095 else rnd.choice(WORDS))
        out.append(w)
        n += len(w) + 1
    return " ".join(out)


def texts(rnd):
    """An endless supply of 120-character strings, JSON-encoded (quotes and the
    newline escaped, the rest as UTF-8)."""
    text = corpus(rnd)
    last = len(text) - TEXT_LEN
    dumps = json.JSONEncoder(ensure_ascii=False).encode
    while True:
        o = rnd.randrange(last)
        yield dumps(text[o:o + TEXT_LEN])


def wide_weather_lines(n, stations, rnd, text):
    for i in range(n):
        t = (BASE + 2 * i) * 1000 + rnd.randrange(1000)
        yield t, ('{"wid":%d,"ts":%d,"meta":{"station":"s%d"},"temp":%s,"text":%s}\n'
                  % (i, t, rnd.randrange(stations), rnd.randrange(-150, 350) / 10,
                     next(text)))


def wide_activity_lines(n, stations, rnd, text):
    for j in range(n):
        t = (BASE + 2 * j + 1) * 1000 + rnd.randrange(1000)
        yield ('{"aid":%d,"ts":%d,"meta":{"station":"s%d"},"kind":"%s","note":%s}\n'
               % (j, t, rnd.randrange(stations), ACTIVITY[rnd.randrange(len(ACTIVITY))],
                  next(text)))


NUMERIC_FIELDS = 30


def numbers(rnd):
    """An endless supply of the numeric shape's members, ',"f0":…,"f29":…', drawn from a
    pool of numbers written as JSON writers do."""
    pool = []
    for _ in range(4096):
        v = rnd.uniform(-1000, 1000)
        places = rnd.randrange(7)
        pool.append("%d" % v if places == 0 else "%.*f" % (places, v))
    names = ['"f%d":' % i for i in range(NUMERIC_FIELDS)]
    while True:
        yield "," + ",".join(n + v for n, v in zip(names, rnd.choices(pool, k=NUMERIC_FIELDS)))


def numeric_lines(n, stations, rnd, nums, idname, second):
    for i in range(n):
        t = (BASE + 2 * i + second) * 1000 + rnd.randrange(1000)
        yield t, ('{"%s":%d,"ts":%d,"meta":{"station":"s%d"}%s}\n'
                  % (idname, i, t, rnd.randrange(stations), next(nums)))


def delay_some(lines, fraction, span, rnd):
    """Hold back a fraction of (time, line) pairs until the stream passes time + delay."""
    held = []  # heap of (release_time, line)
    for t, line in lines:
        while held and held[0][0] <= t:
            yield heapq.heappop(held)[1]
        if rnd.random() < fraction:
            heapq.heappush(held, (t + rnd.randrange(2, span + 1), line))
        else:
            yield line
    while held:
        yield heapq.heappop(held)[1]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("n", type=int)
    p.add_argument("outdir")
    p.add_argument("--shape", choices=["seed", "wide", "numeric"], default="seed")
    p.add_argument("--stations", type=int)
    p.add_argument("--late", type=float, default=0.0)
    p.add_argument("--late-span", type=int, default=1800)
    p.add_argument("--shuffle-left", action="store_true")
    p.add_argument("--ts", choices=["epoch", "rfc3339"], default="epoch")
    p.add_argument("--seed", type=int, default=6)
    a = p.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    rnd = random.Random(a.seed)
    wide = a.shape != "seed"  # (numeric is wide's ids, times and keys)
    if a.stations is None:
        a.stations = 10_000 if wide else 100
    if wide and a.ts != "epoch":
        p.error("--shape %s writes epoch milliseconds; --ts does not apply" % a.shape)
    if a.shape == "numeric":
        nums = numbers(random.Random(a.seed + 4))
        w = numeric_lines(a.n, a.stations, rnd, nums, "wid", 0)
    elif wide:
        text = texts(random.Random(a.seed + 3))
        w = wide_weather_lines(a.n, a.stations, rnd, text)
    else:
        w = weather_lines(a.n, a.stations, a.ts, rnd)
    if a.late > 0:
        # a separate generator, so the late variant is a permutation of the in-order one
        lines = delay_some(w, a.late, a.late_span * (1000 if wide else 1),
                           random.Random(a.seed + 1))
    else:
        lines = (line for _, line in w)
    with open(os.path.join(a.outdir, "weather.ndjson"), "w") as f:
        f.writelines(lines)
    if a.shape == "numeric":
        left = (line for _, line in numeric_lines(a.n, a.stations, rnd, nums, "aid", 1))
    elif wide:
        left = wide_activity_lines(a.n, a.stations, rnd, text)
    else:
        left = activity_lines(a.n, a.stations, a.ts, rnd)
    if a.shuffle_left:
        # a separate generator again: the shuffled file is a permutation of the in-order one
        left = list(left)
        random.Random(a.seed + 2).shuffle(left)
    with open(os.path.join(a.outdir, "activity.ndjson"), "w") as f:
        f.writelines(left)


if __name__ == "__main__":
    main()
