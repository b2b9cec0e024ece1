#!/usr/bin/env python3
"""Random Kafka topologies for ss-asof with default flags, and the brute-force answer they
must give (tests/asof-topology.bats on the mock broker, tests/integration/asof-topology.bats
on a real one; the steps between are in tests/asof-topo.bash).

  asof-topo.py gen SEED DIR
      DIR/plan   shell assignments: PL PR (partition counts), LMETH RMETH (how each topic
                 is produced: ss-key, kcat-key, ss-part, kcat-part, ss-null,
                 kcat-null), NL NR, TRICKLE,
                 BROKERS_N (brokers of the mock cluster)
      DIR/runs   one run a line: KIND EMIT DIRECTION STRICT TOL BY LSPEED RSPEED MEM
                 (MEM: - or SPILL/HISTORY, SS_ASOF_SPILL_BYTES and SS_ASOF_HISTORY_BYTES)
      DIR/left.tsv, DIR/right.tsv   PARTITION<TAB>KEY<TAB>VALUE, in production order
                 (PARTITION -1: the producer's partitioner picks it from KEY)
  asof-topo.py shuffle SEED IN OUT
  asof-topo.py check INPUT EMIT DIRECTION STRICT TOL BY LEFT RIGHT OUT [ERR]
      INPUT live: LEFT and RIGHT are dumps of the topics (kcat -f '%p\\t%o\\t%s\\n'),
      INPUT file: they are the very files ss-asof read. OUT is ss-asof's output, ERR its
      standard error. Prints what differs and exits 1 when OUT is not the reference.
  asof-topo.py ref INPUT EMIT DIRECTION STRICT TOL BY LEFT RIGHT
      The reference pairs, one [left id, right id or null] a line.

The reference, independent of ss (exact decimal times):
- live input: a right record is late when an earlier record (lower offset) of its own
  partition has a newer time (grace 0). defer and eager leave late records out; for revise
  the last revision written for each left record is the brute force over every right
  record, late ones included.
- files: every right record counts; nothing in a file is late.
- backward: the right record with the same key (with BY) and the latest time <= the left
  time (STRICT: <); forward: the earliest >= (>); nearest: the closer, ties backward;
  TOL >= 0: at most that many seconds away. Of several right records with the same key and
  time the winner is, live, the one of the higher partition, then the higher offset; in
  files, the later line.
- every left record is answered exactly once (defer, eager), or first with revision 0 and
  then revisions 1, 2 ... in the order written (revise).
"""
import json
import random
import re
import sys
from decimal import Decimal

T0 = 1700000000


def compact(o):
    return json.dumps(o, separators=(",", ":"))


# ---------------------------------------------------------------- generation

