#!/usr/bin/env bash
# Sets up and runs secopt's whole test suite on a fresh Debian machine with Rust installed.
# Installs the system packages the tests use as oracles (libseccomp for the reference filters),
# then runs every test. Run as root (the kernel-oracle tests install seccomp filters in child
# processes; apt-get needs root).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(libseccomp-dev pkg-config)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "==> installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi

echo "==> cargo test"
cargo test --all-targets "$@"
echo "==> cargo test --doc"
cargo test --doc
