#!/usr/bin/env python3
"""test_layers.py — the core's house rules, checked on the sources and on
the compiled objects:

1. No circles: the graph whose edges are includes ("a.c includes b.h")
   and calls ("a.o needs a symbol b.o defines", read with nm from the
   objects of the core's libraries and program) has no cycle of two or
   more files.  A header and the file that implements it count as one
   node (fit.h and fit.c are one piece).
2. Layers: the engine's parts, lowest first, are listed once in
   core/engine/parts.cmake (RVFIT_ENGINE_PARTS; CMake writes them to
   engine_parts.txt in the build tree).  A file of a part includes and
   calls only its own part and the parts below it; of another part it
   includes only that part's public header (rvfit/<header>) or its one
   internal header.  The libraries stack the same way: sdk < engine <
   tools < cli.
3. Size: no folder of core/ holds more than MAX_SOURCES C sources.
4. Interpolator kinds are the interpolator part's business: the token
   RVFIT_IKIND_ appears nowhere in core/ outside core/engine/interp/.

Before judging the tree, the checks are run once on the real graph with
one planted upward include (a file of the lowest part includes a file of
a part above it that includes it): unless they report it as a layer violation and a circle,
the test fails, so that checks which cannot fail are caught.

Usage: test_layers.py SOURCE_DIR BUILD_DIR
"""
import contextlib
import io
import os
import re
import subprocess
import sys

MAX_SOURCES = 15
LIBS = ["sdk", "engine", "tools", "cli"]  # lowest first
TARGET_DIRS = {"rvfit_sdk.dir": "sdk", "rvfit.dir": "engine",
               "rvfit_tools.dir": "tools", "rvfit_cli.dir": "cli"}
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def rel(path, src):
    return os.path.relpath(path, src)


def core_files(src):
    out = []
    for root, _, names in os.walk(os.path.join(src, "core")):
        for n in names:
            if n.endswith((".c", ".h")):
                out.append(rel(os.path.join(root, n), src))
    return sorted(out)


def read_parts(build):
    """[(part, public header, internal header or '')] lowest first."""
    parts = []
    with open(os.path.join(build, "core", "engine_parts.txt")) as f:
        for line in f:
            w = line.split()
            if w:
                parts.append((w[0], w[1], w[2] if len(w) > 2 else ""))
    return parts


class House:
    def __init__(self, src, build):
        self.src, self.build = src, build
        self.files = core_files(src)
        self.file_set = set(self.files)
        self.parts = read_parts(build)
        self.rank = {p: i for i, (p, _, _) in enumerate(self.parts)}
        self.public = {}  # core/engine/include/rvfit/x.h -> part
        self.internal = {}  # internal header path -> part
        for p, pub, intern in self.parts:
            self.public["core/engine/include/rvfit/" + pub] = p
            if intern:
                self.internal["core/engine/%s/%s" % (p, intern)] = p
        self.inc_dirs = ["core/%s/include" % d for d in ("sdk", "engine",
                                                         "tools")]
        self.inc_dirs.append("core/engine")

    def lib_of(self, f):
        return f.split("/")[1]  # core/<lib>/...

    def part_of(self, f):
        """The engine part of a file (None outside the engine)."""
        if not f.startswith("core/engine/"):
            return None
        if f in self.public:
            return self.public[f]
        top = f.split("/")[2]
        return top if top in self.rank else "?" + top

    def resolve(self, f, inc):
        here = os.path.join(os.path.dirname(f), inc)
        cands = [here] + [os.path.join(d, inc) for d in self.inc_dirs]
        for c in cands:
            c = os.path.normpath(c)
            if os.path.exists(os.path.join(self.src, c)):
                return c
        return None  # a system or generated header

    def includes(self):
        edges = []
        for f in self.files:
            with open(os.path.join(self.src, f), errors="replace") as fh:
                text = fh.read()
            for inc in INCLUDE_RE.findall(text):
                t = self.resolve(f, inc)
                if t and t != f:
                    edges.append((f, t))
        return edges

    def calls(self):
        """(a.c, b.c) when a's object needs a symbol b's object defines."""
        defs, needs = {}, {}
        root = os.path.join(self.build, "core", "CMakeFiles")
        for tdir, lib in TARGET_DIRS.items():
            base = os.path.join(root, tdir)
            for r, _, names in os.walk(base):
                for n in names:
                    if not n.endswith(".c.o"):
                        continue
                    obj = os.path.join(r, n)
                    srcf = "core/" + rel(obj, base)[:-2]
                    if srcf not in self.file_set:
                        continue  # left by a source that is gone
                    out = subprocess.run(["nm", obj], capture_output=True,
                                         text=True, check=True).stdout
                    for line in out.splitlines():
                        w = line.split()
                        if len(w) == 2 and w[0] == "U":
                            needs.setdefault(srcf, set()).add(w[1])
                        elif len(w) == 3 and w[1] in "TDBRCVW":
                            defs[w[2]] = srcf
        edges = []
        for f, syms in needs.items():
            for s in sorted(syms):
                t = defs.get(s)
                if t and t != f:
                    edges.append((f, t, s))
        return edges


def unit(f):
    """A header and its implementation are one node: x.h ~ x.c in the
    same folder; a public header rvfit/x.h of a part ~ that part."""
    return f[:-2] if f.endswith((".c", ".h")) else f


