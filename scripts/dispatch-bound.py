#!/usr/bin/env python3
"""Exact lower bound on the `nr` dispatch of a filter's class of trees, for a workload.

Usage: scripts/dispatch-bound.py FILTER.bpf WORKLOAD   (JSON probe list or `strace -c` summary)
Environment: SECOPT=path to the binary (default target/release/secopt); ARCH=the filter's arch
(default x86_64); TOPJEQ=K allows `jeq` tests of the K hottest numbers only (default: all), which
makes the search feasible for workloads of many numbers but turns the result into an upper bound
on the class's best (a tree that exists), not a lower one; TREE=1 prints that tree (subtrees
no workload call reaches are left out); JSET=1 (or JSET=2) also searches the wider class below.

The class: every tree of `jge` splits between the filter's number ranges and `jeq` tests of
the workload's numbers, a `jeq` allowed at any depth (after a `jeq` fails, its number is a
don't-care for the rest of that subtree). A subtree whose remaining numbers all get the same
decision function is a leaf. Numbers past the arch's table count as one range, which can only
lower the bound. The search is a memoized dynamic program over (range of leaves, numbers already
tested by `jeq`); it returns the least total of workload count x tests over all trees of the class.
This is how docs/benchmarks.md bounds the Firecracker api thread's cost (20 tests for its eight
`common` calls), and how it shows a tree within half the tree's cost for seccompagent's filter
on aarch64 under gVisor's workload (TOPJEQ=8). It is slow (seconds to minutes; exponential in
the `jeq` candidates) and is not part of the test suite.

JSET=1 then repeats the search over a wider class: `jset` tests of one bit of the number (JSET=2:
of one or two bits) are allowed anywhere besides the `jge` splits and `jeq` tests, so a subtree
holds any set of numbers, not only a range. That search runs over sets of numbers (branch and
bound, memoized on the set); it shows whether testing bits could beat the ranges' bound.
"""
import json
import os
import subprocess
import sys
from functools import lru_cache

sys.setrecursionlimit(100000)
secopt = os.environ.get("SECOPT", "target/release/secopt")
prog, workload = sys.argv[1], sys.argv[2]
ARCH = os.environ.get("ARCH", "x86_64")
out = subprocess.run([secopt, "analyze", prog, "--format", "json", "--arch", ARCH],
                     capture_output=True, text=True, check=True).stdout
arch = json.loads(out)["arches"][0]
# Decision function per number: the action for number-only decisions, the syscall itself when
# the decision reads arguments (no two of those are assumed equal: again only lowers the bound).
target = {s["nr"]: s["name"] if s["depends_on_args"] else "/".join(s["actions"])
          for s in arch["syscalls"]}
values = [target.get(n, "unnamed") for n in range(arch["cache_bitmap"]["table_size"])]
values.append("beyond the table")
nr_of = {s["name"]: s["nr"] for s in arch["syscalls"]}
weight = {}
def workload_entries(path):
    """The workload's calls: a JSON object of `{"syscall": name, "count": n}` entries (the
    probes' format) or an `strace -c` summary."""
    text = open(path).read()
    if text.lstrip().startswith("{"):
        return json.loads(text).values()
    rows = (line.split() for line in text.splitlines())
    return [{"syscall": r[-1], "count": int(r[3])} for r in rows
            if len(r) >= 5 and r[0][0].isdigit() and r[-1] != "total"]


for entry in workload_entries(workload):
    nr = nr_of[entry["syscall"]]
    weight[nr] = weight.get(nr, 0) + entry["count"]
# Leaves: runs of one decision function; every workload number is a leaf of its own.
leaves = []  # [first number, target, weight]
for n, t in enumerate(values):
    last = leaves[-1] if leaves else None
    if last and last[1] == t and n not in weight and last[0] not in weight:
        continue
    leaves.append([n, t, weight.get(n, 0)])
hot = sorted((i for i, leaf in enumerate(leaves) if leaf[0] in weight), key=lambda i: -leaves[i][2])
hot = hot[:int(os.environ.get("TOPJEQ", len(hot)))]
prefix = [0]
for leaf in leaves:
    prefix.append(prefix[-1] + leaf[2])


@lru_cache(maxsize=None)
def cost(i, j, tested):
    """Least weighted tests for leaves i..=j, the leaves in `tested` already pulled by a jeq."""
    if len({leaves[x][1] for x in range(i, j + 1) if x not in tested}) <= 1:
        return 0
    here = prefix[j + 1] - prefix[i] - sum(leaves[x][2] for x in tested)
    best = min(cost(i, k - 1, frozenset(x for x in tested if x < k))
               + cost(k, j, frozenset(x for x in tested if x >= k)) for k in range(i + 1, j + 1))
    for x in hot:
        if i <= x <= j and x not in tested:
            best = min(best, cost(i, j, tested | {x}))
    return here + best


