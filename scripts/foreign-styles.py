#!/usr/bin/env python3
"""`secopt optimize` on filters laid out the way other generators lay them out.

Usage: scripts/foreign-styles.py [STYLE,...]   (from the repository root; ../shared beside it)
Environment: SECOPT=path to the binary (default target/release/secopt); OUT=work directory
(default a new temporary one, kept).

Generates programs in the shapes of six generators (written from their documented output
shapes, not from their code): gVisor (a binary search tree of `jeq`/`jgt` per number, a few
hot `jeq`s first, 64-bit argument checks as hi/lo pairs), Chromium's bpf_dsl (an x32 `jset`
rejection, a `jge` search tree, TRAP/TRACE/ERRNO leaves), minijail and OpenSSH (linear
`jeq` chains, argument checks that reload `nr`, masked compares), systemd (one block per arch
falling through to the next, an ERRNO deny-list) and a hand-written one using scratch memory
and X. Far jumps go through `ja`, as the generators' own code does. For 1-3 arches, 10-300
syscalls and two seeds each, it runs `optimize` three ways (default, `--favor size`, the nginx
workload) and checks each output independently: `secopt verify` against the input, and
`secopt analyze`'s cacheable counts per arch against the input's. It prints one line per
style and mode, the instructions and `ja` over all outputs, then every row with a failure (exit status, verify, a cacheable syscall lost,
a `--favor size` output larger than its input, more than 5 s). The cost columns are
instructions per syscall without the allow cache (every call runs the filter), averaged as
ratios over the runs; "worst longer" and "larger" count the runs whose worst path or size grew.
"""
import json
import os
import random
import subprocess
import sys
import tempfile
import time

SECOPT = os.environ.get("SECOPT", "target/release/secopt")
WORKLOAD = "../shared/workloads/nginx-wrk.strace-c.txt"
ARCH = {"x86_64": "AUDIT_ARCH_X86_64", "x86": "AUDIT_ARCH_I386", "aarch64": "AUDIT_ARCH_AARCH64"}

class P:
    def __init__(s): s.lines=[]; s.n=0
    def l(s, label): s.lines.append(f"{label}:")
    def i(s, text): s.lines.append("    "+text)
    def text(s): return "\n".join(s.lines)+"\n"

def nrs(rng, k, arch):
    return sorted(rng.sample(range(0, 440), k))

def argcheck(p, rng, ok, bad):
    """An argument check: jumps to ok or bad."""
    a = rng.randrange(6)
    kind = rng.randrange(4)
    if kind == 0:  # 64-bit equality, hi then lo (gVisor / Chromium)
        v = rng.choice([0, 1, 2, 0x10, 0x5401, 0x8000_0000_0000_0001, 0xffff_ffff_ffff_ffff])
        p.i(f"ld [args[{a}].hi]")
        p.i(f"jeq #{v>>32}, next, {bad}")
        p.i(f"ld [args[{a}].lo]")
        p.i(f"jeq #{v & 0xffffffff}, {ok}, {bad}")
    elif kind == 1:  # masked: no bits outside mask (OpenSSH mmap/mprotect)
        m = rng.choice([0x3, 0x7, 0x1000, 0x80000])
        p.i(f"ld [args[{a}].lo]")
        p.i(f"and #{(~m) & 0xffffffff}")
        p.i(f"jeq #0, {ok}, {bad}")
    elif kind == 2:  # jset
        p.i(f"ld [args[{a}].lo]")
        p.i(f"jset #{rng.choice([1,4,0x80,0x800])}, {bad}, {ok}")
    else:  # value set, linear
        p.i(f"ld [args[{a}].lo]")
        vals = rng.sample(range(0, 40), rng.randrange(2, 6))
        for v in vals:
            p.i(f"jeq #{v}, {ok}")
        p.i(f"ja {bad}")

