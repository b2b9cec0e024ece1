#!/usr/bin/env python3
"""Broker faults on a real Kafka broker (scripts/kafka-up): stop it (SIGKILL of the JVM,
or a clean kafka-down) and restart it on the same data and port while ss-produce sends and
while ss-consume reads, alone and in a group. Checks: every record ss-produce acknowledged
(exit 0) is in the topic exactly once; consumers resume and deliver every record, none
lost; a tool exits 75 only when the broker stays away past its --timeout.

usage: broker.py  (needs java; skips itself without it). SEED as in crash.py.
"""
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("SS_BIN", os.path.join(ROOT, "bin"))
SCRIPTS = os.path.join(ROOT, "scripts")
SEED = int(os.environ.get("SEED", "1"))
N = int(os.environ.get("BROKER_RECORDS", "30000"))


class Failed(Exception):
    pass


def tool(name):
    return os.path.join(BIN, name)


class Broker:
    def __init__(self, d):
        self.dir = d
        self.brokers = None

    def up(self):
        env = dict(os.environ, SS_KAFKA_WATCH_PID=str(os.getpid()))
        out = subprocess.run([os.path.join(SCRIPTS, "kafka-up"), self.dir], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if out.returncode != 0 or not out.stdout.startswith("BROKERS="):
            raise Failed(f"kafka-up: {out.returncode}: {out.stderr.strip()[-300:]}")
        self.brokers = out.stdout.strip().split("=", 1)[1]

    def kill(self):
        """A crash: SIGKILL to the JVM's process group."""
        with open(os.path.join(self.dir, "kafka.pid")) as f:
            pid = int(f.read())
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        for _ in range(100):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.05)

    def down(self):
        subprocess.run([os.path.join(SCRIPTS, "kafka-down"), self.dir], check=True)

    def topic(self, name, parts):
        subprocess.run([os.path.join(SCRIPTS, "kafka-topic"), self.brokers, name, str(parts)],
                       check=True, stdout=subprocess.DEVNULL)


def records(n, tag):
    return b"".join(json.dumps({"seq": i, "tag": tag}).encode() + b"\n" for i in range(n))


