#!/usr/bin/env bash
# Runs every cargo-fuzz target for a bounded time (default 60 s each; first argument overrides).
# Needs the nightly toolchain and cargo-fuzz (installed here if missing).
# Crashes are left in fuzz/artifacts/<target>/ and make this script fail.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "==> installing cargo-fuzz"
  cargo install cargo-fuzz --locked
fi
for target in $(cargo fuzz list); do
  echo "==> fuzzing $target for ${seconds}s"
  cargo +nightly fuzz run "$target" -- -max_total_time="$seconds" -rss_limit_mb=4096 2>&1 | tail -n 5
done