def chromium(rng, arches, k):
    p = P(); lab = [0]
    def L(): lab[0]+=1; return f"c{lab[0]}"
    p.i("ld [arch]")
    blocks = []
    for ai, a in enumerate(arches):
        b = L(); blocks.append((a, b))
        p.i(f"jeq #{ARCH[a]}, next, +1"); p.i(f"ja {b}")
    p.i("ret KILL_PROCESS")
    for a, b in blocks:
        p.l(b)
        p.i("ld [nr]")
        if a == "x86_64":
            p.i("jset #0x40000000, next, +1"); p.i("ja x32bad")  # Chromium rejects x32
        nums = nrs(rng, k, a)
        # leaves: ranges between numbers; each listed number gets an action
        acts = {}
        for n in nums:
            r = rng.random()
            acts[n] = "ALLOW" if r < 0.6 else ("ERRNO(1)" if r < 0.75 else ("TRAP(%d)" % rng.randrange(1,50) if r < 0.85 else ("TRACE(3)" if r < 0.9 else "ARGS")))
        default = "TRAP(0)"
        # binary search over boundaries
        def bs(lo, hi, items):
            # items: sorted list of numbers in [lo, hi]
            if not items:
                p.i(f"ret {default}"); return
            if len(items) == 1:
                n = items[0]
                t = L(); f = L()
                p.i(f"jeq #{n}, {t}, {f}")
                p.l(t)
                if acts[n] == "ARGS":
                    ok, bad = L(), L()
                    argcheck(p, rng, ok, bad)
                    p.l(ok); p.i("ret ALLOW"); p.l(bad); p.i("ret ERRNO(1)")
                else:
                    p.i(f"ret {acts[n]}")
                p.l(f); p.i(f"ret {default}")
                return
            mid = len(items)//2
            right = L()
            if k > 40: p.i(f"jge #{items[mid]}, next, +1"); p.i(f"ja {right}")
            else: p.i(f"jge #{items[mid]}, {right}, next")
            bs(lo, items[mid]-1, items[:mid])
            p.l(right)
            bs(items[mid], hi, items[mid:])
        bs(0, 0xffffffff, nums)
    p.l("x32bad"); p.i("ret ERRNO(38)")
    return p.text()

def gvisor(rng, arches, k):
    p = P(); lab=[0]
    def L(): lab[0]+=1; return f"g{lab[0]}"
    p.i("ld [arch]")
    blocks=[]
    for a in arches:
        b=L(); blocks.append((a,b)); p.i(f"jeq #{ARCH[a]}, next, +1"); p.i(f"ja {b}")
    p.i("ret KILL_PROCESS")
    for a,b in blocks:
        p.l(b); p.i("ld [nr]")
        nums = nrs(rng, k, a)
        acts = {n: ("ALLOW" if rng.random()<0.7 else "ARGS") for n in nums}
        # hot fast path: a few jeq first
        for n in rng.sample(nums, min(3, len(nums))):
            if acts[n]=="ALLOW": p.i(f"jeq #{n}, next, +1"); p.i("ja allowall")
        def bst(items):
            if not items:
                p.i("ret KILL_PROCESS"); return
            mid=len(items)//2; n=items[mid]
            hit, gt = L(), L()
            if k > 40:
                p.i(f"jeq #{n}, next, +1"); p.i(f"ja {hit}")
                p.i(f"jgt #{n}, next, +1"); p.i(f"ja {gt}")
            else:
                p.i(f"jeq #{n}, {hit}")
                p.i(f"jgt #{n}, {gt}")
            bst(items[:mid])
            p.l(hit)
            if acts[n]=="ARGS":
                ok, bad = L(), L()
                # several alternative rules: each a 64-bit check
                for _ in range(rng.randrange(1,3)):
                    nxt=L(); argcheck(p, rng, ok, nxt); p.l(nxt)
                p.i("ret TRAP")
                p.l(ok); p.i("ret ALLOW")
            else:
                p.i("ret ALLOW")
            p.l(gt)
            bst(items[mid+1:])
        bst(nums)
    p.l("allowall"); p.i("ret ALLOW")
    return p.text()

def linear_allow_chain(p, rng, nums, L, plain_share):
    """`jeq nr; ret ALLOW` pairs (minijail, OpenSSH); a share of the numbers get an argument
    check instead, after which `nr` is loaded again; KILL_PROCESS at the end."""
    for n in nums:
        if rng.random() < plain_share:
            p.i(f"jeq #{n}, next, +1"); p.i("ret ALLOW")
        else:
            skip = L(); p.i(f"jeq #{n}, next, {skip}")
            ok, bad = L(), L(); argcheck(p, rng, ok, bad)
            p.l(ok); p.i("ret ALLOW"); p.l(bad); p.i("ret KILL_PROCESS")
            p.l(skip); p.i("ld [nr]")
    p.i("ret KILL_PROCESS")

