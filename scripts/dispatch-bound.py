#!/usr/bin/env python3
"""Exact lower bound on the `nr` dispatch of a filter's class of trees, for a workload.

Usage: scripts/dispatch-bound.py FILTER.bpf WORKLOAD.json   (x86_64 filters; SECOPT=path to the
binary, default target/release/secopt)

The class: every tree of `jge` splits between the filter's x86_64 number ranges and `jeq` tests of
the workload's numbers, a `jeq` allowed at any depth (after a `jeq` fails, its number is a
don't-care for the rest of that subtree). A subtree whose remaining numbers all get the same
decision function is a leaf. Numbers past the x86_64 table count as one range, which can only
lower the bound. The search is a memoized dynamic program over (range of leaves, numbers already
tested by `jeq`); it returns the least total of workload count x tests over all trees of the class.
This is how docs/benchmarks.md bounds the Firecracker api thread's cost (20 tests for its eight
`common` calls). It is slow (seconds to minutes) and is not part of the test suite.
"""
import json
import os
import subprocess
import sys
from functools import lru_cache

sys.setrecursionlimit(100000)
secopt = os.environ.get("SECOPT", "target/release/secopt")
prog, workload = sys.argv[1], sys.argv[2]
out = subprocess.run([secopt, "analyze", prog, "--format", "json", "--arch", "x86_64"],
                     capture_output=True, text=True, check=True).stdout
arch = json.loads(out)["arches"][0]
# Decision function per number: the action for number-only decisions, the syscall itself when
# the decision reads arguments (no two of those are assumed equal: again only lowers the bound).
target = {s["nr"]: s["name"] if s["depends_on_args"] else "/".join(s["returns"])
          for s in arch["syscalls"]}
values = [target.get(n, "unnamed") for n in range(arch["cache_bitmap"]["table_size"])]
values.append("beyond the table")
nr_of = {s["name"]: s["nr"] for s in arch["syscalls"]}
weight = {}
for entry in json.load(open(workload)).values():
    nr = nr_of[entry["syscall"]]
    weight[nr] = weight.get(nr, 0) + entry["count"]
# Leaves: runs of one decision function; every workload number is a leaf of its own.
leaves = []  # [first number, target, weight]
for n, t in enumerate(values):
    last = leaves[-1] if leaves else None
    if last and last[1] == t and n not in weight and last[0] not in weight:
        continue
    leaves.append([n, t, weight.get(n, 0)])
hot = [i for i, leaf in enumerate(leaves) if leaf[0] in weight]
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
print(f"least weighted dispatch tests: {cost(0, len(leaves) - 1, frozenset())}")
