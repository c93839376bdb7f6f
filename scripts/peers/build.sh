#!/bin/bash
# Rebuilds tests/data/peers/*.bpf with Kafel, minijail and gVisor, gVisor's also from
# Firecracker's filter file in ../shared/profiles/firecracker (not run by the test suite:
# it needs their sources, which CI cannot download; gVisor's comes from the Go module proxy,
# pinned by scripts/peers/gvisor/go.sum). Usage:
#
#   git clone https://github.com/google/kafel    && git -C kafel    checkout 18f207428068a50f2c35706c5d0b21f53c769016
#   git clone https://github.com/google/minijail && git -C minijail checkout 8d20993c7189a948995bd20901abecc041e1a28e
#   apt-get install -y flex bison libcap-dev linux-libc-dev    # and Go 1.26 or newer, for gVisor
#   scripts/peers/build.sh KAFEL_DIR MINIJAIL_DIR [OUT_DIR]
#
# OUT_DIR defaults to tests/data/peers. Both tools compile for this host (x86_64).
set -euo pipefail
kafel=$(realpath "$1")
minijail=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
data=$here/../../tests/data/peers
out=$(realpath "${3:-$data}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

make -C "$kafel" -j2 >/dev/null
gcc -O2 -I "$kafel/include" "$here/kafel-compile.c" "$kafel/libkafel.a" -o "$work/kafel-compile"
for p in docker-allow docker-allow-errno small; do
    "$work/kafel-compile" "$data/$p.kafel" "$out/$p.kafel.bpf"
done

(cd "$minijail" && make -j2 parse_seccomp_policy dump_constants && make constants.json) \
    >/dev/null 2>&1
compile_py() { # POLICY STRATEGY OUT
    python3 "$minijail/tools/compile_seccomp_policy.py" --arch-json "$minijail/constants.json" \
        --optimization-strategy "$2" "$1" "$3"
}
for p in docker-allow small; do
    "$minijail/parse_seccomp_policy" --dump="$out/$p.minijail-c.bpf" "$data/$p.policy"
    compile_py "$data/$p.policy" linear "$out/$p.minijail-py-linear.bpf"
    compile_py "$data/$p.policy" bst "$out/$p.minijail-py-bst.bpf"
done
# The binary tree laid out for each workload: the policy with an `@frequency` file of the
# workload's strace -c counts (tests/data/peers/*.frequency, see the README there).
for w in gvisor-sentry-postgres nginx-wrk redis-benchmark; do
    cp "$data/$w.frequency" "$work/"
    { echo "@frequency ./$w.frequency"; cat "$data/docker-allow.policy"; } > "$work/$w.policy"
    compile_py "$work/$w.policy" bst "$out/docker-allow.minijail-py-bst.$w.bpf"
done
# gVisor's compiler (gvisor.dev/gvisor/pkg/seccomp), syscall numbers from this host's kernel
# headers (scripts/peers/gvisor/main.go).
(cd "$here/gvisor" && go build -o "$work/gvisor-compile" .)
unistd=/usr/include/x86_64-linux-gnu/asm/unistd_64.h
for p in docker-allow small docker-args; do
    "$work/gvisor-compile" "$data/$p.json" "$unistd" "$out/$p.gvisor.bpf"
done
# Firecracker's production filters (argument rules), one program per thread; `.gvisor-hot`
# with gVisor's HotSyscalls set to the conditional syscalls of the thread's probe list
# (scripts/peers/compare.sh): KVM_RUN's ioctl for the vCPU thread, futex and mmap for the others.
firecracker=$here/../../../shared/profiles/firecracker/firecracker-x86_64-unknown-linux-musl.json
for thread in vmm api vcpu; do
    hot=futex,mmap
    [ "$thread" = vcpu ] && hot=ioctl
    "$work/gvisor-compile" -firecracker "$thread" "$firecracker" "$unistd" \
        "$out/firecracker-$thread.gvisor.bpf"
    "$work/gvisor-compile" -firecracker "$thread" -hot "$hot" "$firecracker" "$unistd" \
        "$out/firecracker-$thread.gvisor-hot.bpf"
done
ls -l "$out"/*.bpf
