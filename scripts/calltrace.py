#!/usr/bin/env python3
"""calltrace.py ROOT BINARY TRACE: count the calls of one traced run that climb lib/'s map.

TRACE is the log of a tool of the trace variant (make TRACE=1; scripts/calltrace-hook.c
writes a line "E|X THREAD ADDRESS" per function entry and return). scripts/calltrace
runs ss-asof and then this; by hand, for any run of any tool:

    make TRACE=1 build/trace/bin/ss-asof
    SS_CALLTRACE=/tmp/t build/trace/bin/ss-asof --on .t LEFT RIGHT
    scripts/calltrace.py . build/trace/bin/ss-asof /tmp/t

Each function is placed in its module (nm -l of BINARY: its source file, where a
header's inline function counts with the .c of the header's name, if any), and each
call is seen from the function on top of its thread's stack, so calls through function
pointers, hooks and callbacks count as the calls they are (tests/layers.py, reading the
objects' symbols, sees only direct calls). Over the calls of lib/ and cmd/ functions:

  step   a call from one module to another;
  climb  a step that goes up, of one or more kinds:
           layer  into a higher folder (lib/README: cmd > join > checkpoint > cache >
                  kafka > db > stream > base);
           file   within a folder, into a file above the caller's: one that calls it,
                  directly or through others (the trace variant's objects, nm);
           back   into a module that has a frame lower on the stack: one the run came
                  from and has not left yet;
  chain  the climbs on one stack at once; the longest chain is the most there were.

Prints the figures (all threads, then each), each climb (caller file:function -> callee
file:function, its kinds, how often, the step it first came at) and the longest chain.
Exits 0 whatever it counts."""
import collections
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests'))
import objsyms  # noqa: E402  (tests/objsyms.py: the objects' symbols, as tests/layers.py reads them)

ORDER = ['base', 'stream', 'db', 'kafka', 'cache', 'checkpoint', 'join', 'cmd']


def folder(module):
    return module.split('/')[0]


def functions(root, binary):
    """address -> (module, file, function) of BINARY's functions in ROOT/lib and ROOT/cmd."""
    out = subprocess.run(['nm', '-l', '--defined-only', binary], capture_output=True,
                         text=True, check=True).stdout
    found = {}
    for line in out.splitlines():
        m = re.match(r'([0-9a-f]+) [tTwW] (\S+)\t(.+):\d+$', line)
        if not m:
            continue
        path = os.path.relpath(os.path.realpath(m.group(3)), root)
        if path.startswith('lib/'):
            path = path[4:]
        elif not path.startswith('cmd/'):
            continue
        stem = path[:-2]
        own_c = path.endswith('.c') or os.path.exists(os.path.join(root, 'lib', stem + '.c'))
        found[int(m.group(1), 16)] = (stem if own_c else path, path, m.group(2).split('.')[0])
    return found


def files_above(root):
    """module -> the modules of its folder above it: those that call it, directly or
    through others (the symbols of the trace variant's objects, as tests/layers.py)."""
    defs, uses = objsyms.symbols(os.path.join(root, 'build', 'trace', 'obj', 'lib'))
    callers = collections.defaultdict(set)
    for name, syms in uses.items():
        for sym in syms:
            if sym in defs and defs[sym] != name and folder(defs[sym]) == folder(name):
                callers[defs[sym]].add(name)
    above = {}
    for m in uses:
        seen, todo = set(), [m]
        while todo:
            for c in callers[todo.pop()] - seen:
                seen.add(c)
                todo.append(c)
        above[m] = seen
    return above


def climb_kinds(caller, callee, lower, above):
    """The kinds of climb of a call from module caller to module callee, lower being the
    modules of the frames below the caller's."""
    kinds = []
    if ORDER.index(folder(callee)) > ORDER.index(folder(caller)):
        kinds.append('layer')
    elif folder(caller) == folder(callee) and callee in above.get(caller, ()):
        kinds.append('file')
    if callee in lower:
        kinds.append('back')
    return kinds


def main():
    if len(sys.argv) != 4:
        sys.exit('usage: calltrace.py ROOT BINARY TRACE')
    root, binary, trace = os.path.realpath(sys.argv[1]), sys.argv[2], sys.argv[3]
    fns = functions(root, binary)
    above = files_above(root)
    stacks = {}  # thread -> [(function or None, its climb or None, address)], in thread order
    calls = steps = 0
    counts = collections.Counter()  # (thread, 'steps' | 'climbs')
    climbs = {}  # (caller, callee) -> [kinds, times, first step], in the order met
    on_stack = collections.Counter()  # thread -> climbs on its stack now
    longest = []
    for line in open(trace):
        what, tid, addr = line.split()
        stack = stacks.setdefault(tid, [])
        if what == 'X':
            while stack:  # to the frame that returns (and any a longjmp left, with it)
                fn, climb, at = stack.pop()
                on_stack[tid] -= climb is not None
                if at == addr:
                    break
            continue
        calls += 1
        fn, climb = fns.get(int(addr, 16)), None
        caller = stack[-1][0] if stack else None
        if fn and caller and caller[0] != fn[0]:
            steps += 1
            counts[tid, 'steps'] += 1
            lower = {f[0][0] for f in stack[:-1] if f[0]}
            kinds = climb_kinds(caller[0], fn[0], lower, above)
            if kinds:
                climb = ('%s:%s' % caller[1:], '%s:%s' % fn[1:])
                climbs.setdefault(climb, [kinds, 0, steps])[1] += 1
                counts[tid, 'climbs'] += 1
                on_stack[tid] += 1
        stack.append((fn, climb, addr))
        if on_stack[tid] > len(longest):
            longest = [f[1] for f in stack if f[1]]
    print('calls %d, steps %d, climbs %d, longest chain %d'
          % (calls, steps, sum(c[1] for c in climbs.values()), len(longest)))
    for i, tid in enumerate(stacks):
        print('  thread %d%s: steps %d, climbs %d' % (i + 1, ' (main)' if i == 0 else '',
                                                      counts[tid, 'steps'], counts[tid, 'climbs']))
    print('climbs (caller -> callee [kinds] times, first at step):')
    for (a, b), (kinds, times, first) in climbs.items():
        print('  %s -> %s [%s] x%d, step %d' % (a, b, ','.join(kinds), times, first))
    print('longest chain:')
    for a, b in longest:
        print('  %s -> %s' % (a, b))


main()
