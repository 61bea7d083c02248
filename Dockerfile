# syntax=docker/dockerfile:1
# extauth image: TypeScript compiled in a build stage, run from dist/ with production dependencies only.
# Node 22 (LTS): the version the project supports and tests on (engines in package.json, .node-version).
ARG NODE_IMAGE=node:22-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# the build's second step copies src/'s Lua files into dist/ (tsc emits only what it compiles)
COPY scripts/copy-lua.ts ./scripts/
RUN npm run build

# A separate stage so the runtime layer holds no compiler, test runner or other dev dependency.
FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    ADMIN_PORT=8081 \
    RULES_DIR=/app/rules \
    COMPENSATION_JOURNAL_DIR=/app/var \
    STANDIN_JOURNAL_DIR=/app/var/standin
WORKDIR /app
# Owned by root and not writable by the process: the service never writes to its own files.
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY rules ./rules
# the pages the API reference (/admin/docs) links to, served by the admin listener as this version has them
COPY README.md ./
COPY docs ./docs
# The one place the process writes: its journal of deadline compensations not yet taken by Redis. Mount a
# volume here so a restarted container sends them again (docs/development/money.md).
RUN mkdir -p /app/var && chown node:node /app/var
# The command line on PATH: `docker run --rm IMAGE extauth rules check /app/rules` (docs/rules/cli.md).
RUN chmod 755 /app/dist/cli/main.js && ln -s /app/dist/cli/main.js /usr/local/bin/extauth
VOLUME /app/var
USER node
# 8080: the platform's endpoint and health; 8081: admin API and metrics (keep it off public networks).
EXPOSE 8080 8081
# slim images have no curl; Node's own fetch asks the liveness route on PORT.
HEALTHCHECK --interval=10s --timeout=3s --start-period=15s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || '8080') + '/health/live', { signal: AbortSignal.timeout(2000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
STOPSIGNAL SIGTERM
CMD ["node", "dist/server.js"]
