#!/usr/bin/env python3
"""tests/feed.py LEFT RIGHT: feed two FIFOs in one exact interleaving, whatever the load.

Reads lines "L <record>" and "R <record>" from stdin and writes each record to the LEFT
or RIGHT FIFO, but only once the reader has taken every byte written before (FIONREAD
on the pipe is 0) and had a moment to act on it. So a test states the order in which a
tool sees records arriving on two pipes, instead of hoping that sleeps give it."""
import fcntl
import os
import struct
import sys
import termios
import time


def unread(fd):
    return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]


def drained(fds, limit=30.0):
    deadline = time.monotonic() + limit
    while any(unread(fd) for fd in fds):
        if time.monotonic() > deadline:
            sys.exit("feed.py: the reader took nothing for %d s" % limit)
        time.sleep(0.005)
    time.sleep(0.05)  # read is not yet handled: give the reader its turn


def main():
    # O_RDWR: opening does not wait for the reader, and FIONREAD sees the pipe
    fds = {side: os.open(path, os.O_RDWR) for side, path in zip("LR", sys.argv[1:3])}
    for line in sys.stdin:
        side, record = line.rstrip("\n").split(" ", 1)
        drained(fds.values())
        os.write(fds[side], record.encode() + b"\n")
    drained(fds.values())
    for fd in fds.values():
        os.close(fd)


main()
