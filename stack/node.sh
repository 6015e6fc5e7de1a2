#!/usr/bin/env bash
# Prints the bin folder of the Node runtime that the tests, CI and the image use: Node 26, the active
# LTS since October 2026 (Node 24 is in maintenance; 20 is past its end of life). The npm registry
# serves the runtime itself as the package node-linux-<arch>; it is unpacked once into the cache.
#   PATH="$(bash stack/node.sh):$PATH"
set -euo pipefail
version=${SLIPWAY_NODE_VERSION:-26.12.1}
case "$(uname -m)" in x86_64) arch=x64 ;; aarch64|arm64) arch=arm64 ;; *) echo "node.sh: no node-linux package for $(uname -m)" >&2; exit 1 ;; esac
home=${SLIPWAY_HOME:-$HOME/.cache/slipway}
dir="$home/node-v$version-linux-$arch"
if [ ! -x "$dir/bin/node" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "node-linux-$arch@$version" >/dev/null && tar xzf node-linux-*.tgz)
  "$tmp/package/bin/node" --version >/dev/null # a runtime that cannot start is not cached
  mkdir -p "$home" && rm -rf "$dir" && mv "$tmp/package" "$dir"
fi
echo "$dir/bin"
