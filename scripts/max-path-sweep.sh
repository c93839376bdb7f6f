#!/usr/bin/env bash
# Which `--max-path` bounds two secopt builds answer differently on Firecracker's threads:
# for every thread, --favor, weighting and cost model, the bounds from the default output's
# worst path down to 3 below it. Prints one line per bound whose exit status differs and the
# totals (docs/optimizer.md, "A promised worst case").
# Usage: scripts/max-path-sweep.sh OLD_SECOPT NEW_SECOPT   (from the repository root)
set -euo pipefail
old=$1 new=$2
shared=../shared
fc=$shared/profiles/firecracker/firecracker-x86_64-unknown-linux-musl.json
weightings=("" nginx-wrk gvisor-sentry-postgres redis-benchmark)
tried=0 differ=0
for thread in api vmm vcpu; do
  for favor in balanced speed size; do
    for w in "${weightings[@]}"; do
      weights=()
      [ -n "$w" ] && weights=(--weights "$shared/workloads/$w.strace-c.txt" --skip-unknown)
      for model in allow-cache no-cache; do
        args=("$fc" --thread "$thread" --favor "$favor" --cost-model "$model" "${weights[@]}")
        worst=$("$new" compile "${args[@]}" -o /tmp/max-path-sweep.bpf --no-verify --report \
          --report-format json 2>/dev/null |
          python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["report"]["after"]["max_steps"])')
        for below in 0 1 2 3; do
          bound=$((worst - below))
          rc() { "$1" compile "${args[@]}" --max-path "$bound" -o /tmp/max-path-sweep.bpf \
            --no-verify >/dev/null 2>&1 && echo 0 || echo $?; }
          a=$(rc "$old") b=$(rc "$new")
          tried=$((tried + 1))
          if [ "$a" != "$b" ]; then
            differ=$((differ + 1))
            echo "$thread --favor $favor ${w:-default weights} $model --max-path $bound: old exit $a, new exit $b"
          fi
        done
      done
    done
  done
done
rm -f /tmp/max-path-sweep.bpf
echo "$tried bounds tried, $differ answered differently"
