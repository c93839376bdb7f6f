#!/bin/bash
# The `--favor size` table of docs/optimizer.md ("Favouring size"): every profile of the
# corpus with something to gain, on x86_64+x86+x32 and aarch64, and Firecracker's three
# x86_64 threads, compiled with `--favor balanced` and `--favor size` (default weights, the
# allow-cache model). Each cell: instructions / instructions per call with the allow cache /
# without it / worst-case path, then the self-check's verdict.
#
# Usage: cargo build --release && scripts/favor-size-table.sh
# Environment: SECOPT=path to the binary (default target/release/secopt); SHARED=the shared
# directory (default ../shared).
set -euo pipefail
cd "$(dirname "$0")/.."
S=${SECOPT:-target/release/secopt}
P=${SHARED:-../shared}/profiles
out=$(mktemp)
trap 'rm -f "$out"' EXIT

cell() {
  "$S" compile "$@" --report --report-format json -o "$out" 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)[0]
r = d["report"]["after"]
cells = (r["length"], r["cost_with_cache"], r["cost_without_cache"], r["max_steps"])
print("%d / %.2f / %.2f / %d (%s)" % (cells + (d["verification"]["status"],)))'
}

row() {
  local label=$1
  shift
  echo "| $label | $(cell "$@" --favor balanced) | $(cell "$@" --favor size) |"
}

echo "| filter | balanced | size |"
echo "|---|---|---|"
for f in docker-default podman-containers-common-default runc-integration-seccomp_syscall_test1 \
  seccompagent-notify-dangerous spo-nginx-1.19.1; do
  row "$f · x86_64+x86+x32" "$P/oci/$f.json" --arch x86_64 --arch x86 --arch x32
  row "$f · aarch64" "$P/oci/$f.json" --arch aarch64
done
for t in vmm api vcpu; do
  row "Firecracker x86_64 $t" "$P/firecracker/firecracker-x86_64-unknown-linux-musl.json" --thread "$t"
done
