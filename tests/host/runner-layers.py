#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The runner (tools/runner) drawn from its includes and its calls.

  runner-layers.py [--layers 'base kernels ...'] [--cc CC] [--quiet] DIR

Every file under DIR is a node: a .c or a .h. The arrows:
  include  A includes B ("..." includes that resolve to a file under DIR,
           relative to A's folder first, then to DIR);
  call     A.c uses a function or variable that B.c defines: each .c is
           compiled alone (cc -O0 -c into a scratch folder) and `nm` lists
           what its object defines and what it leaves undefined; an
           undefined name that another object defines is an arrow.
           A call through a function pointer is no arrow (that is how a
           lower layer calls up: a callback or a table of functions).

Floors: the circles (strongly connected sets of files, each file of one
a floor together) are found first; then a file's floor is one above the
highest floor it points to (0: it points to nothing). An arrow that does
not point to a lower floor runs back up: with floors assigned that way,
exactly the arrows inside circles.

Folders: the file arrows between folders make the folder graph, which
gets circles and floors the same way. --layers names the folders from
the bottom up, as the runner is meant to be built: a file arrow from one
folder to another that is not below it in that order also counts as
running back up (a layer calling one above it, or a sibling listed
above it), and so does an arrow into or out of a folder the list lacks.

Prints the picture and a summary line; exits 0. The TAP test
(test-runner-layers.sh) judges the summary.
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources(top):
    out = []
    for d, dirs, files in os.walk(top):
        dirs.sort()
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                out.append(os.path.relpath(os.path.join(d, f), top))
    return out


def include_arrows(top, files):
    known = set(files)
    arrows = set()
    for f in files:
        with open(os.path.join(top, f), encoding="utf-8",
                  errors="replace") as fh:
            text = fh.read()
        for inc in INCLUDE.findall(text):
            for cand in (os.path.normpath(os.path.join(os.path.dirname(f),
                                                       inc)),
                         os.path.normpath(inc)):
                if cand in known:
                    if cand != f:
                        arrows.add((f, cand))
                    break
    return arrows


def compile_and_list(cc, top, f, obj):
    """What the object of F defines and leaves undefined (nm -P)."""
    r = subprocess.run(cc + ["-I", top, "-c", "-o", obj,
                             os.path.join(top, f)],
                       capture_output=True, text=True)
    if r.returncode:
        sys.exit("runner-layers: %s does not compile:\n%s" %
                 (f, r.stderr[-2000:]))
    nm = subprocess.run(["nm", "-P", obj], capture_output=True, text=True,
                        check=True).stdout
    defs, undefs = set(), set()
    for line in nm.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        if parts[1] == "U":
            undefs.add(parts[0])
        elif parts[1] in "TDBRCVW":	# global code and data
            defs.add(parts[0])
    return defs, undefs


def call_arrows(top, files, cc):
    cfiles = [f for f in files if f.endswith(".c")]
    with tempfile.TemporaryDirectory() as tmp, \
            concurrent.futures.ThreadPoolExecutor(os.cpu_count()) as pool:
        lists = list(pool.map(
            lambda i: compile_and_list(cc, top, cfiles[i],
                                       os.path.join(tmp, "%d.o" % i)),
            range(len(cfiles))))
    defined = {}
    for f, (defs, _) in zip(cfiles, lists):
        for s in defs:
            defined.setdefault(s, f)
    arrows = set()
    for f, (_, undefs) in zip(cfiles, lists):
        for s in undefs:
            g = defined.get(s)
            if g and g != f:
                arrows.add((f, g))
    return arrows


def circles(nodes, arrows):
    """Tarjan's strongly connected components; each node -> its set."""
    succ = {n: [] for n in nodes}
    for a, b in arrows:
        succ[a].append(b)
    index, low, stack, on, comp = {}, {}, [], set(), {}
    counter = [0]

    def visit(v):
        work = [(v, iter(sorted(succ[v])))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(succ[w]))))
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    members = set()
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        members.add(w)
                        if w == node:
                            break
                    for w in members:
                        comp[w] = frozenset(members)

    for n in sorted(nodes):
        if n not in index:
            visit(n)
    return comp