def gen(seed, d):
    r = random.Random(seed)
    pl, pr = r.randint(1, 8), r.randint(1, 8)
    nst = r.choice([1, 2, 3, 5, 8, 13, 21])
    nr, nl = r.randint(20, 600), r.randint(10, 300)
    brokers = r.choice([1, 1, 2, 3])            # the mock's broker count (leaders spread)
    # keyed by station (murmur2, CRC32), explicit partitions, or a null key (the
    # producer's partitioner spreads them)
    meths = ["ss-key", "kcat-key", "ss-part", "kcat-part", "ss-null", "kcat-null"]
    lmeth, rmeth = r.choice(meths), r.choice(meths)
    trickle = r.random() < 0.25
    if trickle:  # produced while consumed: in chunks, by ss-produce only
        lmeth, rmeth = r.choice(meths[0::2]), r.choice(meths[0::2])
    mem = r.random() < 0.3                      # tiny memory limits: held and history spill
    step = r.choice([1, 2, 5, 10])              # seconds between right records
    frac = r.random() < 0.2                     # times with halves and quarters
    pdup = r.choice([0, 0.1, 0.3])              # a right time repeated (same key or not)
    plate = r.choice([0, 0, 0.02, 0.1])         # a right record pulled back in time
    pooo = r.choice([0, 0.05, 0.3, 1.0])        # a left record anywhere in time
    pexact = r.choice([0.05, 0.3])              # a left record at a right record's time
    stations = ["s%d" % i for i in range(nst)]

    def skews(n):  # a partition (or station) behind the others in event time
        return [r.choice([0, 0, 0, 20, 200]) * step for _ in range(n)]

    def part_of(n):  # uneven: some partitions get little or nothing
        w = [r.choice([0, 1, 1, 3, 10]) for _ in range(n)]
        if not any(w):
            w[r.randrange(n)] = 1
        return lambda: r.choices(range(n), weights=w)[0]

    def jitter():
        return Decimal(r.choice([0, 25, 50, 75])) / 100 if frac else 0

    # right: in production order, times rising but for the duplicates and the late ones
    right = []
    rexplicit = rmeth.endswith("-part")
    rpart = part_of(pr)
    rskew = skews(pr)
    newest = {}  # explicit partitions: the newest time of each so far
    for i in range(nr):
        p = rpart() if rexplicit else -1
        k = r.choice(stations)
        t = T0 + i * step + jitter() - (rskew[p] if rexplicit else 0)
        if r.random() < pdup:
            # a recent time again, of this key or another, in this partition or another
            # (explicit partitions: only one that is neither late in this one nor ahead
            # of it, which would make the records after it late)
            prev = [x for x in right[-8:] if not rexplicit or newest.get(p, x["t"]) <= x["t"] <= t]
            if prev:
                x = r.choice(prev)
                t = x["t"]
                if r.random() < 0.5:
                    k = x["k"]
        if r.random() < plate:
            t -= r.randint(1, 30) * step
        newest[p] = max(newest.get(p, t), t)
        right.append({"id": "R%d" % i, "k": k, "t": t, "p": p})
    tmin = min(x["t"] for x in right)
    tmax = max(x["t"] for x in right)
    # left: along the same span, some out of order, some at a right time, some before all
    left = []
    lexplicit = lmeth.endswith("-part")
    lpart = part_of(pl)
    lskew = skews(pl) if lexplicit else None
    sskew = dict(zip(stations, skews(nst)))
    span = tmax - tmin + 1
    for i in range(nl):
        p = lpart() if lexplicit else -1
        k = r.choice(stations)
        t = tmin + (span * i) // nl + jitter()
        t -= lskew[p] if lexplicit else sskew[k]
        u = r.random()
        if u < pexact:
            x = r.choice(right)
            t = x["t"]
            if r.random() < 0.8:
                k = x["k"]
        elif u < pexact + pooo:
            t = tmin - 5 * step + r.randrange(int(span) + 10 * step) + jitter()
        left.append({"id": "L%d" % i, "k": k, "t": t, "p": p})
    if r.random() < 0.6:  # left records before every right record, anywhere in the order
        for _ in range(r.randint(1, 3)):
            left.insert(r.randrange(len(left) + 1),
                        {"id": "L%d" % len(left), "k": r.choice(stations),
                         "t": tmin - r.randint(1, 50) * step, "p": lpart() if lexplicit else -1})
    for name, recs in (("left", left), ("right", right)):
        with open("%s/%s.tsv" % (d, name), "w") as f:
            for x in recs:
                v = {"id": x["id"], "k": x["k"], "t": x["t"]}
                if x["p"] >= 0:
                    v["p"] = x["p"]
                f.write("%d\t%s\t%s\n" % (x["p"], x["k"], json.dumps(v, separators=(",", ":"), default=num)))
    with open(d + "/plan", "w") as f:
        f.write("PL=%d PR=%d LMETH=%s RMETH=%s NL=%d NR=%d TRICKLE=%d BROKERS_N=%d\n"
                % (pl, pr, lmeth, rmeth, len(left), nr, trickle, brokers))

    def opts(emits):
        direction = r.choice(["backward", "backward", "forward", "nearest"])
        strict = int(r.random() < 0.3)
        tol = r.choice([-1, -1, 0, step, 5 * step, 50 * step])
        by = int(r.random() < 0.8)
        return "%s %s %d %d %d" % (r.choice(emits), direction, strict, tol, by)

    def memory():
        # SS_ASOF_SPILL_BYTES/SS_ASOF_HISTORY_BYTES so small that held left records and
        # right history go to disk: the answer must not change
        if not mem or r.random() < 0.3:
            return "-"
        return "%d/%d" % (r.choice([1, 500, 4000]), r.choice([1, 500, 4000]))

    def speed(kind):
        s = r.choice(["none", "none", "stop", "fetch", "delay"])
        if s == "stop":  # SIGSTOP for a while, SIGCONT, a few times
            return "stop:" + ",".join("%.2f/%.2f" % (r.uniform(0, 0.3), r.uniform(0.05, 0.4))
                                      for _ in range(r.randint(1, 3)))
        if s == "delay":
            return "delay:%.2f" % r.uniform(0.1, 1.0)
        return s

    runs = []
    if trickle:
        runs.append("trickle %s %s %s %s" % (opts(["defer", "revise"]), speed(0), speed(1), memory()))
    for emit in ("defer", "revise"):
        runs.append("live2 %s %s %s %s" % (opts([emit]), speed(0), speed(1), memory()))
    for emit in ("defer", "revise"):
        runs.append("live1 %s %s none %s" % (opts([emit]), speed(0), memory()))
    for kind in ("files", "shuffled"):
        for emit in ("eager", "defer", "revise"):
            runs.append("%s %s none none %s" % (kind, opts([emit]), memory()))
    with open(d + "/runs", "w") as f:
        f.write("\n".join(runs) + "\n")


