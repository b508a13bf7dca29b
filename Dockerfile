FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force
COPY tsconfig.json drizzle.config.ts ./
# .dockerignore leaves out src/sandbox: the image ships the bot, not its stand-ins.
COPY src ./src
COPY commands ./commands
COPY migrations ./migrations
ENV NODE_ENV=production
USER node
EXPOSE 8080
CMD ["npm", "start"]
