#!/usr/bin/env bash
# Times system calls under a stack of filters and under the one filter `secopt optimize`
# joins it into, side by side with no filter and `RET ALLOW`, on this kernel.
#
#   scripts/stack-bench.sh NRS FILTER.bpf...     (filters oldest first, e.g. from `secopt dump`)
#   scripts/stack-bench.sh 10,310 f0.bpf f1.bpf f2.bpf
#
# NRS: comma-separated x86_64 syscall numbers, each called with all-zero arguments (pick
# calls that are harmless with zeros: mprotect(0, 0, 0) is 10; a call the stack denies
# never runs). Prints ns per call, best of 7 rounds of 2,000,000 calls on CPU 0. `secopt
# bench` measures single filters with more care (medians, intervals, decision checks); this
# is the stand-in for stacks, which it does not install yet. Needs gcc; SECOPT=path/to/secopt.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
secopt="${SECOPT:-$here/../target/release/secopt}"
[ $# -ge 2 ] || { sed -n '2,14p' "$0"; exit 2; }
nrs="$1"; shift
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
gcc -O2 -o "$work/timer" "$here/data/stack_timer.c"
printf 'ret ALLOW\n' | "$secopt" asm - -o "$work/allow.bpf"
"$secopt" optimize "$@" -o "$work/joined.bpf" --report >&2
echo "filters: $# ($*)"
printf '%-6s %10s %10s %14s %12s\n' nr none allow "stack of $#" joined
for nr in ${nrs//,/ }; do
  printf '%-6s %10s %10s %14s %12s\n' "$nr" "$("$work/timer" "$nr")" \
    "$("$work/timer" "$nr" "$work/allow.bpf")" "$("$work/timer" "$nr" "$@")" \
    "$("$work/timer" "$nr" "$work/joined.bpf")"
done
echo "(ns per call, best of 7 rounds)"
