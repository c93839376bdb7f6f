#!/bin/bash
# Kafel, minijail, gVisor and libseccomp against secopt on tests/data/peers/docker-allow.json, with
# the shared workloads: size, expected instructions per syscall with and without the allow
# cache, and the worst path, all from `secopt analyze` (instruction counts: machine-independent).
# Then gVisor against secopt on the three threads of Firecracker's filter file, with the probe
# lists the benchmarks weigh them by (libseccomp's rows for these are in docs/benchmarks.md,
# from `cargo bench --bench compare`), and on Docker's argument rules (docker-args.json).
# The peers' programs are the committed ones (scripts/peers/build.sh rebuilds them); libseccomp's
# are built here with the system library. Usage: scripts/peers/compare.sh [SECOPT]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$here/../..
secopt=${1:-$root/target/release/secopt}
data=$root/tests/data/peers
workloads=$root/../shared/workloads
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))["syscalls"][0]["names"]))' \
    "$data/docker-allow.json" > "$work/names.txt"
gcc -O2 "$here/libseccomp-compile.c" -lseccomp -o "$work/libseccomp-compile"
"$work/libseccomp-compile" "$work/names.txt" 1 "$work/libseccomp-linear.bpf"
"$work/libseccomp-compile" "$work/names.txt" 2 "$work/libseccomp-tree.bpf"

row() { # NAME FILE WORKLOAD
    "$secopt" verify "$2" "$data/docker-allow.json" --profile-arch x86_64 >/dev/null || {
        echo "$1: not equal to the profile" >&2
        exit 1
    }
    local worst
    worst=$("$secopt" analyze "$2" --kernel 6.18 --format json |
        python3 -c 'import json,sys; print(max(a["max_steps"] for a in json.load(sys.stdin)["arches"]))')
    "$secopt" analyze "$2" --workload "$3" --skip-unknown --kernel 6.18 --format json |
        python3 -c '
import json, sys
d = json.load(sys.stdin)
t = d["totals"]
cells = [sys.argv[1], str(d["length"]), "%.2f" % t["cost_with_cache"],
         "%.2f" % t["cost_without_cache"], sys.argv[2]]
print("| " + " | ".join(cells) + " |")' "$1" "$worst"
}

for w in gvisor-sentry-postgres nginx-wrk redis-benchmark; do
    W=$workloads/$w.strace-c.txt
    echo
    echo "### $w"
    echo
    echo "| compiler | instructions | per syscall, cache | per syscall, no cache | worst path |"
    echo "|---|---|---|---|---|"
    for favor in balanced speed; do
        "$secopt" compile "$data/docker-allow.json" --arch x86_64 --weights "$W" --skip-unknown \
            --cost-model no-cache --favor "$favor" -o "$work/secopt-$favor.bpf" 2>/dev/null
    done
    "$secopt" optimize "$data/docker-allow.kafel.bpf" --weights "$W" --skip-unknown \
        --cost-model no-cache -o "$work/secopt-kafel.bpf" 2>/dev/null
    row libseccomp-linear "$work/libseccomp-linear.bpf" "$W"
    row libseccomp-tree "$work/libseccomp-tree.bpf" "$W"
    row Kafel "$data/docker-allow.kafel.bpf" "$W"
    row "minijail (C)" "$data/docker-allow.minijail-c.bpf" "$W"
    row "minijail (Python, linear)" "$data/docker-allow.minijail-py-linear.bpf" "$W"
    row "minijail (Python, bst)" "$data/docker-allow.minijail-py-bst.bpf" "$W"
    row "minijail (Python, bst, @frequency)" "$data/docker-allow.minijail-py-bst.$w.bpf" "$W"
    row "gVisor (pkg/seccomp)" "$data/docker-allow.gvisor.bpf" "$W"
    row "secopt compile --weights" "$work/secopt-balanced.bpf" "$W"
    row "secopt compile --weights --favor speed" "$work/secopt-speed.bpf" "$W"
    row "secopt optimize Kafel's --weights" "$work/secopt-kafel.bpf" "$W"
done

