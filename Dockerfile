# Slipway image: the worker (CMD) and the CRD bridge (node dist/starter/bridge/main.js), on Node 26,
# the active LTS, the Node the tests and CI run on (stack/node.sh; README, "Requirements").
# glibc base: @temporalio/core-bridge ships no musl build, so Alpine will not run it.
FROM node:26-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# npm ci: exactly the committed lock (Node 26's npm accepts it), and fails instead of rewriting it.
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
# What the image runs, no more (tsconfig.build.json): no tests, local stack or benchmarks.
COPY api ./api
COPY kube ./kube
COPY shared ./shared
COPY workflows ./workflows
COPY activities ./activities
COPY worker ./worker
COPY starter ./starter
RUN npm run bundle && npm prune --omit=dev

FROM node:26-bookworm-slim
# docker build --build-arg VERSION=0.1.0 --build-arg REVISION=$(git rev-parse HEAD) \
#   --build-arg SOURCE=<repository URL> (README, "Installing in a cluster").
ARG VERSION=dev
ARG REVISION=unknown
ARG SOURCE=""
LABEL org.opencontainers.image.title="slipway" \
      org.opencontainers.image.description="Cycles and maintains Kubernetes nodes without losing workloads or data, as Temporal workflows." \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="$VERSION" \
      org.opencontainers.image.revision="$REVISION" \
      org.opencontainers.image.source="$SOURCE"
WORKDIR /app
ENV NODE_ENV=production
# Two malloc arenas, not eight per core: the worker's RSS without half-empty arenas (WORKER_ENV in worker/config.ts).
ENV MALLOC_ARENA_MAX=2
# The revision label of slipway_build_info (shared/metrics.ts).
ENV SLIPWAY_REVISION=$REVISION
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
USER node
# /healthz, /readyz, /metrics (SLIPWAY_PROBE_PORT in deploy/); the Temporal SDK's metrics.
EXPOSE 8081 9464
CMD ["node", "--max-old-space-size=128", "--max-semi-space-size=8", "dist/worker/main.js"]