def num(x):
    if isinstance(x, Decimal):
        return int(x) if x == x.to_integral_value() else float(x)
    raise TypeError(x)


def shuffle(seed, src, dst):
    lines = open(src, encoding="utf-8").read().splitlines()
    random.Random(seed).shuffle(lines)
    with open(dst, "w", encoding="utf-8") as f:
        f.write("".join(l + "\n" for l in lines))


# ---------------------------------------------------------------- the reference

def load(path):
    """Records of a dump (kcat '%p\\t%o\\t%s') or of a file of envelopes, in line order."""
    out = []
    for n, line in enumerate(open(path, encoding="utf-8").read().splitlines()):
        if not line.strip():
            continue
        if line.startswith("{"):
            e = json.loads(line, parse_float=Decimal)
            p, o, v = e["partition"], e["offset"], e["value"]
        else:
            p, o, raw = line.split("\t", 2)
            p, o, v = int(p), int(o), json.loads(raw, parse_float=Decimal)
        out.append({"id": v["id"], "k": v["k"], "t": Decimal(v["t"]) if not isinstance(v["t"], Decimal) else v["t"],
                    "p": p, "o": o, "line": n, "late": False})
    return out


def mark_late(right):
    newest = {}
    for x in sorted(right, key=lambda x: (x["p"], x["o"])):
        if x["p"] in newest and x["t"] < newest[x["p"]]:
            x["late"] = True
        newest[x["p"]] = max(newest.get(x["p"], x["t"]), x["t"])


def reference(live, emit, direction, strict, tol, by, left, right):
    if live:
        mark_late(right)
    cands = [x for x in right if not (x["late"] and emit != "revise")]
    rank = (lambda x: (x["p"], x["o"])) if live else (lambda x: x["line"])
    bykey = {}  # the candidates of each key (all of them under one without BY)
    for x in cands:
        bykey.setdefault(x["k"] if by else None, []).append(x)
    want = {}
    for l in left:
        t = l["t"]
        b = f = None
        for x in bykey.get(l["k"] if by else None, []):
            if (x["t"] < t) if strict else (x["t"] <= t):
                if b is None or (x["t"], rank(x)) > (b["t"], rank(b)):
                    b = x
            if (x["t"] > t) if strict else (x["t"] >= t):
                if f is None or x["t"] < f["t"] or (x["t"] == f["t"] and rank(x) > rank(f)):
                    f = x
        if b is not None and tol >= 0 and t - b["t"] > tol:
            b = None
        if f is not None and tol >= 0 and f["t"] - t > tol:
            f = None
        if direction == "backward":
            m = b
        elif direction == "forward":
            m = f
        else:
            m = f if f is not None and (b is None or f["t"] - t < t - b["t"]) else b
        want[l["id"]] = m["id"] if m is not None else None
    return want


def args(argv):
    inp, emit, direction, strict, tol, by = argv[:6]
    assert inp in ("live", "file") and emit in ("eager", "defer", "revise")
    assert direction in ("backward", "forward", "nearest")
    return inp == "live", emit, direction, strict == "1", Decimal(tol), by == "1"


def ref_main(argv):
    live, emit, direction, strict, tol, by = args(argv)
    left, right = load(argv[6]), load(argv[7])
    want = reference(live, emit, direction, strict, tol, by, left, right)
    for lid in sorted(want, key=lambda s: int(s[1:])):
        print(compact([lid, want[lid]]))


def describe(x):
    if x is None:
        return "null"
    s = "%s(t=%s k=%s p=%d o=%d" % (x["id"], x["t"], x["k"], x["p"], x["o"])
    return s + (" LATE)" if x["late"] else ")")