print(f"{len(leaves)} leaves, workload numbers {[leaves[x][0] for x in hot]}")
best = cost(0, len(leaves) - 1, frozenset())
print(f"least weighted dispatch tests: {best} ({best / prefix[-1]:.4f} per call)")


def show(i, j, tested, indent):
    """Prints the tree `cost` found for leaves i..=j; only subtrees with workload calls."""
    here = prefix[j + 1] - prefix[i] - sum(leaves[x][2] for x in tested)
    if here == 0:
        return
    left = {leaves[x][1] for x in range(i, j + 1) if x not in tested}
    if len(left) <= 1:
        end = leaves[j + 1][0] - 1 if j + 1 < len(leaves) else "..."
        print(f"{indent}[{leaves[i][0]}, {end}] {left.pop()}: {here} calls")
        return
    c = cost(i, j, tested)
    for k in range(i + 1, j + 1):
        lo, hi = frozenset(x for x in tested if x < k), frozenset(x for x in tested if x >= k)
        if here + cost(i, k - 1, lo) + cost(k, j, hi) == c:
            print(f"{indent}jge {leaves[k][0]}")
            show(k, j, hi, indent + "  ")
            show(i, k - 1, lo, indent + "  ")
            return
    for x in hot:
        if i <= x <= j and x not in tested and here + cost(i, j, tested | {x}) == c:
            print(f"{indent}jeq {leaves[x][0]} ({leaves[x][2]} calls)")
            show(i, j, tested | {x}, indent + "  ")
            return


if os.environ.get("TREE"):
    show(0, len(leaves) - 1, frozenset(), "")


def bitset_bound(pairs):
    """The least weighted tests over trees of `jge`, `jeq` (of the workload's numbers, or the
    TOPJEQ hottest) and `jset` tests of one bit (and two with `pairs`); numbers past the table
    are one element that a `jset` sends both ways (they have every low bit pattern)."""
    n = len(values) - 1  # index n: "beyond the table"
    members = {}
    for x, v in enumerate(values):
        members[v] = members.get(v, 0) | (1 << x)
    beyond = 1 << n
    masks = [1 << b for b in range(n.bit_length())]
    if pairs:
        masks += [m1 | m2 for i, m1 in enumerate(masks) for m2 in masks[:i]]
    bit_sets = [(sum(1 << x for x in range(n) if x & m) | beyond,
                 sum(1 << x for x in range(n) if not x & m) | beyond) for m in masks]
    jeq_numbers = [leaves[x][0] for x in hot]
    calls = sorted(weight.items())

    def uniform(s):
        return sum(1 for m in members.values() if s & m) <= 1

    def weight_of(s):
        return sum(c for x, c in calls if s >> x & 1)

    known = {}  # set -> ("exact", cost) or ("above", least cost not excluded)

    def best(s, budget):
        """The least cost for set `s` if it is at most `budget`, else None."""
        if uniform(s):
            return 0
        here = weight_of(s)
        if here == 0:
            return 0
        seen = known.get(s)
        if seen and seen[0] == "exact":
            return seen[1] if seen[1] <= budget else None
        if seen and seen[1] > budget or here > budget:
            return None
        splits = []
        previous = None
        for x in range(n + 1):
            if s >> x & 1:
                if previous is not None and (values[x] != values[previous]
                                             or x in weight or previous in weight):
                    low = s & ((1 << x) - 1)
                    splits.append((low, s & ~low))
                previous = x
        splits += [(s & ~(1 << x), 1 << x) for x in jeq_numbers if s >> x & 1]
        splits += [(s & a, s & b) for a, b in bit_sets if s & a != s and s & b != s]
        found, limit = None, budget - here
        for a, b in splits:
            ca = best(a, limit)
            if ca is None:
                continue
            cb = best(b, limit - ca)
            if cb is None:
                continue
            if found is None or ca + cb < found:
                found = ca + cb
                limit = found - 1
            if limit < 0:
                break
        if found is None:
            known[s] = ("above", budget + 1)
            return None
        known[s] = ("exact", here + found)
        return here + found

    return best((1 << (n + 1)) - 1, best_ranges)


if os.environ.get("JSET"):
    best_ranges = best
    with_bits = bitset_bound(os.environ["JSET"] == "2")
    if with_bits is None:
        print(f"with jset tests: no tree below {best_ranges}")
    else:
        print(f"with jset tests: {with_bits} ({with_bits / prefix[-1]:.4f} per call)")
