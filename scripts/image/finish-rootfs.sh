#!/usr/bin/env bash
# mmdebstrap's extract hook for scripts/image/rootfs.sh: what the skipped maintainer scripts and a
# package manager would have left, and the binary.
# Usage: finish-rootfs.sh ROOT BINARY
set -euo pipefail
root=${1:?usage: finish-rootfs.sh ROOT BINARY}
binary=${2:?usage: finish-rootfs.sh ROOT BINARY}

install -D -m 0755 "$binary" "$root/usr/bin/sparktrace"

# root and the conventional unprivileged "nonroot" (65532) that the manifests run as
# (k8s/base: runAsUser 65532), so tools inside and outside the container can name them.
cat > "$root/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/usr/sbin/nologin
nonroot:x:65532:65532:nonroot:/home/nonroot:/usr/sbin/nologin
PASSWD
cat > "$root/etc/group" <<'GROUP'
root:x:0:
nonroot:x:65532:
GROUP
install -d -m 0750 -o 65532 -g 65532 "$root/home/nonroot"
# The trace store's default place; Kubernetes mounts a volume here (the root filesystem is read-only).
install -d -m 0750 -o 65532 -g 65532 "$root/var/lib/sparktrace"

# The dynamic loader finds the multiarch library directories through this cache, which libc-bin's
# trigger would have built; the build machine's ldconfig builds it (libc-bin stays out of the image).
printf "include /etc/ld.so.conf.d/*.conf\n" > "$root/etc/ld.so.conf"
ldconfig -r "$root"

# What extract leaves behind that has no use without a package manager.
rm -rf "$root/var/cache/apt" "$root/var/lib/apt" "$root/var/log/apt"
