#!/usr/bin/env bash
# Sets up and runs secopt's whole test suite on a fresh Debian machine with Rust installed.
# Installs the system packages the tests use as oracles (libseccomp for the reference filters;
# runc, bubblewrap and busybox-static for the end-to-end tests, strace to check what record
# counts and what exec --denials names, firejail and chromium for
# filters other generators wrote; those tests skip loudly without them unless
# SECOPT_REQUIRE_E2E=1), then runs every test. Run as root (the kernel-oracle tests install
# seccomp filters in child processes; runc and apt-get need root).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/repair-dev-null.sh

packages=(libseccomp-dev pkg-config runc bubblewrap busybox-static strace firejail chromium)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "==> installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi

# --all-features: the `libseccomp` feature adds libseccomp's programs as benchmark peers.
# The examples as programs first: `cargo test` builds them only as (empty) test harnesses, and
# tests/example_embed.rs runs examples/embed.rs itself.
echo "==> cargo build --examples"
profile=()
for a in "$@"; do
  [ "$a" = "--" ] && break
  [ "$a" = "--release" ] && profile=(--release)
done
cargo build --all-features --examples "${profile[@]}"
echo "==> cargo test"
cargo test --all-features --all-targets "$@"
echo "==> cargo test --doc"
cargo test --all-features --doc
