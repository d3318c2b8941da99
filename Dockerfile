# weft controller image: Node.js 20 running the built package (`weft serve` by default).
# Used by docker-compose.yml; build with `docker build -t weft:local .`.

FROM node:20-bookworm-slim AS build
WORKDIR /src
# `npm ci` runs `prepare`, which compiles the TypeScript: the sources must be there first.
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY bin bin
COPY controller controller
COPY southbound southbound
COPY northbound northbound
COPY apps apps
COPY test/lab test/lab
RUN npm ci --no-audit --no-fund && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /opt/weft
ENV NODE_ENV=production
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules node_modules
COPY --from=build /src/dist dist
COPY --from=build /src/bin bin
# Ports above 1024 only (6653, 6640, 8080): no root needed.
USER node
ENTRYPOINT ["node", "--max-semi-space-size=64", "bin/weft.js"]
CMD ["serve"]
