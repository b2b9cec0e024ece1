#!/usr/bin/env python3
"""layers.py ROOT: check lib/'s map (lib/README) against the code.

Layers, bottom up: base, stream, db, then the four subsystems kafka, checkpoint, cache
and join, which are peers. A file may include and call files of its own folder or of a
lower layer only; a subsystem's *_impl.h is its own folder's; and no two files call each
other, directly or round a circle, except the pairs listed in KNOWN_CYCLES, which
lib/README lists under "Where we are" (and which this check fails on once they are gone,
so that the list stays true). Calls are read from the objects' symbols (nm) of the
build in build/current. Prints each breach; exits 1 if any."""
import collections, glob, os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import objsyms  # noqa: E402

LAYER = {'base': 0, 'stream': 1, 'db': 2, 'kafka': 3, 'checkpoint': 3, 'cache': 3, 'join': 3}
KNOWN_CYCLES = []

root = sys.argv[1]
breaches = []


def folder(name):
    return name.split('/')[0]


def may_use(user, used):
    a, b = folder(user), folder(used)
    return a == b or LAYER[b] < LAYER[a]


def check_folders():
    found = {os.path.basename(d) for d in glob.glob(os.path.join(root, 'lib', '*')) if os.path.isdir(d)}
    if found != set(LAYER):
        breaches.append('lib/ folders %s, the map has %s' % (sorted(found), sorted(LAYER)))
    loose = glob.glob(os.path.join(root, 'lib', '*.[ch]'))
    if loose:
        breaches.append('files outside a subsystem folder: %s' % ' '.join(sorted(loose)))


def check_includes():
    include = re.compile(r'#include "([a-z_]+)/([a-z_]+)\.h"')
    for path in sorted(glob.glob(os.path.join(root, 'lib', '*', '*.[ch]'))):
        user = os.path.relpath(path, os.path.join(root, 'lib'))[:-2]
        for sub, name in include.findall(open(path).read()):
            if sub not in LAYER:
                breaches.append('%s includes %s/%s.h: no such subsystem' % (user, sub, name))
            elif name.endswith('_impl') and sub != folder(user):
                breaches.append('%s includes %s/%s.h: another subsystem\'s internals' % (user, sub, name))
            elif not may_use(user, sub + '/' + name):
                breaches.append('%s includes %s/%s.h: not below it' % (user, sub, name))
    for path in sorted(glob.glob(os.path.join(root, 'cmd', '*.c'))):
        for sub, name in include.findall(open(path).read()):
            if name.endswith('_impl'):
                breaches.append('%s includes %s/%s.h: a subsystem\'s internals' % (path, sub, name))


def call_graph():
    objdir = os.path.join(root, 'build', 'current', 'obj', 'lib')
    defs, uses = objsyms.symbols(objdir)
    if not uses:
        sys.exit('layers.py: no objects under %s: run make first' % objdir)
    graph = collections.defaultdict(set)
    for name, syms in uses.items():
        for sym in syms:
            if sym in defs and defs[sym] != name:
                graph[name].add(defs[sym])
                if not may_use(name, defs[sym]):
                    breaches.append('%s calls %s (%s): not below it' % (name, sym, defs[sym]))
    return {n: graph[n] for n in uses}


def cycles(graph):
    """Strongly connected components of more than one file (Tarjan, iterative)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]; counter[0] += 1
        stack.append(start); on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]; counter[0] += 1
                    stack.append(w); on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = set()
                while True:
                    w = stack.pop(); on.discard(w); comp.add(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(comp)
    return out


check_folders()
check_includes()
found = cycles(call_graph())
for comp in found:
    if comp not in KNOWN_CYCLES:
        breaches.append('files that call each other: %s' % ' '.join(sorted(comp)))
for comp in KNOWN_CYCLES:
    if comp not in found:
        breaches.append('no longer a cycle, take it off KNOWN_CYCLES and lib/README: %s' % ' '.join(sorted(comp)))
for b in breaches:
    print(b)
sys.exit(1 if breaches else 0)
