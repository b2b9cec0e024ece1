#!/usr/bin/env python3
"""tests/checkpoint-ref.py: random topologies for ss-checkpoint, and the downtime episodes
a brute-force reference computes from all their records in event-time order.

  checkpoint-ref.py gen SEED DIR    write DIR/topo, DIR/run-NNN-{act,wx} and DIR/ref.json
  checkpoint-ref.py check DIR       compare DIR/events (ss-checkpoint pulse --events) and
                                    DIR/steps (the events line count after each run) with
                                    DIR/ref.json; exit 1 with the difference

The world: a dependent topic (act, 1-8 partitions) and a dependency topic (wx, 1-8
partitions), records keyed or not, event times strictly increasing over both topics
together. Cut that sequence into maximal runs of one topic: the harness produces each
run in turn and reads it with `ss-consume -e --offsets-from` (partitions one after
another) into `ss-checkpoint heartbeat` (a wx run, read to its end) or `ss-checkpoint
pulse` (an act run; when it pauses, the next wx run goes on while it waits). So when
the pulse reads a run, the dependency has arrived exactly as far as event-time order
says, and each partition of either topic has delivered in its own order only.

The reference reads all records one by one in event-time order (the seed and
ss-checkpoint(1)):
  - a dependency record at t: the heartbeat H = the largest such t so far;
  - a dependent record at t: the dependent marker P = t (event-time order: the stream is
    as far as its last record). A dependency never heard from counts from the first
    dependent record (H stands in as that record's time, `since`). If up and
    P - H > threshold (strictly), a downtime starts: dependency_marker H (null when
    never heard), dependent_marker P; the stream pauses;
  - paused, it recovers when the heartbeat has passed the dependent marker at which the
    downtime started (H > P at downtime); the records behind the pause pass after it
    and, being older than H, start nothing.
An episode is the act run it starts in, its dependency_marker, and the wx run it
recovers in. The dependent marker at which ss-checkpoint detects it is the dependent
stream's low watermark at that moment: with partitions read one after another it may be
a later record's time than the reference's first crossing, never an earlier one, and
never past the run; the check allows exactly that range (and lag = dependent_marker -
dependency_marker).
"""
import calendar
import json
import random
import sys
import time

THRESHOLD = 30 * 60
T0 = 1672567200  # 2023-01-01T10:00:00Z


def rfc3339(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def gen_runs(rng):
    """Alternating runs [(topic, [times])], times strictly increasing, ending with wx."""
    topic = rng.choice(["act", "wx"])
    t, runs = T0, []
    for _ in range(rng.randint(3, 8)):
        step = rng.choice([1, 3, 8])  # minutes between records within a run, at most
        times = []
        for _ in range(rng.randint(1, 10)):
            t += 60 * rng.randint(1, step)
            times.append(t)
        runs.append((topic, times))
        t += 60 * rng.randint(1, 45)  # the gap before the other topic speaks
        topic = "wx" if topic == "act" else "act"
    if runs[-1][0] == "act":
        runs.append(("wx", [t]))  # the dependency comes last: every episode recovers
    return runs


def reference(runs):
    """Episodes from all records in event-time order (see the module comment)."""
    h = since = None
    down = None  # the open episode
    episodes = []
    for run, (topic, times) in enumerate(runs):
        for t in times:
            if topic == "wx":
                h = t if h is None else max(h, t)
                if down is not None and h > down["at"]:
                    down["recovered_run"] = run
                    down = None
                continue
            if since is None and h is None:
                since = t
            if down is None and t - (h if h is not None else since) > THRESHOLD:
                down = {"run": run, "dependency_marker": rfc3339(h) if h is not None else None,
                        "lag_from": h if h is not None else since, "at": t,
                        "first": rfc3339(t), "last": rfc3339(times[-1]),
                        "times": [rfc3339(x) for x in times if x >= t]}
                episodes.append(down)
    for e in episodes:
        del e["at"]
    return episodes


def gen(seed, d):
    rng = random.Random(seed)
    runs = gen_runs(rng)
    topo = {"act": rng.randint(1, 8), "wx": rng.randint(1, 8),
            "act_keyed": rng.random() < 0.5, "wx_keyed": rng.random() < 0.5}
    with open(d + "/topo", "w") as f:
        f.write("%d %d %d %d %d\n" % (topo["act"], topo["wx"], topo["act_keyed"], topo["wx_keyed"],
                                      len(runs)))
    n = 0
    for run, (topic, times) in enumerate(runs):
        with open("%s/run-%03d-%s" % (d, run, topic), "w") as f:
            for t in times:
                key = "s%d" % rng.randint(0, 11)
                f.write(json.dumps({"t": rfc3339(t), "k": key, "n": n}, separators=(",", ":")) + "\n")
                n += 1
    with open(d + "/ref.json", "w") as f:
        json.dump({"runs": [[topic, [rfc3339(t) for t in times]] for topic, times in runs],
                   "episodes": reference(runs)}, f, indent=1)


def fail(msg, ref, events):
    sys.stderr.write("%s\nreference: %s\nss-checkpoint: %s\n" % (
        msg, json.dumps(ref["episodes"]), json.dumps(events)))
    sys.exit(1)


def check(d):
    ref = json.load(open(d + "/ref.json"))
    events = [json.loads(l) for l in open(d + "/events") if l.strip()]
    steps = [int(l.split()[1]) for l in open(d + "/steps")]
    # the run after which each event had appeared
    for i, e in enumerate(events):
        e["run"] = next(r for r, n in enumerate(steps) if n > i)
    downs = [e for e in events if e["event"] == "downtime"]
    ups = [e for e in events if e["event"] == "recovery"]
    want = ref["episodes"]
    if len(downs) != len(want) or len(ups) != len(want):
        fail("%d downtimes, %d recoveries, want %d episodes" % (len(downs), len(ups), len(want)),
             ref, events)
    for e, w in zip(downs, want):
        if e["run"] != w["run"] or e["dependency_marker"] != w["dependency_marker"]:
            fail("downtime in run %d at dependency marker %s, want run %d at %s" % (
                e["run"], e["dependency_marker"], w["run"], w["dependency_marker"]), ref, events)
        if e["dependent_marker"] not in w["times"]:
            fail("downtime at dependent marker %s: not a time of run %d from %s on" % (
                e["dependent_marker"], w["run"], w["first"]), ref, events)
        lag = calendar.timegm(time.strptime(e["dependent_marker"], "%Y-%m-%dT%H:%M:%SZ")) - \
            w["lag_from"]
        if e["lag"] != lag:
            fail("lag %s, want %s" % (e["lag"], lag), ref, events)
    for e, w in zip(ups, want):
        if e["run"] != w["recovered_run"]:
            fail("recovery after run %d, want %d" % (e["run"], w["recovered_run"]), ref, events)
    kinds = [e["event"] for e in events]
    if kinds != ["downtime", "recovery"] * len(want):
        fail("events out of order: %s" % kinds, ref, events)


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(int(sys.argv[2]), sys.argv[3])
    else:
        check(sys.argv[2])