def check_main(argv):
    live, emit, direction, strict, tol, by = args(argv)
    left, right = load(argv[6]), load(argv[7])
    out_path = argv[8]
    err = open(argv[9], encoding="utf-8", errors="replace").read() if len(argv) > 9 else ""
    want = reference(live, emit, direction, strict, tol, by, left, right)
    lrec = {x["id"]: x for x in left}
    rrec = {x["id"]: x for x in right}
    problems = []
    got, revs = {}, {}
    for n, line in enumerate(open(out_path, encoding="utf-8").read().splitlines(), 1):
        try:
            o = json.loads(line)
            lid = o["left"]["value"]["id"]
            rid = o["right"]["value"]["id"] if o["right"] is not None else None
        except (ValueError, KeyError, TypeError) as e:
            problems.append("output line %d unreadable (%s): %s" % (n, e, line[:200]))
            continue
        if lid not in lrec:
            problems.append("output line %d: left %s was never produced" % (n, lid))
            continue
        if rid is not None and rid not in rrec:
            problems.append("output line %d: right %s was never produced" % (n, rid))
        if emit == "revise":
            rev = o.get("revision")
            exp = revs.get(lid, -1) + 1
            if rev != exp:
                problems.append("output line %d: %s revision %r, want %d" % (n, lid, rev, exp))
            revs[lid] = exp
        else:
            if "revision" in o:
                problems.append("output line %d: a revision in %s mode" % (n, emit))
            if lid in got:
                problems.append("output line %d: %s answered twice" % (n, lid))
        got[lid] = rid
    missing = [lid for lid in want if lid not in got]
    if missing:
        problems.append("%d of %d left records never answered: %s" % (
            len(missing), len(want), " ".join(describe(lrec[x]) for x in missing[:5])))
    wrong = [lid for lid in want if lid in got and got[lid] != want[lid]]
    # a hint at the cause of each wrong answer, counted
    if emit == "revise" and live:
        nolate = reference(live, "defer", direction, strict, tol, by, left, right)
    hints = {}
    for lid in wrong:
        w, g = rrec.get(want[lid]), rrec.get(got[lid])
        if emit == "revise" and live and (got[lid] == nolate[lid] or (w is not None and w["late"])):
            h = "late right records not applied (the answer without them)" if got[lid] == nolate[lid] \
                else "the answer is a late right record"
        elif w is not None and g is not None and w["t"] == g["t"] and (not by or w["k"] == g["k"]):
            h = "a tie (same key and time) won by the wrong record"
        else:
            h = "other"
        hints[lid] = h
    summary = {}
    for h in hints.values():
        summary[h] = summary.get(h, 0) + 1
    for h, c in sorted(summary.items()):
        problems.append("  %d wrong: %s" % (c, h))
    shown = sorted(wrong, key=lambda lid: hints[lid] != "other")[:8]
    for lid in shown:
        problems.append("left %s: want %s, got %s [%s]" % (
            describe(lrec[lid]), describe(rrec.get(want[lid])), describe(rrec.get(got[lid])),
            hints[lid]))
    if len(wrong) > 8:
        problems.append("... %d more wrong" % (len(wrong) - 8))
    nlate = sum(x["late"] for x in right)
    if emit != "revise":
        # the summary counts the late records the reference left out. A run ends once the
        # left input has ended and no left record is held, so it may not read the right
        # topic to its end: then its count covers only the records it read. (No summary:
        # nothing deserved attention; taken, strictly, as all read and none late.)
        m = re.search(r"right (\d+) \(late (\d+)\)", err)
        read, said = (int(m.group(1)), int(m.group(2))) if m else (len(right), 0)
        if read == len(right) and said != nlate:
            problems.append("late right records: ss-asof says %d, the reference has %d" % (said, nlate))
        elif read < len(right) and said > nlate:
            problems.append("late right records: ss-asof says %d of the %d it read, more than the "
                            "reference's %d of all %d" % (said, read, nlate, len(right)))
        elif read > len(right):
            problems.append("ss-asof read %d right records, the topic holds %d" % (read, len(right)))
    if problems:
        print("%d/%d left records wrong, %d missing; right late %d of %d" % (
            len(wrong), len(want), len(missing), nlate, len(right)))
        print("\n".join(problems))
        sys.exit(1)


def main():
    cmd, argv = sys.argv[1], sys.argv[2:]
    if cmd == "gen":
        gen(int(argv[0]), argv[1])
    elif cmd == "shuffle":
        shuffle(int(argv[0]), argv[1], argv[2])
    elif cmd == "ref":
        ref_main(argv)
    elif cmd == "check":
        check_main(argv)
    else:
        sys.exit("usage: see the top of " + sys.argv[0])


if __name__ == "__main__":
    main()
