#!/usr/bin/env python3
"""Crash-safety harness: run a stateful ss pipeline on a large input, SIGKILL it at
random moments, restart it the way a consumer resuming from the stored offsets would
(rewinding a random amount, so records are replayed), and check the invariants after
every kill and at the end:

  - the state file opens and PRAGMA integrity_check says ok;
  - the applied records (ss_offsets) are exactly a prefix of the input: nothing lost;
  - the state equals applying that prefix once, in order: nothing applied twice or out
    of order (keys repeat, so a replayed older record would show);
  - the final state (and output) equals an uninterrupted run's.

usage: crash.py [--list | SUITE...]   (no SUITE: all of them; see SUITES)
Environment: SEED (default 1), KILLS per suite (default 50), RECORDS (default 200000).
Prints one figure line per suite; exits 1 if any invariant failed.
"""
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("SS_BIN", os.path.join(ROOT, "bin"))
SEED = int(os.environ.get("SEED", "1"))
KILLS = int(os.environ.get("KILLS", "50"))
RECORDS = int(os.environ.get("RECORDS", "200000"))
PARTITIONS = 4
KEYS = 5000
REWIND = 3000  # records a restart re-reads before the first unapplied one, at most


class Failed(Exception):
    pass


class Figures:
    def __init__(self, name):
        self.name = name
        self.kills = self.checks = self.restarts = self.cycles = 0
        self.replayed = 0
        self.cycle_limit = KILLS
        self.notes = []

    def line(self, ok):
        extra = "".join("; " + n for n in self.notes)
        what = "disk-full stops" if self.name == "diskfull" else "kills"
        return (f"crash {self.name:<10} {'ok' if ok else 'FAILED'}: seed {SEED}, {self.kills} {what}, "
                f"{self.restarts} restarts, {self.cycles} full runs compared, "
                f"{self.checks} invariant checks, {self.replayed} records replayed{extra}")


def make_input(rng, n, pad, keys):
    """Envelope records over PARTITIONS partitions, interleaved, keys repeating."""
    next_off = [rng.randrange(0, 1000) for _ in range(PARTITIONS)]
    lines, part, off, key = [], [], [], []
    for i in range(n):
        p = rng.randrange(PARTITIONS)
        o = next_off[p]
        next_off[p] += rng.choice((1, 1, 1, 2))  # gaps, as compacted topics have
        k = "k%d" % rng.randrange(keys)
        rec = {"topic": "torture", "partition": p, "offset": o, "timestamp": 1672567200000 + i,
               "key": k, "value": {"n": i, "pad": "x" * rng.randrange(0, pad)}, "headers": {}}
        lines.append(json.dumps(rec, separators=(",", ":")).encode() + b"\n")
        part.append(p)
        off.append(o)
        key.append(json.dumps(k))
    return lines, part, off, key


class Input:
    def __init__(self, rng, n, pad=80, keys=KEYS):
        self.lines, self.part, self.off, self.key = make_input(rng, n, pad, keys)
        self.n = n
        self.starts = [0]
        for ln in self.lines:
            self.starts.append(self.starts[-1] + len(ln))
        self.data = b"".join(self.lines)

    def slice(self, i):
        return self.data[self.starts[i]:]

    def cut(self, offsets, strict=True):
        """Index of the first record not applied under the stored offsets; checks that the
        applied records are exactly input[:cut] (unless not strict: offsets that record
        the last record passed on move back while a replay passes)."""
        last = {}
        i = 0
        while i < self.n and self.off[i] <= offsets.get(self.part[i], -1):
            last[self.part[i]] = self.off[i]
            i += 1
        for p, o in offsets.items():
            if strict and last.get(p, -1) != o:
                raise Failed(f"stored offset {o} of partition {p} is not the input prefix's "
                             f"({last.get(p, -1)}): a record was lost or applied out of order")
        return i


def feed(proc, data):
    try:
        view = memoryview(data)
        for i in range(0, len(view), 1 << 16):
            proc.stdin.write(view[i:i + (1 << 16)])
        proc.stdin.close()
    except (BrokenPipeError, ValueError, OSError):
        pass


