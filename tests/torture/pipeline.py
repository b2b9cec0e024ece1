#!/usr/bin/env python3
"""The full pipeline on a real Kafka broker (scripts/kafka-up), killed and restarted:

  ss-asof --state S.db --acks A.db --right-end-file E --emit MODE \\
          <(ss-consume --offsets-from S.db -e -b B activity) \\
          <(ss-consume --offsets-from S.db -e --end-file E -b B weather) --on .value.t \\
          --by .value.station --grace 30s --tolerance 30m --right-partitions 3 ... |
    ss-produce -b B --acks A.db --key '[.left.partition, .left.offset]' enriched

Two topics of three partitions keyed by station; weather out of order (one record in ten
late past --grace), activity out of order too. At random moments one process of the
pipeline gets SIGKILL (which ones: PIPE_TARGETS below); the survivors end as the pipe
tells them (EOF, EPIPE, or a data error on a line cut short), and the pipeline is
restarted, resuming from S.db's applied offsets (one restart in four starts the
consumers up to 2000 records earlier: a replay), until a run answers every activity
record. Checks:

  - after every run: S.db opens (integrity_check); its offsets never pass a partition's
    end nor go back (but in a replay); its right history is exactly the weather records
    up to its applied offsets that are not late, each applied once;
  - after the last run: every activity record applied (the weather consumer may stop
    early: once every activity is answered, ss-asof needs no more weather), none held;
  - the output topic read back with ss-consume holds every activity record (none lost);
    defer, revise: the result written last per activity record (its partition and offset,
    the key: what compaction keeps) equals the uninterrupted run's in the same
    invocation, and that equals tests/asof-ref.py (run per station) over the weather
    that is not late;
  - eager depends on how the two streams interleave, so it is not compared: every
    result's match is a weather record of its station, not late, at or before its time,
    within the tolerance, and no newer than the final answer (eager never sees the future).

usage: pipeline.py [MODE...]   (default: defer revise eager; needs java, skips without)
Environment: SEED (default 1), KILLS per mode (default 50), PIPE_RECORDS per topic
(default 20000), PIPE_TARGETS: the processes to kill, among left, right (the consumers),
asof, produce, all, and commit (ss-produce right after ss-asof committed a batch); the
default is DEFAULT_TARGETS, per mode; PIPE_DEBUG=1 prints a line per run. Prints one
figure line per mode; exits 1 if an invariant failed.
"""
import collections
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the tree for the two imports below
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import broker as kafka  # noqa: E402  (Broker: kafka-up/kafka-down from the torture suite)
from crash import Failed, Figures, kill_delay, open_checked  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("SS_BIN", os.path.join(ROOT, "bin"))
SEED = int(os.environ.get("SEED", "1"))
KILLS = int(os.environ.get("KILLS", "50"))
N = int(os.environ.get("PIPE_RECORDS", "20000"))
# What each mode's kills hit by default: every process. A killed weather consumer's pipe
# ends as a finished one's does; without its end file ss-asof exits 75 and keeps its held
# records for the next run (--right-end-file). Results ss-asof committed but ss-produce
# had not delivered when it was killed are kept in S.db and written again by the next
# run (--acks): produce, commit, all.
DEFAULT_TARGETS = dict.fromkeys(("defer", "revise", "eager"), "left right asof produce commit all")
TARGETS_ENV = os.environ.get("PIPE_TARGETS")
PARTS = 3
STATIONS = 60
GRACE = 30
# Only weather of the last half hour matches: a few results without one, and revise's
# revisions stay linear (without it, an activity stream that runs ahead of the weather
# is revised by every weather record of its station: quadratic)
TOLERANCE = 1800
RUN_TIMEOUT = 120  # seconds a run may take before it counts as hung


def targets(mode):
    return (TARGETS_ENV or DEFAULT_TARGETS[mode]).split()


def tool(name):
    return os.path.join(BIN, name)


def make_input(rng):
    """Activity and weather, every 10 s of event time; activity up to 60 s out of order,
    weather up to 20 s, and one weather record in ten up to 10 min: late past --grace."""
    act, wx = [], []
    for i in range(N):
        back = rng.randrange(60) if rng.random() < 0.2 else rng.randrange(6)
        act.append({"id": i, "t": 10**9 + i * 10 - back, "station": "s%d" % rng.randrange(STATIONS)})
        late = rng.randrange(20) if rng.random() < 0.9 else rng.randrange(600)
        wx.append({"id": i, "t": 10**9 + i * 10 - late, "station": "s%d" % rng.randrange(STATIONS)})
    return act, wx


