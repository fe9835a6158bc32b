#!/usr/bin/env python3
"""Which .c of a stage calls functions defined in which other .c of it.

The include graph (tests/e2e/lib/include_graph.py) has no cycle, but the
files of a split module may still call one another in circles: A calls
B's function and B calls A's.  This reads the objects' symbol tables
(nm: T, D, B, R defined; U used) under BUILD/obj and, for each pair of
files of one stage folder, lists the functions one takes from the other;
then the call circles between files of a stage.

A circle is counted once per strongly connected set of files (a
"tangle": every file in it reaches every other by calls); the number of
simple cycles inside them is given too, since one tangle of five files
can hold many.

Usage: tools/call_graph.py [-v] [BUILD/obj]     (default build/obj)
  -v  every edge, with the functions it is made of
Run from the top of the tree, after a build: an object whose user/*.c is
gone (a renamed file) is skipped.
"""
import os
import subprocess
import sys

args = [a for a in sys.argv[1:] if a != '-v']
verbose = '-v' in sys.argv[1:]
obj = args[0] if args else 'build/obj'

defined, used = {}, {}
for stage in sorted(os.listdir(obj)):
    d = os.path.join(obj, stage)
    if stage == 'gen' or not os.path.isdir(d):
        continue
    for n in sorted(os.listdir(d)):
        f = stage + '/' + n[:-2]
        if not n.endswith('.o') or not os.path.exists('user/' + f + '.c'):
            continue
        nm = subprocess.run(['nm', os.path.join(d, n)], check=True,
                            capture_output=True, text=True).stdout
        used[f] = set()
        for line in nm.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in 'TDBR':
                defined[p[2]] = f
            elif len(p) == 2 and p[0] == 'U':
                used[f].add(p[1])

# edges[a][b]: the functions file a calls in file b, both of one stage.
edges = {}
for f, syms in used.items():
    for s in syms:
        g = defined.get(s)
        if g and g != f and g.split('/')[0] == f.split('/')[0]:
            edges.setdefault(f, {}).setdefault(g, set()).add(s)


def tangles(graph, nodes):
    """Strongly connected sets of more than one file (Tarjan)."""
    index, low, on, stack, out = {}, {}, set(), [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            c = []
            while True:
                w = stack.pop()
                on.discard(w)
                c.append(w)
                if w == v:
                    break
            if len(c) > 1:
                out.append(sorted(c))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def simple_cycles(graph):
    """Every simple cycle, found once, from its smallest file."""
    out = []

    def walk(s, u, path):
        for v in sorted(graph.get(u, ())):
            if v == s:
                out.append(path + [s])
            elif v > s and v not in path:
                walk(s, v, path + [v])

    for s in sorted(graph):
        walk(s, s, [s])
    return out


for a in sorted(edges):
    for b in sorted(edges[a]):
        if verbose:
            print('%s -> %s: %s' % (a, b, ' '.join(sorted(edges[a][b]))))
        else:
            print('%s -> %s' % (a, b))
cycles = simple_cycles(edges)
for c in cycles:
    print('cycle: ' + ' -> '.join(c))
found = tangles(edges, used)
for c in found:
    print('call circle: ' + ' '.join(c))
print('%d call circles inside stages (%d simple cycles)' %
      (len(found), len(cycles)))
