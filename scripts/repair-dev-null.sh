#!/usr/bin/env bash
# Makes sure /dev/null is the null device before cargo runs.
#
# cargo hands /dev/null to rustc as stdin when it probes the target (`rustc - --print=cfg ...`)
# and as stderr to build-script probes. If /dev/null is a regular file (something renamed or
# copied a file over it; secopt before this fix did so for `-o /dev/null` run as root), the probe
# reads whatever was last written there and fails with "failed to run `rustc` to learn about
# target-specific information", a failure cargo then caches in target/.rustc_info.json.
# As root this recreates the device (and drops that cache); otherwise it stops with the reason.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -c /dev/null ]; then
  exit 0
fi
echo "!! /dev/null is not a character device:" >&2
ls -l /dev/null >&2 || true
if [ "$(id -u)" != 0 ]; then
  echo "!! cargo's probes read it; recreate it as root: rm -f /dev/null && mknod -m 666 /dev/null c 1 3" >&2
  exit 1
fi
rm -f /dev/null
mknod -m 666 /dev/null c 1 3
rm -f "${CARGO_TARGET_DIR:-target}/.rustc_info.json"
echo "!! recreated /dev/null as the null device (c 1 3)" >&2
