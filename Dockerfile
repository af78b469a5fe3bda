# Ferry: one image for the api (`server`), the Temporal worker (`worker`) and migrations (`migrate`).
# TypeScript runs through tsx at start (no build step), so the image holds sources and runtime dependencies only.
# Debian, not Alpine: @temporalio/core-bridge ships its native library for glibc.
# The builder console is a static bundle: built in a stage of its own (it needs the dev dependencies),
# only its output is copied into the image.
FROM node:20-bookworm-slim AS console
WORKDIR /build
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY scripts/build-console.js scripts/
COPY console/ console/
RUN node scripts/build-console.js

FROM node:20-bookworm-slim

ENV NODE_ENV=production \
    FERRY_ENV=production \
    NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_FUND=false

WORKDIR /app

# Dependencies first, so a source change reuses this layer. tsx is a runtime dependency; dev tools are left out.
# `prepare` runs scripts/build-console.js, which skips the build when vite (a dev dependency) is absent.
COPY package.json package-lock.json ./
COPY scripts/build-console.js scripts/
RUN npm ci --omit=dev \
    && npm cache clean --force

COPY tsconfig.json ./
COPY bin/ bin/
COPY src/ src/
COPY workflows/ workflows/
COPY activities/ activities/
COPY --from=console /build/console/dist console/dist/

# The workflow code, bundled once here: a worker loads it instead of bundling at every start, and
# never holds the bundler's memory (bench/worker-memory.ts). Fewer glibc malloc arenas keep the
# worker's threads (the Temporal core's, the workflow isolates') from each holding a free list.
RUN node bin/ferry.js bundle-workflows --out /app/workflow-bundle.js
ENV FERRY_WORKFLOW_BUNDLE=/app/workflow-bundle.js \
    MALLOC_ARENA_MAX=2

# The code stays owned by root and read-only to the process; only the data directory is the app's to write.
RUN mkdir -p /app/.data && chown node:node /app/.data
USER node

EXPOSE 8080 8081 8082 8083 8084 8085 9464 9465

# Probes the api (`server`); docker-compose.yml disables it for the worker and the migration.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:8080/v1/health').then((res) => process.exit(res.ok ? 0 : 1), () => process.exit(1))"]

ENTRYPOINT ["node", "bin/ferry.js"]
CMD ["server"]
