# The sparktrace image, for `docker build .` (or `buildah bud`, `podman build`, kaniko) anywhere.
# `make image` builds the same image without a registry or a Docker engine (scripts/image/build.sh):
# same build, same runtime filesystem (scripts/image/rootfs.sh), same runtime configuration below
# (tests/image/test_image.py compares the two).

# Build: the same scripts/deps.sh and CMake as `make`, only the binary.
FROM debian:bookworm AS build
WORKDIR /src
COPY . .
RUN scripts/deps.sh compile \
 && cmake -S . -B /build -DCMAKE_BUILD_TYPE=RelWithDebInfo \
 && cmake --build /build --target sparktrace -j"$(nproc)"
# The runtime filesystem from Debian's archive: the packages of the libraries the binary loads, the
# binary without debug info, users root and nonroot (65532). No shell, no package manager.
RUN apt-get install -y -qq --no-install-recommends mmdebstrap \
 && scripts/image/rootfs.sh /build/sparktrace /rootfs

FROM scratch
COPY --from=build /rootfs /
# The manifests run it as 65532 with a read-only root; the trace store goes to a volume mounted at
# /var/lib/sparktrace (k8s/base).
USER 65532:65532
WORKDIR /var/lib/sparktrace
ENV SPARKTRACE_STORE=/var/lib/sparktrace/traces.db
# Spark Connect clients; the admin HTTP server (/metrics, /healthz, /readyz, the trace view).
EXPOSE 15002 9464
ENTRYPOINT ["/usr/bin/sparktrace"]
CMD ["proxy"]