def minijail(rng, arches, k):
    p=P(); lab=[0]
    def L(): lab[0]+=1; return f"m{lab[0]}"
    a=arches[0]
    p.i("ld [arch]"); p.i(f"jeq #{ARCH[a]}, next, +1"); p.i("ja body"); p.i("ret KILL_PROCESS")
    p.l("body"); p.i("ld [nr]")
    linear_allow_chain(p, rng, nrs(rng, k, a), L, 0.8)
    return p.text()

def openssh(rng, arches, k):
    p=P(); lab=[0]
    def L(): lab[0]+=1; return f"o{lab[0]}"
    a=arches[0]
    p.i("ld [arch]"); p.i(f"jeq #{ARCH[a]}, +1, next"); p.i("ret KILL_PROCESS")
    p.i("ld [nr]")
    nums=nrs(rng,k,a)
    for n in nums[:3]:
        p.i(f"jeq #{n}, next, +1"); p.i("ret ERRNO(13)")
    linear_allow_chain(p, rng, nums[3:], L, 0.85)
    return p.text()

def systemd(rng, arches, k):
    """One block per arch, each falling through to the next arch check; ERRNO deny-list."""
    p=P(); lab=[0]
    def L(): lab[0]+=1; return f"s{lab[0]}"
    nums_all=nrs(rng,k,arches[0])
    for a in arches:
        nb=L()
        p.i("ld [arch]"); p.i(f"jeq #{ARCH[a]}, next, {nb}")
        p.i("ld [nr]")
        if a=="x86_64": p.i(f"jge #0x40000000, {nb}")
        for n in nums_all:
            e=rng.choice([1,1,1,13,38])
            p.i(f"jeq #{n}, next, +1"); p.i(f"ret ERRNO({e})")
        p.l(nb)
    p.i("ret ALLOW")
    return p.text()

def scratch(rng, arches, k):
    """Hand-written: stores nr in M[0], checks args into X, reloads."""
    p=P()
    a=arches[0]
    p.i("ld [arch]"); p.i(f"jeq #{ARCH[a]}, next, kill")
    p.i("ld [nr]"); p.i("st M[0]"); p.i("tax")
    for n in nrs(rng,k,a):
        p.i("txa")
        if rng.random()<0.7:
            p.i(f"jeq #{n}, allow")
        else:
            sk=f"h{n}"
            p.i(f"jeq #{n}, next, {sk}")
            p.i("ld [args[0].lo]"); p.i("st M[1]"); p.i("ld M[1]"); p.i("jeq #0, allow, kill")
            p.l(sk); p.i("ld M[0]"); p.i("tax")
    p.i("ret ERRNO(1)")
    p.l("allow"); p.i("ret ALLOW")
    p.l("kill"); p.i("ret KILL_PROCESS")
    return p.text()

STYLES = dict(chromium=chromium, gvisor=gvisor, minijail=minijail, openssh=openssh, systemd=systemd, scratch=scratch)


def run(args, timeout=300):
    t = time.time()
    try:
        r = subprocess.run([SECOPT] + args, capture_output=True, text=True, timeout=timeout)
        return r.returncode, r.stdout, r.stderr, time.time() - t
    except subprocess.TimeoutExpired:
        return "timeout", "", "", time.time() - t


