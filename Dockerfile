# The dizhu referee. Build: docker build -t dizhu . ; run: see deploy/docker-compose.yml.
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY server ./server
COPY clients/python ./clients/python
# This repository's own package; its dependencies are pinned to ranges in pyproject.toml.
# hadolint ignore=DL3013
RUN pip install --no-cache-dir --prefix=/install ".[web]"

FROM build AS build-tournament
# hadolint ignore=DL3013
RUN pip install --no-cache-dir --prefix=/install ".[tournament]"

# The tournament runner of deploy/k8s/tournament/: dizhu with the tournament extra, and
# bubblewrap to confine entrants. Build: docker build --target tournament -t dizhu-tournament .
# Entrants' files and runtimes go into an image FROM this one (docs/tournaments.md).
FROM python:3.11-slim AS tournament
# Debian's bubblewrap of the base image's release: its version follows the base image.
# hadolint ignore=DL3008
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 dizhu
COPY --from=build-tournament /install /usr/local
USER 10001
ENTRYPOINT ["dizhu", "tournament"]

# The referee (the default target).
FROM python:3.11-slim
RUN useradd --system --uid 10001 dizhu
COPY --from=build /install /usr/local
USER 10001
ENV DIZHU_ADDRESS=0.0.0.0:50051 \
    DIZHU_HTTP_ADDRESS=0.0.0.0:8080 \
    DIZHU_LOG_FORMAT=json \
    DIZHU_DATA_DIR=/tmp/dizhu
EXPOSE 50051 8080 9100
# Port 8080 serves browsers (gRPC-Web, Connect, the web table); unset DIZHU_HTTP_ADDRESS to turn it off.
# With REDIS_URL unset the referee starts an embedded Redis (single container, data in
# DIZHU_DATA_DIR, the signing key beside it); set REDIS_URL to share tables between replicas,
# and give them all one server secret and one signing key (DIZHU_SECRET_FILE,
# DIZHU_SIGNING_KEY_FILE: files mounted from secrets, as deploy/ does).
ENTRYPOINT ["dizhu", "serve"]
