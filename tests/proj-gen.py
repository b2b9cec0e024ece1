#!/usr/bin/env python3
# Random documents and projections (lib/base/proj.h's grammar: paths, arrays and objects of
# them, literals) for tests/proj-property.bats and the fuzz_proj seed corpus. Documents
# are written by hand, not by json.dumps, to hold what jq prints otherwise: whitespace,
# 1.0, 1e2, long integers, -0, escapes jq writes another way (\/, \u00e9, \u001F), DEL,
# duplicate keys.
# usage: proj-gen.py docs SEED N [sides]  N documents, one a line ({"t":i,"i":i,...});
#                                         with sides, paths start with .left or .right
#        proj-gen.py exprs SEED N [sides] N expressions, one a line
#        proj-gen.py seeds SEED N DIR     N fuzz inputs: expression, document(s)
import random, sys

KEYS = ["a", "b", "c", "left", "right", "x y", "é"]
NUMBERS = ["0", "-0", "1", "-17", "1.0", "1.50", "1e2", "1E-7", "-2.5e+3", "0.1",
           "123456789012345", "1234567890123456", "12345678901234567890", "9007199254740993",
           "1000000000000000000", "1e400", "3.141592653589793238"]
STRINGS = ['""', '"plain"', '"x\\/y"', '"caf\\u00e9"', '"caf\u00e9"', '"tab\\t nl\\n q\\" b\\\\"',
           '"\\u001F\\u001f\\u0000"', '"del\x7f"', '"\\u007f"', '"\\b\\f\\r"', '"\\u0008"',
           '"\\ud83d\\ude00"', '"\U0001F600"', '"x" ', '"' + "w" * 120 + '"']


def ws(rng):
    return rng.choice(["", "", "", "", " ", "\t", "  "])


def key(rng):
    k = rng.choice(KEYS)
    return '"%s"' % ("\\u0061" if k == "a" and rng.random() < 0.1 else k)


def value(rng, depth):
    r = rng.random()
    if depth < 3 and r < 0.2:
        n = rng.randrange(5)
        return "{" + ",".join(ws(rng) + key(rng) + ws(rng) + ":" + ws(rng) + value(rng, depth + 1)
                              for _ in range(n)) + ws(rng) + "}"
    if depth < 3 and r < 0.35:
        return "[" + ",".join(ws(rng) + value(rng, depth + 1) for _ in range(rng.randrange(4))) + "]"
    if r < 0.6:
        return rng.choice(NUMBERS)
    if r < 0.9:
        return rng.choice(STRINGS)
    return rng.choice(["true", "false", "null"])


def doc(rng, i):
    members = ['"t":%d' % i, '"i":%d' % i] + [key(rng) + ":" + ws(rng) + value(rng, 1)
                                             for _ in range(rng.randrange(6))]
    return "{" + ",".join(members) + "}"


def step(rng):
    k = rng.choice(KEYS + ["t", "i"])
    r = rng.random()
    if r < 0.15:
        return "[%d]" % rng.randrange(3)
    if r < 0.25 or not k.isidentifier() or not k.isascii():
        return '."%s"' % k if rng.random() < 0.7 else '["%s"]' % k
    return "." + k


def path(rng, sides):
    head = rng.choice([".left", ".right"]) if sides and rng.random() < 0.9 else ""
    steps = "".join(step(rng) for _ in range(rng.randrange(3)))
    if not head and not steps:
        return "."
    if not head and steps.startswith("["):
        steps = "." + steps
    return head + steps


LITERALS = ["1", "-1", "-0", "1.0", "1e2", "0.5", '"s"', '"é w"', "true", "false", "null", "12345678901234567890"]


def expr(rng, sides, depth=0):
    r = rng.random()
    if depth < 3 and r < 0.25:
        return "[" + ", ".join(expr(rng, sides, depth + 1) for _ in range(rng.randrange(4))) + "]"
    if depth < 3 and r < 0.45:
        members, used = [], set()
        for _ in range(rng.randrange(4)):
            k = rng.choice(["id", "w", "a", "b", "x y", "left", "t"])
            if k in used:
                continue
            used.add(k)
            if k.isidentifier() and rng.random() < 0.3:
                members.append(k)  # {a} is {a: .a}
            else:
                name = k if k.isidentifier() and rng.random() < 0.7 else '"%s"' % k
                members.append("%s: %s" % (name, expr(rng, sides, depth + 1)))
        return "{" + ", ".join(members) + "}"
    if r < 0.55:
        return rng.choice(LITERALS)
    return path(rng, sides)


def main():
    mode, seed, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = random.Random(seed)
    sides = len(sys.argv) > 4 and sys.argv[4] == "sides"
    out = sys.stdout.buffer
    if mode == "docs":
        for i in range(n):
            out.write((doc(rng, i) + "\n").encode())
    elif mode == "exprs":
        for _ in range(n):
            out.write((expr(rng, sides) + "\n").encode())
    elif mode == "seeds":
        for k in range(n):
            two = rng.random() < 0.5
            text = expr(rng, two) + "\n" + doc(rng, k) + ("\n" + doc(rng, k + 1) if two else "")
            with open("%s/seed-%04d" % (sys.argv[4], k), "wb") as f:
                f.write(text.encode())


main()
