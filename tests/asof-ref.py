#!/usr/bin/env python3
# Brute-force as-of join, the reference for tests/asof-property.bats.
# usage: asof-ref.py LEFT RIGHT DIRECTION STRICT(0|1) TOLERANCE(-1 = none) BY(0|1)
# Records are {"t":N,"k":K,...}; output lines are spliced from the raw input lines.
import json, sys
left, right, direction, strict, tol, by = sys.argv[1:7]
strict, tol, by = strict == "1", int(tol), by == "1"
hist = {}  # (key, t) -> raw; a later record with the same key and time replaces
for raw in open(right, encoding="utf-8").read().splitlines():
    r = json.loads(raw)
    k = json.dumps(r["k"]) if by else ""
    hist[(k, r["t"])] = raw
for raw in open(left, encoding="utf-8").read().splitlines():
    l = json.loads(raw)
    k = json.dumps(l["k"]) if by else ""
    t = l["t"]
    back = [(rt, rr) for (rk, rt), rr in hist.items() if rk == k and (rt < t if strict else rt <= t)]
    fwd = [(rt, rr) for (rk, rt), rr in hist.items() if rk == k and (rt > t if strict else rt >= t)]
    b = max(back) if back else None
    f = min(fwd) if fwd else None
    if b and tol >= 0 and t - b[0] > tol: b = None
    if f and tol >= 0 and f[0] - t > tol: f = None
    if direction == "backward": m = b
    elif direction == "forward": m = f
    else: m = f if (f and (not b or f[0] - t < t - b[0])) else b
    print('{"left":%s,"right":%s}' % (raw, m[1] if m else "null"))