def ndjson(recs):
    return b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in recs)


def consume(brokers, topic):
    out = subprocess.run([tool("ss-consume"), "-b", brokers, "-e", topic],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    if out.returncode != 0:
        raise Failed(f"ss-consume -e {topic}: exit {out.returncode}: {out.stderr.decode()[-300:]}")
    return [json.loads(ln) for ln in out.stdout.splitlines()]


def produce(brokers, topic, data, key):
    out = subprocess.run([tool("ss-produce"), "-b", brokers, "--key", key, topic],
                         input=data, stderr=subprocess.PIPE, timeout=120)
    if out.returncode != 0:
        raise Failed(f"ss-produce {topic}: exit {out.returncode}: {out.stderr.decode()[-300:]}")


class Topics:
    """What the input topics hold, as ss-consume delivers it, and what follows from it."""

    def __init__(self, brokers, act, wx, mode):
        self.act, self.wx, self.mode = act, wx, mode
        self.left = consume(brokers, act)
        self.right = consume(brokers, wx)
        self.end = {}  # (topic, partition) -> last offset
        for e in self.left + self.right:
            k = (e["topic"], e["partition"])
            self.end[k] = max(self.end.get(k, -1), e["offset"])
        self.ontime = self.not_late()
        self.ontime_by_id = {e["value"]["id"]: e["value"] for e in self.ontime}

    def not_late(self):
        """The weather records the join applies: late is older than the newest of its own
        partition minus --grace (per-partition watermarks), partition order being Kafka's;
        revise applies late ones too (and revises what they change)."""
        newest, keep = {}, []
        for e in sorted(self.right, key=lambda e: (e["partition"], e["offset"])):
            t, p = e["value"]["t"], e["partition"]
            if t >= newest.get(p, t) - GRACE or self.mode == "revise":
                keep.append(e)
            newest[p] = max(newest.get(p, t), t)
        return keep

    def history(self, offs):
        """The right history after applying each weather partition up to its applied offset,
        once and in order: the records not late, the later of two with one station and time."""
        hist = {}
        for e in self.ontime:
            if e["offset"] <= offs.get((self.wx, e["partition"]), -1):
                hist[(e["value"]["station"], e["value"]["t"])] = (e["partition"], e["offset"])
        return sorted(hist.values())


def brute_force(top, work):
    """tests/asof-ref.py over each station's records (it is quadratic: per station it is
    cheap). Returns activity (partition, offset) -> the matching weather id or None."""
    by = collections.defaultdict(lambda: ([], []))
    for e in top.left:
        v = e["value"]
        by[v["station"]][0].append({"t": v["t"], "k": 0, "p": e["partition"], "o": e["offset"]})
    for e in top.ontime:  # in partition order: of two records with one time, the later wins
        v = e["value"]
        by[v["station"]][1].append({"t": v["t"], "k": 0, "id": v["id"]})
    want = {}
    lp, rp = os.path.join(work, "ref-left"), os.path.join(work, "ref-right")
    for station, (lefts, rights) in by.items():
        with open(lp, "wb") as f:
            f.write(ndjson(lefts))
        with open(rp, "wb") as f:
            f.write(ndjson(rights))
        out = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "asof-ref.py"), lp, rp,
                              "backward", "0", str(TOLERANCE), "0"], stdout=subprocess.PIPE, check=True)
        for ln in out.stdout.splitlines():
            r = json.loads(ln)
            want[(r["left"]["p"], r["left"]["o"])] = r["right"]["id"] if r["right"] else None
    return want