def sccs(nodes, adj):
    """Tarjan's strongly connected components, iteratively."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(adj.get(root, ()))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(adj.get(nxt, ())))))
                elif nxt in on:
                    low[v] = min(low[v], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(sorted(comp))
    return out


def check_circles(house, inc, calls):
    adj, why = {}, {}
    for a, b in inc:
        ua, ub = unit(a), unit(b)
        if ua != ub:
            adj.setdefault(ua, set()).add(ub)
            why.setdefault((ua, ub), "includes %s" % b)
    for a, b, s in calls:
        ua, ub = unit(a), unit(b)
        if ua != ub:
            adj.setdefault(ua, set()).add(ub)
            why.setdefault((ua, ub), "calls %s" % s)
    nodes = sorted(set(adj) | {x for v in adj.values() for x in v})
    bad = [c for c in sccs(nodes, adj) if len(c) > 1]
    for c in bad:
        print("FAIL: circle of %d files:" % len(c))
        for a in c:
            for b in sorted(adj.get(a, ())):
                if b in c:
                    print("   %s -> %s (%s)" % (a, b, why[(a, b)]))
    return len(bad)


def check_layers(house, inc, calls):
    fails = 0
    for a, b in inc:
        la, lb = house.lib_of(a), house.lib_of(b)
        if la in LIBS and lb in LIBS and LIBS.index(lb) > LIBS.index(la):
            print("FAIL: %s (library %s) includes %s of library %s above it"
                  % (a, la, b, lb))
            fails += 1
            continue
        pa, pb = house.part_of(a), house.part_of(b)
        if pa is None or pb is None or pa == pb:
            continue
        for p in (pa, pb):
            if p.startswith("?"):
                print("FAIL: %s is in no engine part listed in "
                      "RVFIT_ENGINE_PARTS" % (a if p == pa else b))
                fails += 1
        if pa.startswith("?") or pb.startswith("?"):
            continue
        if house.rank[pb] > house.rank[pa]:
            print("FAIL: %s (part %s) includes %s of part %s, a layer above"
                  % (a, pa, b, pb))
            fails += 1
        elif b not in house.public and b not in house.internal:
            print("FAIL: %s includes %s: another part's private header "
                  "(only its rvfit/ header or its one internal header)"
                  % (a, b))
            fails += 1
    for a, b, s in calls:
        la, lb = house.lib_of(a), house.lib_of(b)
        if LIBS.index(lb) > LIBS.index(la):
            print("FAIL: %s calls %s of %s, in library %s above it"
                  % (a, s, b, lb))
            fails += 1
            continue
        pa, pb = house.part_of(a), house.part_of(b)
        if pa and pb and pa in house.rank and pb in house.rank and \
                house.rank[pb] > house.rank[pa]:
            print("FAIL: %s (part %s) calls %s of %s (part %s), a layer "
                  "above" % (a, pa, s, b, pb))
            fails += 1
    return fails


def check_sizes(house):
    count = {}
    for f in house.files:
        if f.endswith(".c"):
            d = os.path.dirname(f)
            count[d] = count.get(d, 0) + 1
    fails = 0
    for d, n in sorted(count.items()):
        if n > MAX_SOURCES:
            print("FAIL: %s holds %d C sources (at most %d)"
                  % (d, n, MAX_SOURCES))
            fails += 1
    return fails, max(count.values())


def check_kinds(house):
    fails = 0
    for f in house.files:
        if f.startswith("core/engine/interp/"):
            continue
        with open(os.path.join(house.src, f), errors="replace") as fh:
            for i, line in enumerate(fh, 1):
                if "RVFIT_IKIND_" in line:
                    print("FAIL: %s:%d names an interpolator kind outside "
                          "the interpolator part" % (f, i))
                    fails += 1
    return fails


def planted(house, inc, calls):
    """0 when the checks see a planted upward include; else 1.  The plant
    reverses an include from a higher part into the lowest one, so it is
    both a layer violation and a circle of two files."""
    low = house.parts[0][0]
    up = [(a, b) for a, b in inc
          if house.part_of(b) == low and house.part_of(a) in house.rank
          and house.rank[house.part_of(a)] > 0]
    if not up:
        print("FAIL: nothing includes the lowest part %s" % low)
        return 1
    a, b = up[0]
    bad = inc + [(b, a)]
    with contextlib.redirect_stdout(io.StringIO()):
        base = (check_circles(house, inc, calls),
                check_layers(house, inc, calls))
        seen = (check_circles(house, bad, calls),
                check_layers(house, bad, calls))
    if seen[0] <= base[0] or seen[1] <= base[1]:
        print("FAIL: a planted include of %s by %s went unseen "
              "(circles %d -> %d, layer failures %d -> %d)"
              % (a, b, base[0], seen[0], base[1], seen[1]))
        return 1
    return 0


def main():
    src, build = sys.argv[1], sys.argv[2]
    house = House(src, build)
    inc = house.includes()
    calls = house.calls()
    if not calls:
        print("FAIL: no objects found under %s/core/CMakeFiles" % build)
        return 1
    if planted(house, inc, calls):
        return 1
    fails = check_circles(house, inc, calls)
    fails += check_layers(house, inc, calls)
    nsize, biggest = check_sizes(house)
    fails += nsize + check_kinds(house)
    print("test_layers: %d files, %d includes, %d calls between files, "
          "%d engine parts, at most %d C sources a folder: %s"
          % (len(house.files), len(inc), len(calls), len(house.parts),
             biggest, "passed" if not fails else "%d failures" % fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
