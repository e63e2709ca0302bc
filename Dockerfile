# syntax=docker/dockerfile:1
# The Portcullis image: the built services and nothing to build them with. One entry point,
# `portcullis <command>`: api (the default), projector, mailer, migrate (run once per deployment, before the
# services: they refuse a schema other than their build's), audit …, rebuild-projection …, keys …, import ….
# docs/operations.md, "The image and migrations". tests/start/runtime-image.spec.ts runs these stages' own
# commands on a machine without Docker.

# Build: the whole workspace with its dev tools, then the runtime file set (scripts/runtime-files.ts):
# bundles, migrations, the console, a dispatcher and a package.json listing only what the bundles import.
FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY . .
RUN npm ci --no-audit --no-fund
RUN npm run build:runtime -- /runtime

# Runtime: the set and its production dependencies alone (no TypeScript, esbuild, vite, tsx or embedded
# Postgres), owned by root and run as an unprivileged user, so the process cannot change its own code.
FROM node:24-bookworm-slim AS runtime
WORKDIR /app
COPY --from=build /runtime/ ./
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --no-audit --no-fund --prefer-offline
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000
USER 10001:10001
# The api; the projector's and the mailer's health and metrics listen on PROJECTOR_METRICS_PORT and
# MAILER_METRICS_PORT (docs/configuration.md).
EXPOSE 3000
ENTRYPOINT ["node", "--enable-source-maps", "bin/portcullis.js"]
CMD ["api"]
