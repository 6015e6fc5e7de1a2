#!/usr/bin/env bash
# Prints the resident memory of each running stack component and the total (from /proc).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
total=0
for f in "$RUN"/*.pid; do
  pid=$(cat "$f"); name=$(basename "$f" .pid)
  kb=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
  # include children (moto_server and temporal run no workers, but be exact anyway)
  for c in $(pgrep -P "$pid" 2>/dev/null || true); do kb=$((kb + $(awk '/^VmRSS:/ {print $2}' "/proc/$c/status" 2>/dev/null || echo 0))); done
  printf '  %-24s %6d MiB\n' "$name" $((kb / 1024)); total=$((total + kb))
done
printf '  %-24s %6d MiB\n' total $((total / 1024))
