# The arm-shim image: `make images` builds it from the repository's root, with the version the
# Makefile gives the binaries (the build args below; without them the binary reports a dev version).
ARG GO_VERSION=1.26

FROM docker.io/library/golang:${GO_VERSION} AS build
WORKDIR /src
# The modules first, so that a change of the code alone does not download them again.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY apis/ apis/
COPY pkg/ pkg/
COPY cmd/ cmd/
ARG GIT_VERSION=v0.0.0-dev+unknown
ARG GIT_COMMIT=
ARG GIT_TREE_STATE=
ARG BUILD_DATE=
# Static, so that it runs on distroless/static, which has no libc.
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -o /out/arm-shim \
    -ldflags "-X github.com/aro-hcp/hcp-apiserver/pkg/version.gitVersion=${GIT_VERSION} \
      -X github.com/aro-hcp/hcp-apiserver/pkg/version.gitCommit=${GIT_COMMIT} \
      -X github.com/aro-hcp/hcp-apiserver/pkg/version.gitTreeState=${GIT_TREE_STATE} \
      -X github.com/aro-hcp/hcp-apiserver/pkg/version.buildDate=${BUILD_DATE}" \
    ./cmd/arm-shim

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/arm-shim /arm-shim
USER 65532:65532
# HTTPS for ARM (--secure-port).
EXPOSE 8443
ENTRYPOINT ["/arm-shim"]