def main():
    styles = sys.argv[1].split(",") if len(sys.argv) > 1 else list(STYLES)
    out_dir = os.environ.get("OUT") or tempfile.mkdtemp(prefix="secopt-foreign-")
    os.makedirs(out_dir, exist_ok=True)
    rows, skipped = [], []
    for style in styles:
        for arches in (["x86_64"], ["x86_64", "x86"], ["aarch64"], ["x86_64", "x86", "aarch64"]):
            if style in ("minijail", "openssh", "scratch") and len(arches) > 1:
                continue
            for k in (10, 40, 120, 300):
                for seed in (1, 2):
                    name = os.path.join(out_dir, f"{style}_{'+'.join(arches)}_{k}_{seed}")
                    with open(name + ".s", "w") as f:
                        f.write(STYLES[style](random.Random(seed), arches, k))
                    rc, _, err, _ = run(["asm", name + ".s", "-o", name + ".bpf"])
                    if rc != 0:  # over 4096 instructions: not a filter the kernel loads
                        skipped.append((name, err.strip().splitlines()[-1][:120]))
                        continue
                    before = json.loads(run(["analyze", name + ".bpf", "--format", "json"])[1])
                    workload = ["--weights", WORKLOAD, "--skip-unknown", "--arch", arches[0]]
                    for mode, extra in (("default", []), ("size", ["--favor", "size"]),
                                        ("nginx", workload)):
                        out = f"{name}.{mode}.bpf"
                        rc, so, err, dt = run(["optimize", name + ".bpf", "-o", out, "--report",
                                               "--format", "json"] + extra)
                        row = dict(case=os.path.basename(name), style=style, mode=mode, t=dt)
                        rows.append(row)
                        if rc != 0:
                            row["fail"] = [f"exit {rc}: {err.strip()[:200]}"]
                            continue
                        doc = json.loads(so)
                        b, a = doc["report"]["before"], doc["report"]["after"]
                        row.update(n=(b["length"], a["length"]),
                                   cost=(b["cost_without_cache"], a["cost_without_cache"]),
                                   worst=(b["max_steps"], a["max_steps"]),
                                   method=doc["method"])
                        with open(out, "rb") as f:
                            raw = f.read()
                        # `ja` (code 0x05) in the output: jumps the layout could not avoid.
                        row["ja"] = sum(1 for i in range(0, len(raw), 8)
                                        if raw[i] | raw[i + 1] << 8 == 0x05)
                        fail = []
                        vrc = run(["verify", name + ".bpf", out])[0]
                        if vrc != 0:
                            fail.append(f"verify exit {vrc}")
                        after = json.loads(run(["analyze", out, "--format", "json"])[1])
                        for x, y in zip(before["arches"], after["arches"]):
                            if y["cacheable_count"] < x["cacheable_count"]:
                                fail.append(f"{x['arch']} cacheable {x['cacheable_count']} -> {y['cacheable_count']}")
                        # Only `--favor size` promises no larger program (the others may
                        # add a test where the weights say it pays).
                        if mode == "size" and a["length"] > b["length"]:
                            fail.append(f"larger {b['length']} -> {a['length']}")
                        if dt > 5:
                            fail.append(f"{dt:.1f} s")
                        row["fail"] = fail
    print(f"work directory: {out_dir}")
    print(f"{'style':9} {'mode':8} {'runs':>4} {'size after/before':>18} {'cost after/before':>18} "
          f"{'worst longer':>12} {'larger':>6} {'lifted':>6} {'slowest':>8}")
    for style in styles:
        for mode in ("default", "size", "nginx"):
            rs = [r for r in rows if r["style"] == style and r["mode"] == mode and "n" in r]
            if not rs:
                continue
            size = sum(r["n"][1] / r["n"][0] for r in rs) / len(rs)
            cost = sum(r["cost"][1] / max(r["cost"][0], 1e-9) for r in rs) / len(rs)
            longer = sum(r["worst"][1] > r["worst"][0] for r in rs)
            larger = sum(r["n"][1] > r["n"][0] for r in rs)
            lifted = sum(r["method"] == "lifted" for r in rs)
            slowest = max(r["t"] for r in rs)
            print(f"{style:9} {mode:8} {len(rs):4} {size:18.2f} {cost:18.2f} {longer:12} "
                  f"{larger:6} {lifted:6} {slowest:7.2f}s")
    done = [r for r in rows if "n" in r]
    print(f"{sum(r['n'][1] for r in done)} instructions in all outputs, "
          f"{sum(r['ja'] for r in done)} of them `ja`")
    failed = [r for r in rows if r.get("fail")]
    print(f"{len(rows)} runs, {len(failed)} with a failure; {len(skipped)} programs over the "
          "kernel's limits skipped")
    for r in failed:
        print(f"  {r['case']} {r['mode']}: {'; '.join(r['fail'])}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