# Firecracker's threads: the vCPU thread weighed by the `firecracker-vcpu` probe list, the others
# by the `common` list less the calls the thread's filter never allows (as `cargo bench --bench
# compare` weighs them).
firecracker=$root/../shared/profiles/firecracker/firecracker-x86_64-unknown-linux-musl.json
"$secopt" bench --list-probes --probe common --format json > "$work/common.json"
"$secopt" bench --list-probes --probe firecracker-vcpu --format json > "$work/vcpu.json"
fc_row() { # NAME FILE WORKLOAD POLICY (verified against it on x86_64's syscalls)
    "$secopt" verify "$2" "$4" --profile-arch x86_64 --arch x86_64 \
        --nr 0..=0x3fffffff >/dev/null || {
        echo "$1: not equal to $4 on x86_64's syscalls" >&2
        exit 1
    }
    "$secopt" analyze "$2" --workload "$3" --skip-unknown --kernel 6.18 --format json | python3 -c '
import json, sys
d = json.load(sys.stdin)
t = d["totals"]
cells = [sys.argv[1], str(d["length"]), "%.2f" % t["cost_with_cache"],
         "%.2f" % t["cost_without_cache"], str(t["max_steps"])]
print("| " + " | ".join(cells) + " |")' "$1"
}
for thread in vmm api vcpu; do
    "$secopt" compile "$firecracker" --thread "$thread" --arch x86_64 --no-optimize -q \
        -o "$work/$thread-ref.bpf"
    if [ "$thread" = vcpu ]; then
        W=$work/vcpu.json
    else
        W=$work/$thread.json
        "$secopt" analyze "$work/$thread-ref.bpf" --workload "$work/common.json" --kernel 6.18 \
            --format json | python3 -c '
import json, sys
d = json.load(sys.stdin)
common = json.load(open(sys.argv[1]))
allowed = {e["label"] for e in d["entries"] if "ALLOW" in e["actions"]}
json.dump({k: v for k, v in common.items() if k in allowed}, sys.stdout, indent=1)' \
            "$work/common.json" > "$W"
    fi
    "$secopt" compile "$firecracker" --thread "$thread" --arch x86_64 --weights "$W" -q \
        -o "$work/$thread-secopt.bpf"
    "$secopt" optimize "$data/firecracker-$thread.gvisor.bpf" --weights "$W" 2>/dev/null \
        -o "$work/$thread-secopt-gvisor.bpf"
    echo
    echo "### Firecracker $thread thread ($(python3 -c 'import json,sys; print(", ".join(json.load(open(sys.argv[1]))))' "$W"))"
    echo
    echo "| compiler | instructions | per syscall, cache | per syscall, no cache | worst path |"
    echo "|---|---|---|---|---|"
    P=$firecracker:$thread
    fc_row "gVisor (pkg/seccomp)" "$data/firecracker-$thread.gvisor.bpf" "$W" "$P"
    fc_row "gVisor, HotSyscalls" "$data/firecracker-$thread.gvisor-hot.bpf" "$W" "$P"
    fc_row "secopt compile --no-optimize" "$work/$thread-ref.bpf" "$W" "$P"
    fc_row "secopt compile --weights" "$work/$thread-secopt.bpf" "$W" "$P"
    fc_row "secopt optimize gVisor's --weights" "$work/$thread-secopt-gvisor.bpf" "$W" "$P"
done

# Docker's argument rules (tests/data/peers/docker-args.json), with the shared workloads.
P=$data/docker-args.json
"$secopt" compile "$P" --arch x86_64 --no-optimize -q -o "$work/args-ref.bpf"
for w in gvisor-sentry-postgres nginx-wrk redis-benchmark; do
    W=$workloads/$w.strace-c.txt
    "$secopt" compile "$P" --arch x86_64 --weights "$W" --skip-unknown -q -o "$work/args.bpf"
    "$secopt" optimize "$data/docker-args.gvisor.bpf" --weights "$W" --skip-unknown 2>/dev/null \
        -o "$work/args-gvisor.bpf"
    echo
    echo "### docker-args.json, $w"
    echo
    echo "| compiler | instructions | per syscall, cache | per syscall, no cache | worst path |"
    echo "|---|---|---|---|---|"
    fc_row "gVisor (pkg/seccomp)" "$data/docker-args.gvisor.bpf" "$W" "$P"
    fc_row "secopt compile --no-optimize" "$work/args-ref.bpf" "$W" "$P"
    fc_row "secopt compile --weights" "$work/args.bpf" "$W" "$P"
    fc_row "secopt optimize gVisor's --weights" "$work/args-gvisor.bpf" "$W" "$P"
done
