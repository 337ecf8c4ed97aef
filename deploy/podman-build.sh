#!/usr/bin/env bash
# Build the arena's image with podman where no image registry is reachable: the base image is made
# from Debian's packages (debootstrap), then deploy/Dockerfile builds on it. Run as root from anywhere:
#
#   bash deploy/podman-build.sh            # -> localhost/tablanette-arena:local
#
# Needs Debian's debootstrap, podman and runc (apt-get install debootstrap podman runc). The machine's own
# CA bundle goes into the base image, so a TLS-inspecting proxy between it and PyPI is trusted as the host
# trusts it. Environment: MIRROR (default http://deb.debian.org/debian), IMAGE (the tag to build).
# podman here runs with runc: crun refuses hosts with hybrid cgroups (v1 controllers beside v2), and both
# refuse podman's default open-file and process limits above the host's own, hence the --ulimit flags.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
MIRROR="${MIRROR:-http://deb.debian.org/debian}"
IMAGE="${IMAGE:-localhost/tablanette-arena:local}"
BASE=localhost/debian-python:3.11-bookworm
ULIMITS=(--ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit nproc=4096:4096)

rootfs="$(mktemp -d)"
trap 'rm -rf "$rootfs"' EXIT
echo "== base image $BASE from Debian's packages ($MIRROR)" >&2
debootstrap --variant=minbase --include=python3,python3-venv,python-is-python3,ca-certificates \
    bookworm "$rootfs" "$MIRROR" >&2
cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"
printf '[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n' >"$rootfs/etc/pip.conf"
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
tar -C "$rootfs" -c . | podman import - "$BASE" >&2

echo "== $IMAGE from deploy/Dockerfile" >&2
podman --runtime runc build --network host "${ULIMITS[@]}" -f "$ROOT/deploy/Dockerfile" \
    --build-arg "PYTHON_IMAGE=$BASE" -t "$IMAGE" "$ROOT"
echo "built $IMAGE; run it with: podman --runtime runc run ${ULIMITS[*]} ..." >&2
