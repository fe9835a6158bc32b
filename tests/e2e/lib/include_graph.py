#!/usr/bin/env python3
"""The include graph of user/: modules and stages, and its cycles.

A module is a header and the .c files that implement it: name.h with
name.c, and a split module's name_impl.h with every .c that includes it
(user/inspect/alloc_sites_*.c, user/trace/{tracer,dispatch,...}.c).  An
edge A -> B means a file of A includes B's header.  Prints every cycle
between modules and between stages, and exits 1 if there is one.
"""
import os, re, sys

root = sys.argv[1] if len(sys.argv) > 1 else 'user'
inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
files = {}
for d, _, names in os.walk(root):
    for n in names:
        if n.endswith(('.c', '.h')):
            p = os.path.relpath(os.path.join(d, n), root)
            files[p] = inc.findall(open(os.path.join(d, n)).read())

def resolve(src, name):
    here = os.path.normpath(os.path.join(os.path.dirname(src), name))
    return here if here in files else (name if name in files else None)

module = {}
for p in files:
    stem = p[:-2]
    module[p] = stem[:-5] if stem.endswith('_impl') else stem
for p, incs in files.items():
    if p.endswith('.c') and p[:-2] + '.h' not in files:
        for i in incs:
            r = resolve(p, i)
            if r and r.endswith('_impl.h'):
                module[p] = module[r]

def stage(m):
    return m.split('/')[0] if '/' in m else m

edges = {}
for p, incs in files.items():
    for i in incs:
        r = resolve(p, i)
        if r and module[r] != module[p]:
            edges.setdefault(module[p], set()).add(module[r])

def cycles(graph):
    found, color, path = [], {}, []
    def dfs(u):
        color[u] = 1
        path.append(u)
        for v in sorted(graph.get(u, ())):
            if color.get(v) == 1:
                found.append(path[path.index(v):] + [v])
            elif not color.get(v):
                dfs(v)
        path.pop()
        color[u] = 2
    for u in sorted(graph):
        if not color.get(u):
            dfs(u)
    return found

stages = {}
for a, bs in edges.items():
    for b in bs:
        if stage(a) != stage(b):
            stages.setdefault(stage(a), set()).add(stage(b))
bad = 0
for c in cycles(edges):
    print('module cycle: ' + ' -> '.join(c))
    bad = 1
for c in cycles(stages):
    print('stage cycle: ' + ' -> '.join(c))
    bad = 1
for a in sorted(stages):
    print('stage %s -> %s' % (a, ' '.join(sorted(stages[a]))))
print('%d modules, %d edges' % (len(set(module.values())),
                                 sum(len(v) for v in edges.values())))
sys.exit(bad)
