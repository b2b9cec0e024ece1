#!/usr/bin/env python3
"""tests/feed-writer.py FIFO: a scripted writer that tells its reader about the pipe as
ss-consume does (the file of lib/stream/feed.c, in $SS_FEED_DIR), for tests that need a state
ss-consume reaches only with a broker's help (a partition a rebalance took).

Commands on stdin, one a line:
  feed STATE PART...  write the file: STATE running|finished|failed, each PART
                      TOPIC:PARTITION:LAST:behind|caught-up|ended|revoked
  rec JSON            write the record, then wait until the reader has taken it
  sleep SECONDS
At the end of its input it closes the pipe."""
import fcntl
import os
import struct
import sys
import termios
import time


def unread(fd):
    return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]


def feed(path, fd, state, parts):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("ss-feed 1\nwriter feed-writer %d %d\nstate %s %d\n" % (
            os.getpid(), fd, state, 0 if state != "failed" else 1))
        for p in parts:
            topic, partition, last, pstate = p.split(":")
            f.write("part %s %s %s %s\n" % (topic, partition, last, pstate))
    os.rename(tmp, path)


def main():
    fd = os.open(sys.argv[1], os.O_RDWR)  # does not wait for the reader
    st = os.fstat(fd)
    path = "%s/%x-%x" % (os.environ["SS_FEED_DIR"], st.st_dev, st.st_ino)
    os.makedirs(os.environ["SS_FEED_DIR"], exist_ok=True)
    for line in sys.stdin:
        cmd, _, arg = line.rstrip("\n").partition(" ")
        if cmd == "feed":
            state, *parts = arg.split()
            feed(path, fd, state, parts)
        elif cmd == "rec":
            os.write(fd, arg.encode() + b"\n")
            deadline = time.monotonic() + 30
            while unread(fd) and time.monotonic() < deadline:
                time.sleep(0.005)
            time.sleep(0.05)  # read is not handled yet: give the reader its turn
        elif cmd == "sleep":
            time.sleep(float(arg))
    os.close(fd)


main()
