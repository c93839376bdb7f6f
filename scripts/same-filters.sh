#!/usr/bin/env bash
# Whether two secopt builds write the same filters: every profile of ../shared/profiles (OCI
# ones for five arch sets, Firecracker's for each thread) × --favor (default, size, speed) ×
# six weightings or bounds (default, nginx's and redis's workloads, --cost-model no-cache,
# --max-path 16 and 40), compiled with `--no-verify --emit asm` by each build. Prints one line
# per configuration whose output, or refusal, or exit status differs, then the totals. A change meant not
# to alter any filter (a refactor, a speed-up) shows "0 differ" here (docs/benchmarks.md).
# Usage: scripts/same-filters.sh OLD_SECOPT NEW_SECOPT   (from the repository root)
set -euo pipefail
old=$1 new=$2
shared=../shared
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
arch_sets=("" "x86_64 x86 x32" "aarch64" "x86" "s390x ppc64le riscv64")
# The workloads were recorded on x86_64: other arches leave out the names they lack.
options=("" "--weights $shared/workloads/nginx-wrk.strace-c.txt --skip-unknown"
  "--weights $shared/workloads/redis-benchmark.strace-c.txt --skip-unknown"
  "--cost-model no-cache" "--max-path 16" "--max-path 40")
tried=0 differ=0 refused=0
# Compiles the input "$@" (a profile and its arch or thread options) every way, with both builds.
compare() {
  for favor in "" size speed; do
    favor_args=()
    [ -n "$favor" ] && favor_args=(--favor "$favor")
    for option in "${options[@]}"; do
      # shellcheck disable=SC2206 # the options are words, their paths have no spaces
      args=("$@" "${favor_args[@]}" $option --no-verify --emit asm)
      rc() { "$1" compile "${args[@]}" -o "$work/$2.out" 2>"$work/$2.err" && echo 0 || echo $?; }
      a=$(rc "$old" old) b=$(rc "$new" new)
      tried=$((tried + 1))
      [ "$b" != 0 ] && refused=$((refused + 1))
      # A filter both wrote must be the same; a refusal both gave, with the same message.
      same=out
      [ "$a" != 0 ] && [ "$b" != 0 ] && same=err
      touch "$work/old.$same" "$work/new.$same"
      if [ "$a" != "$b" ] || ! cmp -s "$work/old.$same" "$work/new.$same"; then
        differ=$((differ + 1))
        echo "${args[*]}: old exit $a, new exit $b, outputs differ"
      fi
      rm -f "$work"/old.* "$work"/new.*
    done
  done
}
for profile in "$shared"/profiles/oci/*.json; do
  for arches in "${arch_sets[@]}"; do
    arch_args=()
    for a in $arches; do arch_args+=(--arch "$a"); done
    compare "$profile" "${arch_args[@]}"
  done
done
# A Firecracker file is written for one arch: each thread's filter, for it.
for profile in "$shared"/profiles/firecracker/*.json; do
  for thread in vmm api vcpu; do
    compare "$profile" --thread "$thread"
  done
done
echo "$tried configurations, $differ differ, $refused refused by the new build"
