#!/usr/bin/env bash
# `npm run test:container`: builds the Dockerfile with podman and runs the image as an
# operator would — on a volume, as a non-root user, healthy by its own HEALTHCHECK,
# signing in, keeping its warehouse across a new container. Slow (minutes: a Debian
# base, npm install and next build inside), so it is not part of `npm test`.
#
# No image registry is reachable from the machines this runs on, so the base image is
# made here from Debian packages: debootstrap, plus this machine's Node (the same
# binary, npm and headers the rest of the suite uses), passed to the Dockerfile as
# NODE_IMAGE and RUNTIME_IMAGE. Elsewhere, `docker build .` uses the official Node images.
#
# Needs: podman, runc, debootstrap (apt-get install -y podman runc debootstrap), root.
# Env: CONTAINER_TEST_KEEP=1 keeps the images; CONTAINER_TEST_DIR reuses a work dir.
set -euo pipefail
cd "$(dirname "$0")/../.."

BASE_IMAGE=localhost/callboard-test-node:bookworm
IMAGE=localhost/callboard:test
WORK=${CONTAINER_TEST_DIR:-$(mktemp -d -t callboard-container-XXXXXX)}
mkdir -p "$WORK"
NAME=callboard-test-$$
VOLUME=callboard-test-data-$$
started=$(date +%s)
step() { echo "--- [$(( $(date +%s) - started )) s] $*"; }

for tool in podman debootstrap; do
  command -v "$tool" >/dev/null || { echo "error: $tool is missing (apt-get install -y podman runc debootstrap)" >&2; exit 2; }
done
RUNC=$(command -v runc || echo /usr/sbin/runc)
[ -x "$RUNC" ] || { echo "error: runc is missing (apt-get install -y runc)" >&2; exit 2; }

# crun and runc may not set rlimits on these machines, and their cgroups are hybrid:
# no default ulimits, cgroupfs, runc (see the stack notes' Containers section).
cat > "$WORK/containers.conf" <<'CONF'
[containers]
default_ulimits = []
[engine]
cgroup_manager = "cgroupfs"
CONF
export CONTAINERS_CONF="$WORK/containers.conf"
PODMAN=(podman --runtime "$RUNC")

cleanup() {
  "${PODMAN[@]}" rm -f "$NAME" >/dev/null 2>&1 || true
  "${PODMAN[@]}" volume rm -f "$VOLUME" >/dev/null 2>&1 || true
  if [ "${CONTAINER_TEST_KEEP:-}" != 1 ]; then "${PODMAN[@]}" rmi -f "$IMAGE" >/dev/null 2>&1 || true; fi
  if [ -z "${CONTAINER_TEST_DIR:-}" ]; then rm -rf "$WORK"; fi
}
trap cleanup EXIT

if ! "${PODMAN[@]}" image exists "$BASE_IMAGE"; then
  step "base image: debootstrap bookworm (minbase, build tools) + this machine's Node $(node -v)"
  mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
  [ -n "$mirror" ] || mirror=$(awk '$1=="deb"{print $2; exit}' /etc/apt/sources.list)
  rootfs="$WORK/rootfs"
  rm -rf "$rootfs"
  debootstrap --variant=minbase --include=ca-certificates,python3,make,g++ bookworm "$rootfs" "$mirror" > "$WORK/debootstrap.log" 2>&1 \
    || { tail -20 "$WORK/debootstrap.log" >&2; exit 1; }
  node_bin=$(command -v node)
  npm_dir=$(cd "$(dirname "$(readlink -f "$(command -v npm)")")/.." && pwd)
  node_prefix=$(dirname "$(dirname "$node_bin")")
  install -m 0755 "$node_bin" "$rootfs/usr/bin/node"
  mkdir -p "$rootfs/usr/lib/node_modules" "$rootfs/usr/include" "$rootfs/usr/etc"
  cp -a "$npm_dir" "$rootfs/usr/lib/node_modules/npm"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/bin/npx"
  # Node's headers: better-sqlite3 compiles against them when it cannot fetch a prebuilt binary.
  cp -a "$node_prefix/include/node" "$rootfs/usr/include/node"
  # This machine's trust store (its registry may sit behind its own CA) and npm settings.
  cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"
  printf 'nodedir=/usr\ncafile=/etc/ssl/certs/ca-certificates.crt\nfund=false\naudit=false\nupdate-notifier=false\n' > "$rootfs/usr/etc/npmrc"
  registry=$(npm config get registry)
  [ -n "$registry" ] && printf 'registry=%s\n' "$registry" >> "$rootfs/usr/etc/npmrc"
  rm -rf "$rootfs/var/cache/apt/archives/"*.deb "$rootfs/var/lib/apt/lists/"*
  tar -C "$rootfs" -c . | "${PODMAN[@]}" import --change 'CMD ["node"]' - "$BASE_IMAGE" >/dev/null
  rm -rf "$rootfs"
  "${PODMAN[@]}" run --rm --network=host "$BASE_IMAGE" node -e 'console.log("base image: node", process.version)'
