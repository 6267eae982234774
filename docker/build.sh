#!/usr/bin/env bash
# Builds static slotd and slotctl binaries on the host (no Go image is
# pulled) and the FROM scratch image that holds them.
#
#   docker/build.sh            # image slotd:local
#   SLOTD_IMAGE=name:tag docker/build.sh
#
# Then: docker-compose -f docker/compose.yml up -d   (six nodes + bootstrap)
set -euo pipefail
cd "$(dirname "$0")/.."
IMAGE=${SLOTD_IMAGE:-slotd:local}
mkdir -p docker/bin
export CGO_ENABLED=0
go build -trimpath -ldflags='-s -w' -o docker/bin/slotd ./cmd/slotd
if [ ! -d cmd/slotctl ]; then
	echo "build.sh: cmd/slotctl is not in this tree yet; the image needs it for the bootstrap service" >&2
	exit 1
fi
go build -trimpath -ldflags='-s -w' -o docker/bin/slotctl ./cmd/slotctl
docker build -q -t "$IMAGE" docker
echo "built $IMAGE"
