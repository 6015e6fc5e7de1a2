# Slipway image: the worker (and, with the node-cycling issue, the CRD bridge) on Node 20.
# glibc base: @temporalio/core-bridge ships no musl build, so Alpine will not run it.
FROM node:20-bookworm-slim AS build
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

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
USER node
CMD ["node", "--max-old-space-size=128", "--max-semi-space-size=8", "dist/worker/main.js"]
