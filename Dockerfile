# Slipway image: the worker (CMD) and the CRD bridge (node dist/starter/bridge/main.js), on Node 26,
# the active LTS, the Node the tests and CI run on (stack/node.sh; README, "Requirements").
# glibc base: @temporalio/core-bridge ships no musl build, so Alpine will not run it.
FROM node:26-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
# What the image runs, no more (tsconfig.build.json): no tests, local stack or benchmarks.
COPY api ./api
COPY shared ./shared
COPY workflows ./workflows
COPY activities ./activities
COPY worker ./worker
COPY starter ./starter
RUN npm run bundle && npm prune --omit=dev

FROM node:26-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
USER node
# /healthz, /readyz, /metrics (SLIPWAY_PROBE_PORT in deploy/); the Temporal SDK's metrics.
EXPOSE 8081 9464
CMD ["node", "--max-old-space-size=128", "--max-semi-space-size=8", "dist/worker/main.js"]