def run(cmd, data, kill_after=None, stdout=subprocess.DEVNULL, env=None):
    """Run cmd on data; SIGKILL after kill_after seconds. Returns (status, stderr, killed)."""
    errf = tempfile.TemporaryFile()
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=stdout, stderr=errf, env=env)
    t = threading.Thread(target=feed, args=(proc, data), daemon=True)
    t.start()
    killed = False
    try:
        proc.wait(timeout=kill_after)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        killed = True
    t.join()
    errf.seek(0)
    err = errf.read().decode(errors="replace")
    return proc.returncode, err, killed


def kill_delay(rng, fig, remaining):
    """When to kill the next run: often early (opening the state, replaying), otherwise
    anywhere in the work that remains, start-up included. None: let it finish, once the
    suite has its kills (a cycle then ends with a full comparison)."""
    if fig.kills >= fig.cycle_limit:
        return None
    return rng.choice((rng.uniform(0, 0.05), rng.uniform(0, 0.1 + remaining * 1.1)))


def next_cycle(fig):
    """Start a cycle of kills and restarts (about 3 a suite), ended by a run that completes
    and a full comparison; False once the suite has its kills."""
    if fig.kills >= KILLS:
        return False
    fig.cycles += 1
    fig.cycle_limit = min(KILLS, fig.kills + (KILLS + 2) // 3)
    return True


def run_killed(rng, fig, cmd, data, remaining, outp=os.devnull):
    """Run cmd on data, its output to outp, and SIGKILL it at a random moment (see
    kill_delay). A run that ends by itself must succeed. Returns whether it was killed,
    and counts the kill and the restart that follows."""
    with open(outp, "wb") as out:
        st, err, killed = run(cmd, data, kill_after=kill_delay(rng, fig, remaining), stdout=out)
    if not killed and st != 0:
        raise Failed(f"run exited {st}: {err.strip()}")
    if killed:
        fig.kills += 1
        fig.restarts += 1
    return killed


def rewind(rng, fig, cut):
    """Where a restart resumes: up to REWIND records before the first unapplied one, as a
    consumer whose committed offsets lag the state's would."""
    pos = max(0, cut - rng.randrange(REWIND))
    fig.replayed += cut - pos
    return pos


def open_checked(db):
    """Open the state like a restarting tool would and check its integrity."""
    con = sqlite3.connect(db, timeout=10)
    res = con.execute("PRAGMA integrity_check").fetchall()
    if res != [("ok",)]:
        con.close()
        raise Failed(f"{db}: integrity_check: {res[:3]}")
    return con


def stored_offsets(con, topic="torture"):
    try:
        return dict(con.execute("SELECT partition, offset FROM ss_offsets WHERE topic = ?", (topic,)))
    except sqlite3.OperationalError:
        return {}  # killed before the schema was committed


def cache_state(con):
    try:
        return dict(con.execute("SELECT key, value FROM ss_kv"))
    except sqlite3.OperationalError:
        return {}


class Expected:
    """Last writer per key over input[:cut], advanced incrementally."""

    def __init__(self, inp):
        self.inp, self.pos, self.state = inp, 0, {}

    def at(self, cut):
        if cut < self.pos:
            raise Failed(f"committed records went missing: applied prefix shrank from {self.pos} to {cut}")
        for i in range(self.pos, cut):
            self.state[self.inp.key[i]] = self.inp.lines[i][:-1].decode()
        self.pos = cut
        return self.state


def check_cache(db, inp, exp, fig):
    con = open_checked(db)
    offs, got = stored_offsets(con), cache_state(con)
    con.close()
    cut = inp.cut(offs)
    want = exp.at(cut)
    if got != want:
        diff = [k for k in set(got) | set(want) if got.get(k) != want.get(k)]
        raise Failed(f"state after {cut} records differs from applying them once, in order: "
                     f"{len(diff)} keys, e.g. {diff[:2]}")
    fig.checks += 1
    return cut


def suite_cache(rng, inp, fig, tee):
    work = tempfile.mkdtemp(prefix="ss-crash-")
    try:
        # the uninterrupted run: reference state, output and duration
        ref_db = os.path.join(work, "ref.db")
        cmd = [os.path.join(BIN, "ss-cache"), ref_db, "put"] + (["--tee"] if tee else [])
        with open(os.path.join(work, "ref.out"), "wb") as out:
            t0 = time.monotonic()
            st, err, _ = run(cmd, inp.data, stdout=out)
            t_ref = time.monotonic() - t0
        if st != 0:
            raise Failed(f"reference run exited {st}: {err}")
        con = open_checked(ref_db)
        ref_state, ref_offs = cache_state(con), stored_offsets(con)
        con.close()
        if ref_state != Expected(inp).at(inp.n):
            raise Failed("the uninterrupted run's state is not the input's last writers")
        lost = dup = 0
        while next_cycle(fig):
            db = os.path.join(work, f"c{fig.cycles}.db")
            cmd[1] = db
            exp = Expected(inp)
            pos = 0
            outs = []
            while True:
                outs.append(os.path.join(work, f"c{fig.cycles}.{fig.restarts}.out"))
                # kill somewhere in the remaining work, sometimes very early (during open)
                killed = run_killed(rng, fig, cmd, inp.slice(pos), t_ref * (inp.n - pos) / inp.n, outs[-1])
                cut = check_cache(db, inp, exp, fig)
                if not killed:
                    break
                pos = rewind(rng, fig, cut)
            con = open_checked(db)
            if cache_state(con) != ref_state or stored_offsets(con) != ref_offs:
                raise Failed(f"cycle {fig.cycles}: final state differs from the uninterrupted run's")
            con.close()
            fig.checks += 1
            if tee:
                l, d = tee_loss(inp, outs)
                lost += l
                dup += d
        if tee:
            fig.notes.append(f"--tee output over all cycles: {lost} records lost, {dup} duplicated")
            if lost:
                raise Failed(f"--tee lost {lost} committed records across kills")
    finally:
        shutil.rmtree(work, ignore_errors=True)


class PartitionExpected:
    """Per partition: last writer per key over the partition's records up to an offset."""

    def __init__(self, inp):
        self.inp = inp
        self.idx = {p: [i for i in range(inp.n) if inp.part[i] == p] for p in range(PARTITIONS)}
        self.pos = {p: 0 for p in range(PARTITIONS)}
        self.state = {p: {} for p in range(PARTITIONS)}

    def at(self, p, offset):
        """State of partition p with every record up to offset applied; returns (state,
        index in the input of its first unapplied record)."""
        idx, inp = self.idx[p], self.inp
        while self.pos[p] < len(idx) and inp.off[idx[self.pos[p]]] <= offset:
            i = idx[self.pos[p]]
            self.state[p][inp.key[i]] = inp.lines[i][:-1].decode()
            self.pos[p] += 1
        if self.pos[p] > 0 and inp.off[idx[self.pos[p] - 1]] != offset:
            raise Failed(f"partition {p}: stored offset {offset} is no record's offset")
        return self.state[p], idx[self.pos[p]] if self.pos[p] < len(idx) else inp.n


def check_statedir(d, inp, exp, fig, seen):
    """Every file opens; each holds one partition's applied prefix, applied once in order.
    Returns the input index of the first record some partition has not applied."""
    first = inp.n
    files = {}
    for name in sorted(os.listdir(d)):
        if name.endswith(".db"):
            con = open_checked(os.path.join(d, name))
            files[name] = (stored_offsets(con), cache_state(con))
            con.close()
    for p in range(PARTITIONS):
        name = f"torture-{p}.db"
        offs, got = files.get(name, ({}, {}))
        if set(offs) - {p}:
            raise Failed(f"{name} holds offsets of partitions {sorted(offs)}")
        o = offs.get(p, -1)
        if o < seen.get(p, -1):
            raise Failed(f"partition {p}: committed offset went back from {seen[p]} to {o}")
        seen[p] = o
        want, nxt = exp.at(p, o)
        if got != want:
            raise Failed(f"{name}: state at offset {o} differs from applying its records once, in order")
        first = min(first, nxt)
    fig.checks += 1
    return first


def suite_statedir(rng, inp, fig):
    """ss-cache --state-dir: one file per topic-partition, committed one after another."""
    work = tempfile.mkdtemp(prefix="ss-crash-")
    try:
        ref = os.path.join(work, "ref")
        cmd = [os.path.join(BIN, "ss-cache"), "--state-dir", ref, "put"]
        t0 = time.monotonic()
        st, err, _ = run(cmd, inp.data)
        t_ref = time.monotonic() - t0
        if st != 0:
            raise Failed(f"reference run exited {st}: {err}")
        ref_dump = dump_dir(ref)
        while next_cycle(fig):
            d = os.path.join(work, f"c{fig.cycles}")
            cmd[2] = d
            exp, seen, pos = PartitionExpected(inp), {}, 0
            while True:
                killed = run_killed(rng, fig, cmd, inp.slice(pos), t_ref * (inp.n - pos) / inp.n)
                first = check_statedir(d, inp, exp, fig, seen) if os.path.isdir(d) else 0
                if not killed:
                    break
                pos = rewind(rng, fig, first)
            if dump_dir(d) != ref_dump:
                raise Failed(f"cycle {fig.cycles}: final state differs from the uninterrupted run's")
            fig.checks += 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


def dump_dir(d):
    out = {}
    for name in sorted(os.listdir(d)):
        if name.endswith(".db"):
            con = open_checked(os.path.join(d, name))
            out[name] = (stored_offsets(con), cache_state(con))
            con.close()
    return out


def can_mount():
    if os.geteuid() != 0:
        return False
    d = tempfile.mkdtemp(prefix="ss-mnt-")
    ok = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", d],
                        stderr=subprocess.DEVNULL).returncode == 0
    if ok:
        subprocess.run(["umount", d])
    os.rmdir(d)
    return ok