fi

step "podman build (NODE_IMAGE=RUNTIME_IMAGE=$BASE_IMAGE)"
"${PODMAN[@]}" build --format docker --pull=never --network=host \
  --build-arg NODE_IMAGE="$BASE_IMAGE" --build-arg RUNTIME_IMAGE="$BASE_IMAGE" \
  -t "$IMAGE" . > "$WORK/build.log" 2>&1 || { tail -40 "$WORK/build.log" >&2; exit 1; }
step "built: $("${PODMAN[@]}" image inspect "$IMAGE" --format '{{.Size}}') bytes"

port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
secret=$(node -e 'console.log(require("crypto").randomBytes(32).toString("base64"))')
admin_password=$(node -e 'console.log(require("crypto").randomBytes(12).toString("hex"))')
run_container() {
  "${PODMAN[@]}" run -d --name "$NAME" --network=host -v "$VOLUME:/data" \
    -e PORT="$port" -e AUTH_SECRET="$secret" -e AUTH_TRUST_HOST=true -e SYNC_INTERVAL_SECONDS=0 \
    -e CALLBOARD_ADMIN_EMAIL=admin@callboard.test -e CALLBOARD_ADMIN_PASSWORD="$admin_password" \
    "$IMAGE" >/dev/null
  for _ in $(seq 1 120); do
    if curl -fsS "http://127.0.0.1:$port/api/health" >/dev/null 2>&1; then return 0; fi
    if [ "$("${PODMAN[@]}" inspect -f '{{.State.Running}}' "$NAME")" != true ]; then break; fi
    sleep 1
  done
  "${PODMAN[@]}" logs "$NAME" 2>&1 | tail -30 >&2
  echo "error: the container did not become ready" >&2
  exit 1
}
fail() { echo "FAIL: $*" >&2; exit 1; }

step "run on a volume"
run_container
uid=$("${PODMAN[@]}" exec "$NAME" id -u)
[ "$uid" != 0 ] || fail "the server runs as root"
echo "ok: serves on :$port as uid $uid"
"${PODMAN[@]}" healthcheck run "$NAME" >/dev/null || fail "HEALTHCHECK reports unhealthy"
echo "ok: HEALTHCHECK healthy"
"${PODMAN[@]}" exec "$NAME" sh -c 'test -f "$DATABASE_PATH" && case "$DATABASE_PATH" in /data/*) ;; *) exit 1;; esac' || fail "the warehouse is not on /data"
echo "ok: the warehouse is /data/callboard.db"

# Sign in as a browser does (CSRF cookie, then the credentials callback): a session cookie comes back.
jar="$WORK/cookies.txt"
csrf=$(curl -fsS -c "$jar" "http://127.0.0.1:$port/api/auth/csrf" | node -e 'let s="";process.stdin.on("data",c=>s+=c).on("end",()=>console.log(JSON.parse(s).csrfToken))')
curl -fsS -o /dev/null -b "$jar" -c "$jar" --data-urlencode "csrfToken=$csrf" --data-urlencode email=admin@callboard.test \
  --data-urlencode "password=$admin_password" "http://127.0.0.1:$port/api/auth/callback/credentials"
grep -q 'session-token' "$jar" || fail "sign-in gave no session cookie"
[ "$(curl -s -o /dev/null -w '%{http_code}' -b "$jar" "http://127.0.0.1:$port/api/v1/users/me")" = 200 ] || fail "the session cookie does not work"
echo "ok: the first admin signs in"

# A CLI inside the container writes the same warehouse; a new container on the volume keeps it.
token=$("${PODMAN[@]}" exec "$NAME" node_modules/.bin/tsx scripts/tokens.ts create --email admin@callboard.test --scope read 2>/dev/null)
[ "$(curl -s -o /dev/null -w '%{http_code}' -H "authorization: Bearer $token" "http://127.0.0.1:$port/api/v1/usage/apps")" = 200 ] || fail "a token made by the CLI is refused"
step "replace the container, keep the volume"
"${PODMAN[@]}" rm -f "$NAME" >/dev/null
run_container
[ "$(curl -s -o /dev/null -w '%{http_code}' -H "authorization: Bearer $token" "http://127.0.0.1:$port/api/v1/usage/apps")" = 200 ] || fail "the warehouse did not survive a new container"
echo "ok: the warehouse (users, tokens) survives a new container on the same volume"
step "container test passed"
