#!/bin/bash
# Boot a tiny microVM under a Firecracker filter file and report what each thread ran under.
#
#   scripts/firecracker/boot.sh FIRECRACKER FILTER_FILE|none [GUEST.elf]
#
# Starts FIRECRACKER with `--seccomp-filter FILTER_FILE` (or `--no-seccomp`), configures and
# starts a microVM over the API socket (curl), lists each thread's `Seccomp:` mode half a
# second in, waits for the guest to reset, and prints Firecracker's exit status and the lines
# of its log that matter: the guest's serial output ("Hi", "Bye") and any "bad syscall".
# The guest defaults to the one tiny_guest.py writes. Needs /dev/kvm and root. Firecracker
# itself is not built here: see the README's Firecracker section for the releases this was
# run with.
set -u
FC=$1; FILTER=$2
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
GUEST=${3:-$DIR/guest.elf}
[ -e "$GUEST" ] || python3 "$(dirname "$0")/tiny_guest.py" "$GUEST"
SOCK=$DIR/api.sock
if [ "$FILTER" = none ]; then seccomp=(--no-seccomp); else seccomp=(--seccomp-filter "$FILTER"); fi
"$FC" --api-sock "$SOCK" "${seccomp[@]}" > "$DIR/log" 2>&1 &
pid=$!
for _ in $(seq 50); do [ -S "$SOCK" ] && break; sleep 0.1; done
put() {
  curl -s -o /dev/null -w "PUT /$1 %{http_code}\n" --unix-socket "$SOCK" -X PUT \
    "http://localhost/$1" -H 'Content-Type: application/json' -d "$2"
}
put boot-source "{\"kernel_image_path\":\"$GUEST\",\"boot_args\":\"console=ttyS0\"}"
put machine-config '{"vcpu_count":1,"mem_size_mib":128}'
put actions '{"action_type":"InstanceStart"}'
sleep 0.5
for t in /proc/$pid/task/*; do
  echo "thread $(cat "$t/comm" 2>/dev/null): $(grep Seccomp: "$t/status" 2>/dev/null | tr -d '\t')"
done
for _ in $(seq 150); do kill -0 $pid 2>/dev/null || break; sleep 0.2; done
kill $pid 2>/dev/null
wait $pid
echo "firecracker exit status: $?"
grep -a -E "^(Hi|Bye)$|bad syscall|exiting" "$DIR/log"
