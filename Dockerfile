# One image per service, built from one file: `docker build --target edge .` etc.
# Node 22 (LTS) at run time; the code also runs on Node >= 20.19.
FROM node:22-bookworm-slim AS deps
WORKDIR /app
ENV NODE_ENV=production npm_config_update_notifier=false
# Every workspace's package.json must be present for `npm ci` to accept the lockfile, so the
# whole tree goes in (see .dockerignore for what stays out).
COPY . .
RUN npm ci --omit=dev --no-audit --no-fund

FROM deps AS edge
USER node
EXPOSE 18789
CMD ["node", "--import", "tsx", "services/edge/src/main.ts"]

FROM deps AS agent-runner
USER node
CMD ["node", "--import", "tsx", "services/agent-runner/src/main.ts"]

FROM deps AS sessions
USER node
CMD ["node", "--import", "tsx", "services/sessions/src/main.ts"]

FROM deps AS gateway
USER node
EXPOSE 18789
# Inside a container, loopback is the container itself: listen on every interface (a token is required).
CMD ["node", "--import", "tsx", "services/gateway/src/cli.ts", "start", "--bind", "0.0.0.0"]
