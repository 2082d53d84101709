# Callboard in a container: `docker build -t callboard .` then
#   docker run -p 3000:3000 -e AUTH_SECRET=… -v callboard-data:/data callboard
# (or `docker compose up`, see compose.yaml). The README's "Operating Callboard" section
# says more. Build arguments:
#   NODE_IMAGE    the image that builds (needs Node 20.12+, npm, and a C++ toolchain for
#                 better-sqlite3 when no prebuilt binary can be fetched);
#   RUNTIME_IMAGE the image that runs (Node 20.12+ only);
#   BASE_PATH     serve under a sub-path such as /callboard (Next.js fixes it at build).
ARG NODE_IMAGE=node:20-bookworm
ARG RUNTIME_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
ENV NEXT_TELEMETRY_DISABLED=1
# Dependencies first: this layer is reused until the lockfile changes.
COPY package.json package-lock.json ./
RUN npm install --no-audit --no-fund
COPY . .
ARG BASE_PATH=""
RUN BASE_PATH="${BASE_PATH}" npm run build \
 && npm prune --omit=dev --no-audit --no-fund \
 && rm -rf .next/cache

FROM ${RUNTIME_IMAGE}
WORKDIR /app
ARG BASE_PATH=""
ENV NODE_ENV=production \
    NEXT_TELEMETRY_DISABLED=1 \
    PORT=3000 \
    DATABASE_PATH=/data/callboard.db \
    BASE_PATH=${BASE_PATH}
# Its own unprivileged user (the slim Node image's `node` user is not assumed: any Debian base works).
RUN groupadd --system --gid 10001 callboard \
 && useradd --system --uid 10001 --gid callboard --home-dir /app --shell /usr/sbin/nologin callboard \
 && mkdir -p /data && chown callboard:callboard /data
# What `npm start` and the CLIs (npm run users/apps/tokens/sync/warehouse) need; the app runs from .next.
COPY --from=build --chown=root:root /app/package.json /app/package-lock.json /app/next.config.ts /app/tsconfig.json ./
COPY --from=build --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /app/.next ./.next
COPY --from=build --chown=root:root /app/db ./db
COPY --from=build --chown=root:root /app/lib ./lib
COPY --from=build --chown=root:root /app/scripts ./scripts
COPY --from=build --chown=root:root /app/app ./app
COPY --from=build --chown=root:root /app/components ./components
COPY --from=build --chown=root:root /app/proxy.ts ./proxy.ts
USER callboard
# The warehouse (SQLite file and its WAL) lives here: keep it on a volume, and back it up with AUTH_SECRET.
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}${process.env.BASE_PATH}/api/health/live`).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node_modules/.bin/tsx", "scripts/server.ts"]