class Pipeline:
    """One run of the four processes, wired with pipes as bash would wire them."""

    NAMES = ("left", "right", "asof", "produce")
    KILL_ORDER = ("asof", "produce", "left", "right")  # all: the join first, so it sees no EOF

    def __init__(self, brokers, top, mode, db, out_topic, work, starts=None):
        acks, end = db + ".acks", db + ".wx-end"
        def src(topic):
            where = ["--offsets-from", db] if starts is None else \
                ["-o", ",".join(f"{p}:{starts[(topic, p)]}" for p in range(PARTS))]
            if topic == top.wx:
                where += ["--end-file", end]
            return [tool("ss-consume"), "-b", brokers, "-e", *where, topic]
        self.errs = {n: open(os.path.join(work, f"{n}.err"), "w+b") for n in self.NAMES}
        self.procs = {}
        self.procs["left"] = subprocess.Popen(src(top.act), stdout=subprocess.PIPE, stderr=self.errs["left"])
        self.procs["right"] = subprocess.Popen(src(top.wx), stdout=subprocess.PIPE, stderr=self.errs["right"])
        lfd, rfd = self.procs["left"].stdout.fileno(), self.procs["right"].stdout.fileno()
        self.procs["asof"] = subprocess.Popen(
            [tool("ss-asof"), "--state", db, "--acks", acks, "--right-end-file", end, "--emit", mode, "--on", ".value.t", "--by", ".value.station",
             "--grace", f"{GRACE}s", "--tolerance", f"{TOLERANCE}s", "--right-partitions", str(PARTS), "--retain", "1000d",
             f"/dev/fd/{lfd}", f"/dev/fd/{rfd}"],
            pass_fds=(lfd, rfd), stdout=subprocess.PIPE, stderr=self.errs["asof"])
        self.procs["produce"] = subprocess.Popen(
            [tool("ss-produce"), "-b", brokers, "--acks", acks, "--key", "[.left.partition, .left.offset]",
             out_topic],
            stdin=self.procs["asof"].stdout, stderr=self.errs["produce"])
        for n in ("left", "right", "asof"):  # the pipes belong to the pipeline alone
            self.procs[n].stdout.close()

    def kill(self, target):
        for n in self.KILL_ORDER if target == "all" else (target,):
            try:
                self.procs[n].send_signal(signal.SIGKILL)
            except ProcessLookupError:
                pass

    def after_commit(self, db, records):
        """Wait until ss-asof commits a batch that takes the applied records at least that
        far: True at once after that commit, False if the run ended first."""
        con, wal, mtime, base = None, db + "-wal", None, None
        try:
            while self.procs["asof"].poll() is None:
                try:
                    m = os.stat(wal).st_mtime_ns
                except OSError:
                    continue
                if m == mtime:
                    continue
                mtime = m
                con = con or sqlite3.connect(db, timeout=1)
                try:
                    n = con.execute("SELECT sum(offset) FROM ss_offsets").fetchone()[0] or 0
                except sqlite3.OperationalError:
                    continue
                base = n if base is None else base
                if n - base >= records:
                    return True
            return False
        finally:
            if con:
                con.close()

    def wait(self, timeout):
        """Wait for every process; True if they all ended in time."""
        end = time.monotonic() + timeout
        for p in self.procs.values():
            try:
                p.wait(timeout=max(0.01, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                return False
        return True

    def statuses(self):
        return {n: p.returncode for n, p in self.procs.items()}

    def stderr(self, n):
        self.errs[n].seek(0)
        return self.errs[n].read().decode(errors="replace").strip()

    def close(self):
        for p in self.procs.values():
            if p.poll() is None:
                p.kill()
                p.wait()
        for f in self.errs.values():
            f.close()


def stored(db):
    con = open_checked(db)
    try:
        offs = {(t, p): o for t, p, o in con.execute("SELECT topic, partition, offset FROM ss_offsets")}
        right = sorted((e["partition"], e["offset"]) for e in
                       (json.loads(rec) for rec, in con.execute("SELECT rec FROM asof_right")))
        held = con.execute("SELECT count(*) FROM asof_held").fetchone()[0]
    except sqlite3.OperationalError:
        offs, right, held = {}, [], 0  # killed before the schema was committed
    con.close()
    return offs, right, held


# Exit statuses a survivor may show after a kill: EOF ends a run normally; a dead reader
# ends a writer with EPIPE (141, or SIGPIPE); a writer killed in the middle of a line
# leaves its reader a truncated last line: a data error (exit 1, everything before it
# committed or delivered); the weather consumer's pipe ending without its end file
# ends ss-asof with 75 (held records kept).
SURVIVOR_OK = {0, 141, -signal.SIGPIPE}
READS = {"asof": ("left", "right"), "produce": ("asof",)}


def check_run(pl, killed, fig):
    """Every process ended well: the victims by SIGKILL, the others by themselves."""
    victims = {"all": pl.NAMES, "commit": ("produce",)}.get(killed, (killed,))
    for n, st in pl.statuses().items():
        if n in victims and st == -signal.SIGKILL:
            continue
        err = pl.stderr(n)
        if st == 0 or (killed and st in SURVIVOR_OK):
            continue
        if n == "right" and st == 141 and pl.statuses()["asof"] == 0:
            continue  # every activity record answered: the join needs no more weather
        if n == "asof" and st == 75 and "right" in victims and "without" in err:
            continue  # its weather consumer did not finish: run again
        if n == "asof" and st == 75 and set(victims) & {"left", "right"} and "its writer" in err:
            continue  # a consumer was killed, as its feed says: run again
        if st == 1 and READS.get(n, ()) and set(READS[n]) & set(victims) and ":" in err:
            continue  # the last line its killed writer wrote was cut short: a data error
        raise Failed(f"after {'a kill of ' + killed if killed else 'an uninterrupted run'}: "
                     f"ss-{n if n in ('asof', 'produce') else 'consume (' + n + ')'} exited {st}: {err[-300:]}")
    fig.checks += 1


def run_once(brokers, top, mode, db, out_topic, work, rng=None, fig=None, t_ref=None, starts=None):
    """One run; with rng, kill a random process at a random moment. Returns what was killed."""
    pl = Pipeline(brokers, top, mode, db, out_topic, work, starts)
    killed = None
    try:
        delay = kill_delay(rng, fig, t_ref) if rng else None
        if delay is not None:
            target = rng.choice(targets(mode))
            if target == "commit" and pl.after_commit(db, rng.randrange(1000, 20000)):
                pl.kill("produce")
                killed = target
            elif target != "commit" and not pl.wait(delay):
                pl.kill(target)
                killed = target
        if not pl.wait(RUN_TIMEOUT):
            raise Failed(f"mode {mode}: the pipeline hung (> {RUN_TIMEOUT} s) "
                         f"after {'a kill of ' + killed if killed else 'no kill'}: {pl.statuses()}")
        check_run(pl, killed, fig or Figures("ref"))
    finally:
        pl.close()
    return killed


# An output record as ss-consume prints it: the key ss-produce gave it (the activity's
# partition and offset), the matching weather's id, the revision. Revise writes millions
# of revisions: a match on the raw line is what keeps checking them fast.
OUT_LINE = re.compile(rb'^\{"topic":"[^"]*","partition":\d+,"offset":\d+,"timestamp":\d+,'
                      rb'"key":\[(\d+),(\d+)\],"value":\{"left":\{.*\},"right":'
                      rb'(?:null|\{"topic":"weather",.*?"value":\{"id":(\d+),.*?)'
                      rb'(?:,"revision":(\d+))?(?:,"final":false|,"expired":true)?\},"headers":\{\}\}$')


class Output:
    """An output topic, read once: per activity (partition, offset), the weather id of the
    result written last (what compaction on the key keeps: every revision of a record
    goes to one partition) and of the highest revision; eager's results parsed whole."""

    def __init__(self, brokers, topic, mode):
        self.last, self.high, self.n, self.results = {}, {}, 0, []
        proc = subprocess.Popen([tool("ss-consume"), "-b", brokers, "-e", topic],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for ln in proc.stdout:  # one partition: in the order written
            m = OUT_LINE.match(ln.rstrip(b"\n"))
            if not m:
                proc.kill()
                raise Failed(f"{topic}: not an output record with its key: {ln[:200]!r}")
            ident = (int(m[1]), int(m[2]))
            right = int(m[3]) if m[3] is not None else None
            rev = int(m[4]) if m[4] is not None else 0
            self.n += 1
            self.last[ident] = right
            if ident not in self.high or rev >= self.high[ident][0]:
                self.high[ident] = (rev, right)
            if mode == "eager":
                self.results.append(json.loads(ln)["value"])
        err = proc.stderr.read().decode()
        if proc.wait() != 0:
            raise Failed(f"ss-consume -e {topic}: exit {proc.returncode}: {err[-300:]}")


def check_output(top, mode, out, ref, want, fig, what):
    """Every activity record reached the output; the latest revisions are the reference's
    (defer, revise) or each result is an answer eager could have known. Returns the
    number of results emitted more than once (at least once: a replay after a kill)."""
    got = out.last
    missing = [(e["partition"], e["offset"]) for e in top.left if (e["partition"], e["offset"]) not in got]
    if missing:
        raise Failed(f"{what}: {len(missing)} of {len(top.left)} activity records never reached the "
                     f"output topic, e.g. partition/offset {missing[:3]}")
    if mode != "eager":
        fig.highest_differs = getattr(fig, "highest_differs", 0) + \
            sum(1 for k in ref if out.high[k][1] != ref[k])
        differ = [k for k in ref if got[k] != ref[k]]
        if differ:
            k = differ[0]
            raise Failed(f"{what}: {len(differ)} activity records end with another match than the "
                         f"uninterrupted run's, e.g. partition/offset {k}: weather {got[k]} vs {ref[k]} "
                         f"(brute force: {want[k]})")
    else:
        for v in out.results:
            check_eager(top, v, want, what)
    fig.checks += 1
    return out.n - len(got)


def check_eager(top, v, want, what):
    """An eager result matches nothing, or a weather record of its station that is not
    late, at or before its time, within the tolerance, and no newer than the final answer."""
    k = (v["left"]["partition"], v["left"]["offset"])
    r = v["right"] and v["right"]["value"]
    final = want[k] is not None and top.ontime_by_id[want[k]]
    if r is None or (r["id"] in top.ontime_by_id and r["station"] == v["left"]["value"]["station"]
                     and final and v["left"]["value"]["t"] - TOLERANCE <= r["t"] <= final["t"]):
        return
    raise Failed(f"{what}: eager result for activity {k} matched {r}, which is no answer the "
                 f"join could have known (final: {final})")


def check_state(db, top, seen, rewound, fig):
    """After a run: S.db opens, its offsets are within the partitions and went back only
    where the consumers were rewound, and its right history is the applied weather
    prefix applied once. Returns the applied offsets."""
    offs, right, held = stored(db)
    for k, o in offs.items():
        if o > top.end[k]:
            raise Failed(f"{k}: applied offset {o} past the partition's last, {top.end[k]}")
        if o < seen.get(k, -1) and not rewound:
            raise Failed(f"{k}: applied offset went back from {seen[k]} to {o}")
    want = top.history(offs)
    if right != want:
        lost, twice = set(want) - set(right), set(right) - set(want)
        raise Failed(f"the join's right history is not the applied weather records applied once: "
                     f"{len(lost)} missing (e.g. {sorted(lost)[:2]}), {len(twice)} not expected "
                     f"(e.g. {sorted(twice)[:2]})")
    fig.checks += 1
    return offs, held


def complete(top, offs):
    """Every activity record applied (the join may stop reading weather once it has answered
    them all)."""
    return all(offs.get(k, -1) == o for k, o in top.end.items() if k[0] == top.act)


def reference(brokers, broker, top, mode, want, work, fig):
    """The uninterrupted run: its output, its duration; checked against tests/asof-ref.py."""
    db, out = os.path.join(work, f"{mode}-ref.db"), f"out-{mode}-ref"
    broker.topic(out, 1)
    t0 = time.monotonic()
    run_once(brokers, top, mode, db, out, work, fig=fig)
    t_ref = time.monotonic() - t0
    offs, held = check_state(db, top, {}, False, fig)
    if not complete(top, offs) or held:
        raise Failed(f"the uninterrupted run applied {offs}, not every record {top.end}, or holds {held}")
    output = Output(brokers, out, mode)
    ref = output.last
    if mode != "eager" and ref != want:
        k = next(k for k in want if ref.get(k) != want[k])
        raise Failed(f"the uninterrupted run differs from tests/asof-ref.py: activity {k}: "
                     f"weather {ref.get(k)} vs {want[k]}")
    check_output(top, mode, output, ref, want, fig, "uninterrupted run")
    return ref, t_ref


def rewind(rng, top, offs, fig):
    """Start offsets for consumers whose committed offsets lag the state's: a replay."""
    starts = {}
    for k in top.end:
        o = offs.get(k, -1) + 1
        starts[k] = max(0, o - rng.randrange(2000))
        fig.replayed += o - starts[k]
    return starts


def cycle(brokers, broker, top, mode, work, rng, fig, t_ref, by_target):
    """Kill and restart until a run completes; returns the cycle's output topic."""
    db, out = os.path.join(work, f"{mode}-c{fig.cycles}.db"), f"out-{mode}-c{fig.cycles}"
    broker.topic(out, 1)
    offs, starts, calm = {}, None, 0
    while True:
        # kill anywhere in a full run's time (kill_delay: often very early): a restart
        # with less to do is mostly start-up (consumers joining), so some kills come after
        # it completed, and the cycle ends there
        killed = run_once(brokers, top, mode, db, out, work, rng, fig, t_ref, starts)
        before = sum(offs.values())
        offs, held = check_state(db, top, offs, starts is not None, fig)
        if os.environ.get("PIPE_DEBUG"):
            print(f"  run: killed {killed}, applied {before} -> {sum(offs.values())}", file=sys.stderr)
        if killed is None and complete(top, offs):
            if held:
                raise Failed(f"{held} activity records still held after the last run")
            return out
        calm = 0 if killed else calm + 1
        if calm > 3:
            raise Failed(f"{calm} runs without a kill did not apply every activity record: {offs}")
        if killed:
            fig.kills += 1
            by_target[killed] += 1
        fig.restarts += 1
        starts = rewind(rng, top, offs, fig) if rng.random() < 0.25 else None


def suite(brokers, broker, top, mode, want, work, fig):
    rng = random.Random(f"{SEED}:pipeline:{mode}")
    ref, t_ref = reference(brokers, broker, top, mode, want, work, fig)
    extra = 0
    by_target = collections.Counter()
    try:
        while fig.kills < KILLS:
            fig.cycles += 1
            fig.cycle_limit = min(KILLS, fig.kills + (KILLS + 2) // 3)  # about 3 cycles a mode
            out = cycle(brokers, broker, top, mode, work, rng, fig, t_ref, by_target)
            extra += check_output(top, mode, Output(brokers, out, mode), ref, want, fig, f"cycle {fig.cycles}")
    finally:
        fig.notes.append("kills of " + ", ".join(f"{t} {by_target[t]}" for t in targets(mode)))
        fig.notes.append(f"{extra} results beyond one per activity record (revisions, repeats after kills)")
        if mode == "revise":
            fig.notes.append(f"{getattr(fig, 'highest_differs', 0)} results whose highest revision "
                             f"is not the last written")
        fig.notes.append(f"uninterrupted run {t_ref:.1f} s")


def main(argv):
    modes = argv[1:] or ["defer", "revise", "eager"]
    if shutil.which("java") is None or not all(os.access(tool(t), os.X_OK) for t in
                                              ("ss-consume", "ss-produce", "ss-asof")):
        print("crash pipeline: skipped (needs java and ss-consume, ss-asof, ss-produce)")
        return 0
    tmp = os.path.join(ROOT, "tests", ".tmp")
    work = tempfile.mkdtemp(prefix="ss-pipe-", dir=tmp if os.path.isdir(tmp) else None)
    broker = kafka.Broker(os.path.join(work, "b"))
    ok = True
    try:
        broker.up()
        b = broker.brokers
        act, wx = make_input(random.Random(f"{SEED}:pipeline"))
        for name, recs in (("activity", act), ("weather", wx)):
            broker.topic(name, PARTS)
            produce(b, name, ndjson(recs), ".station")
        for mode in modes:
            top = Topics(b, "activity", "weather", mode)
            want = brute_force(top, work)
            fig = Figures(f"pipe-{mode}")
            try:
                suite(b, broker, top, mode, want, work, fig)
                print(fig.line(True), flush=True)
            except (Failed, kafka.Failed, subprocess.SubprocessError) as e:
                ok = False
                print(fig.line(False) + f": {e}", flush=True)
    except (Failed, kafka.Failed) as e:
        print(f"crash pipeline FAILED: {e}", flush=True)
        ok = False
    finally:
        try:
            broker.down()
        except subprocess.CalledProcessError:
            pass
        shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
