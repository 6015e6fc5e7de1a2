#!/usr/bin/env bash
# npm run release:manifests: one file per install, with the image tag set from package.json's version.
#   dist/release/install.yaml             deploy/ (namespace, CRDs, admission policies, RBAC, worker, bridge)
#   dist/release/install-monitoring.yaml  deploy/components/monitoring (ServiceMonitors, PrometheusRule, dashboard)
# SLIPWAY_IMAGE names the image repository (default: slipway, as in deploy/kustomization.yaml).
# test/integration/release.test.ts renders both and applies them server-side (dry run) to the stack.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(node -p "require('./package.json').version")
image="${SLIPWAY_IMAGE:-slipway}"
out=dist/release
overlay="$out/overlay"
rm -rf "$out"; mkdir -p "$overlay"
# An overlay inside the tree (kustomize loads bases by relative path only).
cat > "$overlay/kustomization.yaml" <<EOT
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [../../../deploy]
images:
  - { name: slipway, newName: "$image", newTag: "$version" }
EOT
kubectl kustomize "$overlay" > "$out/install.yaml"
kubectl kustomize deploy/monitoring > "$out/install-monitoring.yaml"
rm -rf "$overlay"
echo "$out/install.yaml $out/install-monitoring.yaml ($image:$version)"
