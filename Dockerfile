# One image per service, built from one file: `docker build --target edge .` etc.
# Node 22 (LTS) at run time; the code also runs on Node >= 20.19.
#
# The images run compiled JavaScript: `build` bundles each service's TypeScript into one
# dist/<service>.js (scripts/build-services.mjs), `deps` installs the production dependencies
# only, and the final images hold those two and nothing else (no sources, no TypeScript loader,
# no test tooling).

FROM node:22-bookworm-slim AS build
WORKDIR /app
ENV npm_config_update_notifier=false
# Every workspace's package.json must be present for `npm ci` to accept the lockfile, so the
# whole tree goes in (see .dockerignore for what stays out).
COPY . .
RUN npm ci --no-audit --no-fund && node scripts/build-services.mjs dist

FROM node:22-bookworm-slim AS deps
WORKDIR /app
ENV NODE_ENV=production npm_config_update_notifier=false
COPY . .
# Production installs carry no test tooling: the build fails if testcontainers (libs/testing's
# container fallback) can still be imported after `npm ci --omit=dev`. The bundles inline our
# workspaces, so their links (to sources the image does not hold) go.
RUN npm ci --omit=dev --no-audit --no-fund \
 && if node -e "import('testcontainers')" 2>/dev/null; then \
      echo "testcontainers is installed by npm ci --omit=dev: test tooling leaked into production dependencies" >&2; exit 1; \
    fi \
 && rm -rf node_modules/@gw

FROM node:22-bookworm-slim AS runtime
WORKDIR /app
ENV NODE_ENV=production
# V8's young generation capped at 2 x 8 MiB: left at its default 2 x 16 MiB it grows under load
# and shrinks when load falls, moving a service's RSS by up to 31 MiB with nothing retained;
# smaller, streams cost more CPU and promote more garbage (docs/decisions.md, Runtime). glibc's malloc keeps at most two arenas instead of one per
# allocating thread, each holding freed memory. The test fixture starts every service the same way.
ENV NODE_OPTIONS=--max-semi-space-size=8 MALLOC_ARENA_MAX=2
# package.json for "type": "module": the bundles are ES modules.
COPY --from=deps /app/package.json ./package.json
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The code and dependencies stay root's (read-only to the service); only the data directory
# (gateway.dataDir, "./data" from /app) belongs to the user the services run as.
RUN mkdir -p /app/data && chown 1000:1000 /app/data
# `gateway <command>` in every image (`docker exec <container> gateway status`): the same CLI
# as `npx gateway` in a checkout, compiled.
RUN printf '#!/bin/sh\nexec node /app/dist/gateway.js "$@"\n' > /usr/local/bin/gateway && chmod 755 /usr/local/bin/gateway
# Numeric, so Kubernetes' runAsNonRoot can verify it (a name like "node" it cannot): uid 1000 is
# the base image's `node` user, and k8s/ sets runAsUser/runAsGroup to the same numbers.
USER 1000:1000

# Plain node: --enable-source-maps would hold every bundle's source map in memory (about 15 MiB
# a process); add it to NODE_OPTIONS (keeping the flag above) on a container whose stack traces
# you need mapped to the TypeScript source.
FROM runtime AS edge
EXPOSE 18789
CMD ["node", "dist/edge.js"]

FROM runtime AS agent-runner
CMD ["node", "dist/agent-runner.js"]

FROM runtime AS sessions
CMD ["node", "dist/sessions.js"]

FROM runtime AS delivery
CMD ["node", "dist/delivery.js"]

FROM runtime AS hooks
CMD ["node", "dist/hooks.js"]

FROM runtime AS gateway
EXPOSE 18789
# Embedded mode keeps sessions and the outbox here; a volume keeps them across containers.
VOLUME ["/app/data"]
# Inside a container, loopback is the container itself: listen on every interface (a token is required).
CMD ["node", "dist/gateway.js", "start", "--bind", "0.0.0.0"]