def floors(nodes, arrows, comp):
    """Floor of each node: 1 + the highest floor below (circles as one)."""
    down = {}
    for a, b in arrows:
        if comp[a] != comp[b]:
            down.setdefault(comp[a], set()).add(comp[b])
    memo = {}

    def floor(c):
        if c not in memo:
            memo[c] = 1 + max((floor(d) for d in down.get(c, ())),
                              default=-1)
        return memo[c]

    return {n: floor(comp[n]) for n in nodes}


def folder_of(f):
    d = os.path.dirname(f)
    return d if d else "."


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--layers", default=None,
                    help="the folders from the bottom up")
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args()
    top = os.path.abspath(args.dir)
    cc = [args.cc, "-std=gnu11", "-D_GNU_SOURCE", "-pthread", "-O0", "-w"]

    files = sources(top)
    inc = include_arrows(top, files)
    calls = call_arrows(top, files, cc)
    arrows = inc | calls
    comp = circles(files, arrows)
    floor = floors(files, arrows, comp)
    file_circles = sorted({c for c in comp.values() if len(c) > 1},
                          key=lambda c: sorted(c))
    back = sorted((a, b) for a, b in arrows if floor[b] >= floor[a])

    folders = sorted({folder_of(f) for f in files})
    farrows = {(folder_of(a), folder_of(b)) for a, b in arrows
               if folder_of(a) != folder_of(b)}
    fcomp = circles(folders, farrows)
    ffloor = floors(folders, farrows, fcomp)
    folder_circles = sorted({c for c in fcomp.values() if len(c) > 1},
                            key=lambda c: sorted(c))
    order = args.layers.split() if args.layers is not None else None
    undeclared = []
    if order is not None:
        undeclared = [d for d in folders if d not in order]
        rank = {d: i for i, d in enumerate(order)}
        for a, b in sorted(arrows):
            fa, fb = folder_of(a), folder_of(b)
            if fa == fb or (a, b) in back:
                continue
            if fa not in rank or fb not in rank or rank[fb] >= rank[fa]:
                back.append((a, b))

    out = []
    nfloors = max(floor.values()) + 1 if floor else 0
    out.append("files: %d, arrows: %d (%d includes, %d calls), floors: %d"
               % (len(files), len(arrows), len(inc), len(calls), nfloors))
    for k in range(nfloors - 1, -1, -1):
        out.append("  floor %2d: %s" % (k, " ".join(
            sorted(f for f in files if floor[f] == k))))
    out.append("folders: %d, floors: %d" %
               (len(folders), max(ffloor.values()) + 1 if ffloor else 0))
    for d in sorted(folders, key=lambda d: (-ffloor[d], d)):
        fl = [floor[f] for f in files if folder_of(f) == d]
        below = sorted({fb for fa, fb in farrows if fa == d})
        out.append("  floor %d: %-12s files %2d on floors %d-%d -> %s" % (
            ffloor[d], d, len(fl), min(fl), max(fl),
            ", ".join(below) if below else "(nothing)"))
    for c in file_circles:
        out.append("circle of files: " + " ".join(sorted(c)))
    for c in folder_circles:
        out.append("circle of folders: " + " ".join(sorted(c)))
    for d in undeclared:
        out.append("folder not in --layers: " + d)
    for a, b in sorted(back):
        how = ("include" if (a, b) in inc else "") + \
              ("+" if (a, b) in inc and (a, b) in calls else "") + \
              ("call" if (a, b) in calls else "")
        out.append("back up: %s -> %s (%s)" % (a, b, how))
    if not args.quiet:
        print("\n".join(out))
    print("summary: files %d arrows %d floors %d folders %d "
          "folder_floors %d circles %d folder_circles %d back %d "
          "undeclared %d" % (
              len(files), len(arrows), nfloors, len(folders),
              max(ffloor.values()) + 1 if ffloor else 0,
              len(file_circles), len(folder_circles), len(back),
              len(undeclared)))


if __name__ == "__main__":
    main()