def last_offsets(inp):
    last = {}
    for p, o in zip(inp.part, inp.off):
        last[p] = o
    return last


def suite_diskfull(rng, inp, fig):
    """The state directory fills up (a small tmpfs, or RLIMIT_FSIZE without root or with
    TORTURE_FSIZE=1): a clear error and exit 1, the state opens and holds an applied
    prefix, and a restart with room completes to the state of applying every record once.
    Trials rotate: plain records, --tee, and 2 KB records whose batch outgrows SQLite's
    page cache, so the disk fills in the middle of a batch rather than at its commit."""
    work = tempfile.mkdtemp(prefix="ss-full-")
    mnt = os.path.join(work, "mnt")
    os.mkdir(mnt)
    mounted = can_mount() and os.environ.get("TORTURE_FSIZE") != "1"
    fig.notes.append("small tmpfs" if mounted else "RLIMIT_FSIZE")
    big = Input(random.Random(f"{SEED}:big"), max(RECORDS // 8, 2000), pad=4000, keys=1 << 30)
    try:
        trials = max(9, KILLS // 5)
        for trial in range(trials):
            kind = ("plain", "tee", "big")[trial % 3]
            data = big if kind == "big" else inp
            # somewhere short of the room the final state needs
            need = sum(len(v) for v in Expected(data).at(data.n).values())
            size = max(64 << 10, int(need * rng.uniform(0.1, 0.9)))
            if mounted:
                subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", mnt], check=True)
            db = os.path.join(mnt, "st.db")
            cmd = [os.path.join(BIN, "ss-cache"), db, "put"] + (["--tee"] if kind == "tee" else [])
            limited = cmd if mounted else ["prlimit", f"--fsize={size}"] + cmd
            try:
                st, err, _ = run(limited, data.data)
                msg = err.strip().splitlines()[0] if err.strip() else ""
                if st != 1 or not msg.startswith("ss-cache: ") or not any(
                        w in msg for w in ("full", "too large", "I/O error")):
                    raise Failed(f"{kind} state on a {size // 1024} KB filesystem: exit {st}, "
                                 f"want 1 and a clear message: {err.strip()[:300]}")
                if trial < 3:
                    fig.notes.append(f"{kind} {size // 1024} KB: {msg.split(': ', 2)[-1]}")
                exp = Expected(data)
                cut = check_cache(db, data, exp, fig)
                if mounted:  # room again, as after an operator frees space
                    subprocess.run(["mount", "-o", "remount,size=2g", mnt], check=True)
                pos = max(0, cut - rng.randrange(REWIND))
                fig.replayed += cut - pos
                fig.restarts += 1
                st, err, _ = run(cmd, data.slice(pos))
                if st != 0:
                    raise Failed(f"restart with room exited {st}: {err.strip()}")
                check_cache(db, data, exp, fig)
                con = open_checked(db)
                if cache_state(con) != Expected(data).at(data.n) or stored_offsets(con) != last_offsets(data):
                    raise Failed("after the restart with room, the state is not every record applied once")
                con.close()
                fig.cycles += 1
                fig.kills += 1  # faults injected: disk-full stops
            finally:
                if mounted:
                    subprocess.run(["umount", mnt])
                else:
                    for f in os.listdir(mnt):
                        os.unlink(os.path.join(mnt, f))
    finally:
        shutil.rmtree(work, ignore_errors=True)


class AsofInput:
    """Two enveloped streams: left (activity) in time order, right (weather) running up to
    20 s out of order, one record in ten up to 10 min: late beyond --grace 30s."""

    def __init__(self, rng, n):
        self.n = n
        self.left, self.right = [], []
        for i in range(n):
            self.left.append(json.dumps({"topic": "act", "partition": 0, "offset": i, "value": {
                "t": 10**9 + i * 10 + rng.randrange(6), "station": "s%d" % rng.randrange(50), "n": i}},
                separators=(",", ":")).encode() + b"\n")
            late = rng.randrange(20) if rng.random() < 0.9 else rng.randrange(600)
            self.right.append(json.dumps({"topic": "wx", "partition": 0, "offset": i, "value": {
                "t": 10**9 + i * 10 - late, "station": "s%d" % rng.randrange(50), "w": i}},
                separators=(",", ":")).encode() + b"\n")

    def write(self, d, lcut, rcut):
        """The inputs of a restart that resumes after the applied offsets."""
        lp, rp = os.path.join(d, "left"), os.path.join(d, "right")
        with open(lp, "wb") as f:
            f.write(b"".join(self.left[lcut:]))
        with open(rp, "wb") as f:
            f.write(b"".join(self.right[rcut:]))
        return lp, rp


def reduce_revisions(paths):
    """Keep the latest revision per left record (the way compaction or an upsert would)."""
    latest = {}
    for p in paths:
        with open(p, "rb") as f:
            for ln in f:
                if not ln.endswith(b"\n"):
                    continue  # cut short by the kill: a reader sees no complete record
                rec = json.loads(ln)
                left = rec["left"]
                ident = (left["topic"], left["partition"], left["offset"])
                rev = rec.get("revision", 0)
                if ident not in latest or rev >= latest[ident][0]:
                    latest[ident] = (rev, left, rec["right"])
    return {k: (v[1], v[2]) for k, v in latest.items()}


def suite_asof(rng, fig, mode, replay=False):
    inp = AsofInput(random.Random(f"{SEED}:asof"), max(RECORDS // 4, 2000))
    work = tempfile.mkdtemp(prefix="ss-crash-")
    try:
        def cmd(db, lp, rp):
            return [os.path.join(BIN, "ss-asof"), lp, rp, "--on", ".value.t", "--by", ".value.station",
                    "--grace", "30s", "--emit", mode, "--state", db] + \
                (["--retain", "10h"] if replay else [])  # history back past the deepest replay
        lp, rp = inp.write(work, 0, 0)
        ref_out = os.path.join(work, "ref.out")
        with open(ref_out, "wb") as out:
            t0 = time.monotonic()
            st, err, _ = run(cmd(os.path.join(work, "ref.db"), lp, rp), b"", stdout=out)
            t_ref = time.monotonic() - t0
        if st != 0:
            raise Failed(f"reference run exited {st}: {err}")
        ref = reduce_revisions([ref_out])
        if len(ref) != inp.n:
            raise Failed(f"the uninterrupted run emitted {len(ref)} of {inp.n} left records")
        while next_cycle(fig):
            db = os.path.join(work, f"c{fig.cycles}.db")
            outs, seen = [], {}
            lcut = rcut = 0
            while True:
                lp, rp = inp.write(work, lcut, rcut)
                outs.append(os.path.join(work, f"c{fig.cycles}.{len(outs)}.out"))
                killed = run_killed(rng, fig, cmd(db, lp, rp), b"",
                                    t_ref * (2 * inp.n - lcut - rcut) / (2 * inp.n), outs[-1])
                con = open_checked(db)
                offs = {t: o for t, o in con.execute("SELECT topic, offset FROM ss_offsets")} \
                    if con.execute("SELECT 1 FROM sqlite_master WHERE name = 'ss_offsets'").fetchone() else {}
                con.close()
                for t in ("act", "wx"):
                    if offs.get(t, -1) < seen.get(t, -1):
                        raise Failed(f"applied offset of {t} went back from {seen[t]} to {offs.get(t, -1)}")
                seen = offs
                lcut, rcut = offs.get("act", -1) + 1, offs.get("wx", -1) + 1
                fig.checks += 1
                if not killed:
                    break
                if replay:  # a consumer whose committed offsets lag the state's
                    back = rng.randrange(REWIND)
                    fig.replayed += min(back, lcut) + min(back, rcut)
                    lcut, rcut = max(0, lcut - back), max(0, rcut - back)
            got = reduce_revisions(outs)
            missing = [k for k in ref if k not in got]
            if missing:
                raise Failed(f"cycle {fig.cycles}: {len(missing)} left records never emitted, e.g. {missing[:2]}")
            differ = [k for k in ref if got[k] != ref[k]]
            if differ:
                k = differ[0]
                raise Failed(f"cycle {fig.cycles}: {len(differ)} left records end with another match than "
                             f"the uninterrupted run's, e.g. offset {k[2]}: {got[k][1]} vs {ref[k][1]}")
            fig.checks += 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


def suite_checkpoint(rng, inp, fig, verb):
    """ss-checkpoint heartbeat or pulse as a pass-through filter (no downtime: the pulse's
    threshold is far away): the marker is at least what the applied records make it (the
    heartbeat's: their largest event time; the pulse's: the lowest over the partitions of
    each partition's largest), the offsets a prefix, every record passed on at least once."""
    work = tempfile.mkdtemp(prefix="ss-crash-")
    recs = [json.loads(ln) for ln in inp.lines]
    max_ns, least_ns = [0] * (inp.n + 1), [0] * (inp.n + 1)
    part_max = {}
    for i, r in enumerate(recs):
        t = r["timestamp"] * 1000000
        max_ns[i + 1] = max(max_ns[i], t)
        part_max[r["partition"]] = max(part_max.get(r["partition"], t), t)
        least_ns[i + 1] = min(part_max.values())
    lo_ns = least_ns if verb == "pulse" else max_ns
    if verb == "heartbeat":
        args = ["heartbeat", "act", "wx"]
        marker_sql = "SELECT marker FROM ss_checkpoint_dependency WHERE checkpoint = 'act' AND name = 'wx'"
    else:
        args = ["pulse", "act", "--dependency", "wx=100000d"]
        marker_sql = "SELECT marker FROM ss_checkpoint WHERE name = 'act'"

    def state(db):
        con = open_checked(db)
        try:
            offs = stored_offsets(con)
            row = con.execute(marker_sql).fetchone()
            cp = dict(((p, o) for p, o in con.execute(
                "SELECT partition, offset FROM ss_checkpoint_offset WHERE checkpoint = 'act'"))) \
                if verb == "pulse" else None
        except sqlite3.OperationalError:
            offs, row, cp = {}, None, {}
        con.close()
        return offs, (row[0] if row else None), cp

    try:
        while next_cycle(fig):
            db = os.path.join(work, f"c{fig.cycles}.db")
            cmd = [os.path.join(BIN, "ss-checkpoint"), db] + args + ["--ts", ".timestamp", "--ts-unit", "ms"]
            ref_db = os.path.join(work, "ref.db")
            if fig.cycles == 1:
                t0 = time.monotonic()
                st, err, _ = run(cmd[:1] + [ref_db] + cmd[2:], inp.data)
                t_ref = time.monotonic() - t0
                if st != 0:
                    raise Failed(f"reference run exited {st}: {err}")
            pos, outs = 0, []
            while True:
                outs.append(os.path.join(work, f"c{fig.cycles}.{len(outs)}.out"))
                killed = run_killed(rng, fig, cmd, inp.slice(pos), t_ref * (inp.n - pos) / inp.n, outs[-1])
                offs, marker, cp = state(db)
                # ss_offsets is the last record passed on, back during a replay: the
                # records before the cut were passed on for sure
                cut = inp.cut(offs, strict=False)
                if cut and (marker is None or not lo_ns[cut] <= marker <= max_ns[inp.n]):
                    raise Failed(f"{verb}: marker {marker} after {cut} records passed on, "
                                 f"want at least {lo_ns[cut]}: a record was lost")
                if verb == "pulse" and cut and cp != offs:
                    raise Failed(f"pulse: checkpoint offsets {cp} are not the applied offsets {offs}")
                fig.checks += 1
                if not killed:
                    break
                pos = rewind(rng, fig, cut)
            lost, dup = tee_loss(inp, outs)
            if lost:
                raise Failed(f"{lost} records never passed on")
            if state(db)[:2] != state(ref_db)[:2]:
                raise Failed("final state differs from the uninterrupted run's")
            fig.checks += 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


def tee_loss(inp, outs):
    """Records of the input missing from, or repeated in, the union of the --tee outputs."""
    seen = {}
    for p in outs:
        with open(p, "rb") as f:
            for ln in f:
                seen[ln] = seen.get(ln, 0) + 1
    lost = sum(1 for ln in inp.lines if ln not in seen)
    dup = sum(c - 1 for c in seen.values())
    return lost, dup


SUITES = {  # name: (the tool it needs, the suite)
    "cache": ("ss-cache", lambda rng, inp, fig: suite_cache(rng, inp, fig, tee=False)),
    "cache-tee": ("ss-cache", lambda rng, inp, fig: suite_cache(rng, inp, fig, tee=True)),
    "statedir": ("ss-cache", suite_statedir),
    "diskfull": ("ss-cache", suite_diskfull),
    "heartbeat": ("ss-checkpoint", lambda rng, inp, fig: suite_checkpoint(rng, inp, fig, "heartbeat")),
    "pulse": ("ss-checkpoint", lambda rng, inp, fig: suite_checkpoint(rng, inp, fig, "pulse")),
    "asof-eager": ("ss-asof", lambda rng, inp, fig: suite_asof(rng, fig, "eager")),
    "asof-defer": ("ss-asof", lambda rng, inp, fig: suite_asof(rng, fig, "defer")),
    "asof-revise": ("ss-asof", lambda rng, inp, fig: suite_asof(rng, fig, "revise")),
    "asof-eager-replay": ("ss-asof", lambda rng, inp, fig: suite_asof(rng, fig, "eager", replay=True)),
    "asof-defer-replay": ("ss-asof", lambda rng, inp, fig: suite_asof(rng, fig, "defer", replay=True)),
    "asof-revise-replay": ("ss-asof", lambda rng, inp, fig: suite_asof(rng, fig, "revise", replay=True)),
}


def main(argv):
    if argv[1:] == ["--list"]:
        print("\n".join(SUITES))
        return 0
    names = argv[1:] or list(SUITES)
    inp = Input(random.Random(SEED), RECORDS)
    ok = True
    for name in names:
        tool, suite = SUITES[name]
        if not os.access(os.path.join(BIN, tool), os.X_OK):
            print(f"crash {name:<10} skipped: no {tool} built yet", flush=True)
            continue
        rng = random.Random(f"{SEED}:{name}")
        fig = Figures(name)
        try:
            suite(rng, inp, fig)
            print(fig.line(True), flush=True)
        except Failed as e:
            ok = False
            print(fig.line(False) + f": {e}", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
