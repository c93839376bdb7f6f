#!/usr/bin/env bash
# `secopt optimize` on random libseccomp filters (scripts/random-libseccomp-filter.c, seeds
# 1–40, each laid out linear and as a tree: 80 filters): how many come out larger than the
# input under the default balance (fewer instructions per call, more of them), and how many
# --favor size makes smaller, leaves the same, or (never, so far) larger, and for how many
# seeds --favor size gives the two layouts of the same rules different lengths (it should
# not: the rules are the same). Every output is proved equal by the self-check. The figures are in README.md (`secopt optimize`'s row).
# Usage: scripts/optimize-random-libseccomp.sh SECOPT   (needs gcc and libseccomp-dev)
set -euo pipefail
secopt=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gcc -O2 -Wall -o "$work/gen" "$(dirname "$0")/random-libseccomp-filter.c" -lseccomp
length() { echo $(($(stat -c %s "$1") / 8)); }
filters=0 larger=0 size_smaller=0 size_same=0 size_larger=0 layouts_differ=0
for seed in $(seq 1 40); do
  first=
  for level in 1 2; do
    in=$work/s$seed-o$level.bpf
    "$work/gen" "$seed" "$in" "$level"
    "$secopt" optimize "$in" -o "$work/balanced.bpf" 2>/dev/null
    "$secopt" optimize "$in" --favor size -o "$work/size.bpf" 2>/dev/null
    n=$(length "$in") b=$(length "$work/balanced.bpf") s=$(length "$work/size.bpf")
    filters=$((filters + 1))
    [ "$b" -gt "$n" ] && larger=$((larger + 1))
    if [ "$s" -lt "$n" ]; then size_smaller=$((size_smaller + 1))
    elif [ "$s" -eq "$n" ]; then size_same=$((size_same + 1))
    else size_larger=$((size_larger + 1)); echo "--favor size larger: seed $seed level $level, $n -> $s"
    fi
    if [ -z "$first" ]; then first=$s
    elif [ "$s" != "$first" ]; then layouts_differ=$((layouts_differ + 1))
    fi
  done
done
echo "$filters filters: $larger larger than the input balanced;" \
  "--favor size: $size_smaller smaller, $size_same the same length, $size_larger larger;" \
  "the two layouts of one seed's rules give --favor size different lengths for $layouts_differ of 40"
