#!/usr/bin/env python3
"""The large value sets of docs/optimizer.md ("Too long for the kernel"), measured again.

Writes deterministic profiles (a xorshift32 stream, the same on every machine) into a
temporary directory and compiles each with `secopt compile --arch x86_64 --report-format json`
under `/usr/bin/time`, printing one Markdown row per profile: the reference lowering's size,
the output's size and longest path, how it was made, wall time and peak memory (with the
self-check, as `secopt compile` runs by default).

    SECOPT=target/release/secopt python3 scripts/value-sets.py

SECOPT may name any build (an older one, to compare). The profiles:
- `N requests`: `ioctl` allowed for N scattered 32-bit requests, one rule each;
- `S syscalls x 6`: the first S x86_64 syscalls by number (secopt's table), each allowed for
  six values of args[0] when args[1] is above a bound (the profile of
  `compile::tests::many_short_value_sets_too_long_as_trees_are_laid_out_to_fit`);
- `every other syscall + 152 x 5`: see `alternating_profile`, on x86_64, x86 and x32.
"""

import json
import os
import re
import subprocess
import sys
import tempfile

SECOPT = os.environ.get("SECOPT", "target/release/secopt")


def xorshift(seed):
    x = seed & 0xFFFFFFFF
    while True:
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        yield x


def requests_profile(n, seed):
    values, seen = [], set()
    for v in xorshift(seed):
        if v not in seen:
            seen.add(v)
            values.append(v)
        if len(values) == n:
            break
    rules = [
        {"names": ["ioctl"], "action": "SCMP_ACT_ALLOW",
         "args": [{"index": 1, "value": v, "op": "SCMP_CMP_EQ"}]}
        for v in values
    ]
    return {"defaultAction": "SCMP_ACT_ERRNO", "syscalls": rules}


def x86_64_names(tmp):
    """secopt's x86_64 syscall names in number order (from `analyze` of `ret ALLOW`)."""
    path = os.path.join(tmp, "allow.s")
    with open(path, "w") as f:
        f.write("ret ALLOW\n")
    out = subprocess.run([SECOPT, "analyze", path, "--arch", "x86_64", "--format", "json"],
                         capture_output=True, text=True, check=True).stdout
    calls = json.loads(out)["arches"][0]["syscalls"]
    return [c["name"] for c in sorted(calls, key=lambda c: c["nr"])]


def syscalls_profile(count, names):
    rules = []
    for i, name in enumerate(names[:count]):
        for j in range(6):
            rules.append({"names": [name], "action": "SCMP_ACT_ALLOW", "args": [
                {"index": 0, "value": i * 100 + j * 7, "op": "SCMP_CMP_EQ"},
                {"index": 1, "value": j + 1, "op": "SCMP_CMP_GT"}]})
    return {"defaultAction": "SCMP_ACT_ERRNO", "syscalls": rules}


def alternating_profile(checked, names):
    """Every other x86_64 syscall allowed outright; `checked` of the others each allowed for
    five values of args[0] when args[1] is above a bound (the profile of
    `compile::tests::favouring_size_is_tried_when_the_layout_asked_for_is_too_long`)."""
    rules = [{"names": names[0::2], "action": "SCMP_ACT_ALLOW"}]
    for i, name in enumerate(names[1::2][:checked]):
        for j in range(5):
            rules.append({"names": [name], "action": "SCMP_ACT_ALLOW", "args": [
                {"index": 0, "value": i * 100 + j * 7, "op": "SCMP_CMP_EQ"},
                {"index": 1, "value": i + j + 1, "op": "SCMP_CMP_GT"}]})
    return {"defaultAction": "SCMP_ACT_ERRNO", "syscalls": rules}


def measure(label, profile, tmp, arches=("x86_64",)):
    path = os.path.join(tmp, "profile.json")
    with open(path, "w") as f:
        json.dump(profile, f)
    timing = os.path.join(tmp, "time")
    run = subprocess.run(
        ["/usr/bin/time", "-f", "%e %M", "-o", timing, SECOPT, "compile", path,
         *[a for arch in arches for a in ("--arch", arch)],
         "-o", os.path.join(tmp, "out.bpf"), "--report-format", "json"],
        capture_output=True, text=True)
    with open(timing) as f:
        seconds, kb = f.read().split()[-2:]
    if run.returncode != 0:
        error = run.stderr.strip().splitlines()[-1]
        print(f"| {label} | refused: {error} | | | | {seconds} s | {int(kb) // 1024} MB |")
        return
    out = json.loads(run.stdout)[0]
    report = out["report"]
    how = out["method"]
    for note in out["notes"]:
        fit = re.search(r"needs (\d+) instructions, more than.*chains of up to (\d+) values", note)
        if fit:
            how += f", chains of up to {fit.group(2)} (balanced trees: {fit.group(1)})"
        size = re.search(r"favouring (\w+) needs (\d+) instructions, more than", note)
        if size:
            how += f", favouring size ({size.group(1)}: {size.group(2)})"
    print(f"| {label} | {report['before']['length']} | "
          f"{report['after']['length']} | {report['after']['max_steps']} | "
          f"{how} | {seconds} s | {int(kb) // 1024} MB |")


def main():
    print(f"`{SECOPT}`\n")
    print("| profile | reference | instructions | longest path | made by | time | memory |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for n in (1500, 3000, 3500, 3900):
            measure(f"{n} requests", requests_profile(n, 0x9E3779B9 + n), tmp)
        names = x86_64_names(tmp)
        measure("370 syscalls x 6", syscalls_profile(370, names), tmp)
        measure("every other syscall + 152 x 5, x86_64+x86+x32",
                alternating_profile(152, names), tmp, ("x86_64", "x86", "x32"))


if __name__ == "__main__":
    sys.exit(main())