def consume_all(brokers, topic, extra=(), timeout=60):
    out = subprocess.run([tool("ss-consume"), "-b", brokers, "-e", "--timeout", "30s", *extra, topic],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    if out.returncode != 0:
        raise Failed(f"ss-consume -e {topic}: exit {out.returncode}: {out.stderr.decode()[-300:]}")
    return [json.loads(ln) for ln in out.stdout.splitlines()]


def check_once(envs, n, what):
    seqs = [e["value"]["seq"] for e in envs]
    dup = len(seqs) - len(set(seqs))
    missing = n - len(set(seqs))
    if dup or missing:
        raise Failed(f"{what}: {missing} of {n} records missing, {dup} duplicated")


def paced_feed(proc, data, seconds):
    """Write data over about `seconds`, so the fault lands in the middle of the stream."""
    try:
        lines = data.splitlines(keepends=True)
        step = max(1, len(lines) // 100)
        for i in range(0, len(lines), step):
            proc.stdin.write(b"".join(lines[i:i + step]))
            proc.stdin.flush()
            time.sleep(seconds / 100)
        proc.stdin.close()
    except (BrokenPipeError, OSError):
        pass


def fault(broker, rng, how, down_for):
    if how == "kill":
        broker.kill()
    else:
        broker.down()
    time.sleep(down_for)
    broker.up()


def produce_during_fault(broker, rng, how, figures):
    topic = f"bf-produce-{how}"
    broker.topic(topic, 3)
    proc = subprocess.Popen([tool("ss-produce"), "-b", broker.brokers, "--timeout", "120s",
                             "--key", ".seq", topic], stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    feeder = threading.Thread(target=paced_feed, args=(proc, records(N, how), 4.0))
    feeder.start()
    time.sleep(rng.uniform(0.5, 2.0))
    t0 = time.monotonic()
    fault(broker, rng, how, rng.uniform(2, 5))
    downtime = time.monotonic() - t0
    feeder.join()
    err = proc.stderr.read().decode()
    st = proc.wait(timeout=180)
    if st != 0:
        raise Failed(f"ss-produce through a broker {how} ({downtime:.1f} s down) exited {st}: {err[-300:]}")
    check_once(consume_all(broker.brokers, topic), N, f"produce through broker {how}")
    figures.append(f"produce, broker {how} {downtime:.1f} s: {N} acknowledged, {N} in the topic once")


def slow_reader(proc, out, stop_after):
    """Read the consumer's output slowly, so it is still consuming when the fault comes."""
    n = 0
    for ln in proc.stdout:
        out.append(ln)
        n += 1
        if n % 500 == 0:
            time.sleep(0.05)
        if n >= stop_after:
            break


def consume_during_fault(broker, rng, how, group, figures):
    topic = f"bf-consume-{how}-{'g' if group else 'ng'}"
    broker.topic(topic, 3)
    st = subprocess.run([tool("ss-produce"), "-b", broker.brokers, "--key", ".seq", topic],
                        input=records(N, topic), stderr=subprocess.PIPE)
    if st.returncode != 0:
        raise Failed(f"filling {topic}: {st.stderr.decode()[-300:]}")
    cmd = [tool("ss-consume"), "-b", broker.brokers, "--timeout", "120s"]
    cmd += ["-G", f"g-{topic}", "-o", "beginning"] if group else []
    cmd += ["-e", topic] if not group else [topic]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = []
    reader = threading.Thread(target=slow_reader, args=(proc, out, N))
    reader.start()
    while len(out) < N // 5 and proc.poll() is None:
        time.sleep(0.05)
    t0 = time.monotonic()
    fault(broker, rng, how, rng.uniform(2, 5))
    downtime = time.monotonic() - t0
    reader.join(timeout=180)
    if group:  # a group consumer does not end by itself: all records read, stop it
        proc.send_signal(signal.SIGTERM)
    try:
        st = proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise Failed(f"ss-consume ({'group' if group else 'no group'}) hung after the broker {how}")
    err = proc.stderr.read().decode()
    if not group and st != 0:
        raise Failed(f"ss-consume -e through a broker {how} exited {st}: {err[-300:]}")
    envs = [json.loads(ln) for ln in out]
    seqs = [e["value"]["seq"] for e in envs]
    missing = N - len(set(seqs))
    dup = len(seqs) - len(set(seqs))
    if missing:
        raise Failed(f"consume ({'group' if group else 'no group'}) through broker {how}: {missing} records lost")
    if dup and not group:
        raise Failed(f"consume (no group) through broker {how}: {dup} records twice")
    figures.append(f"consume {'group' if group else 'no group'}, broker {how} {downtime:.1f} s: "
                   f"{N} records, {missing} lost, {dup} twice")


def timeout_exits_75(broker, figures):
    """The broker stays away past the tool's --timeout: exit 75, and not before."""
    topic = "bf-timeout"
    broker.topic(topic, 1)
    broker.kill()
    try:
        for name, cmd, inp in (
                ("ss-produce", [tool("ss-produce"), "-b", broker.brokers, "--timeout", "3s", topic], b'{"a":1}\n'),
                ("ss-consume", [tool("ss-consume"), "-b", broker.brokers, "--timeout", "3s", "-e", topic], None)):
            t0 = time.monotonic()
            p = subprocess.run(cmd, input=inp, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60)
            took = time.monotonic() - t0
            if p.returncode != 75 or took < 2.5:
                raise Failed(f"{name} with the broker down past --timeout 3s: exit {p.returncode} "
                             f"after {took:.1f} s, want 75 after 3 s: {p.stderr.decode()[-200:]}")
            figures.append(f"{name}, broker down past --timeout 3s: exit 75 after {took:.1f} s")
    finally:
        broker.up()


def main():
    if shutil.which("java") is None or not os.access(tool("ss-produce"), os.X_OK):
        print("broker faults: skipped (needs java and ss-produce/ss-consume)")
        return 0
    rng = random.Random(f"{SEED}:broker")
    work = tempfile.mkdtemp(prefix="ss-broker-", dir=os.path.join(ROOT, "tests", ".tmp")
                            if os.path.isdir(os.path.join(ROOT, "tests", ".tmp")) else None)
    broker = Broker(os.path.join(work, "b"))
    figures, ok = [], True
    try:
        broker.up()
        for name, f in (("produce/kill", lambda: produce_during_fault(broker, rng, "kill", figures)),
                        ("produce/stop", lambda: produce_during_fault(broker, rng, "stop", figures)),
                        ("consume/kill", lambda: consume_during_fault(broker, rng, "kill", False, figures)),
                        ("consume-group/kill", lambda: consume_during_fault(broker, rng, "kill", True, figures)),
                        ("consume/stop", lambda: consume_during_fault(broker, rng, "stop", False, figures)),
                        ("timeout", lambda: timeout_exits_75(broker, figures))):
            try:
                f()
            except (Failed, subprocess.TimeoutExpired, subprocess.CalledProcessError) as e:
                ok = False
                figures.append(f"{name}: FAILED: {e}")
    finally:
        broker.down()
        shutil.rmtree(work, ignore_errors=True)
    for line in figures:
        print("broker " + line, flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
