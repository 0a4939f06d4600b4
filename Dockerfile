# The server image of the trenzinho monitor: ingest, monitor and the container health check,
# static binaries (CGO_ENABLED=0) on distroless, running as the non-root user 65532.
#
#   docker build --build-arg VERSION=1.0.0 -t trenzinho:1.0.0 .
#
# docker-compose.yml builds it (APP_VERSION) and runs /usr/local/bin/ingest and
# /usr/local/bin/monitor from it. deploy/deploy_test.go checks that the directories copied below
# hold every package of the module that those programs import.

# The builder runs on the build machine's platform and cross-compiles for the target's.
FROM --platform=$BUILDPLATFORM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
# Only the sources the programs need: no .env, certs/, secrets/, .tools/ or .data/ in a layer.
COPY config/ config/
COPY wire/ wire/
COPY configbundle/ configbundle/
COPY geofences/ geofences/
COPY registry/ registry/
COPY rules/ rules/
COPY profile/ profile/
COPY profiles/ profiles/
COPY internal/ internal/
COPY ingest/ ingest/
COPY monitor/ monitor/
COPY deploy/healthcheck/ deploy/healthcheck/
ARG VERSION=dev
ARG TARGETOS
ARG TARGETARCH
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/ ./ingest ./monitor ./deploy/healthcheck
# The monitor's data directories, owned by the non-root user: a named volume mounted there
# starts with this ownership.
RUN mkdir -p /rootfs/var/lib/trenzinho/registry /rootfs/var/lib/trenzinho/backups && \
    chown -R 65532:65532 /rootfs/var/lib/trenzinho && chmod -R 0750 /rootfs/var/lib/trenzinho

FROM gcr.io/distroless/static-debian12:nonroot
ARG VERSION=dev
LABEL org.opencontainers.image.title="trenzinho" \
      org.opencontainers.image.description="Telemetry and compliance monitor for recreational road trains: ingest and monitor" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="MIT"
COPY --from=build /out/ /usr/local/bin/
COPY --from=build --chown=65532:65532 /rootfs/var/lib/trenzinho /var/lib/trenzinho
USER 65532:65532
WORKDIR /var/lib/trenzinho
# ingest's metrics (TRENZINHO_METRICS_LISTEN) and the monitor's HTTP address (TRENZINHO_LISTEN).
EXPOSE 9101 8080
# No ENTRYPOINT: the compose file names the program (ingest or monitor).
CMD ["/usr/local/bin/monitor"]
