# Shared by Tools/service-bench.sh and Tools/service-smoke.sh: build the notes
# services named in SERVICES and start and stop them. Source it; it sets PKG, BIN and WORK.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PKG="$ROOT/Examples/NotesService"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/notes-service.XXXXXX")"
SERVICE_PID=""
SERVICE_PORT=""
SEEDED=""

cleanup() {
    if [ -n "$SERVICE_PID" ] && kill -0 "$SERVICE_PID" 2>/dev/null; then
        kill -KILL "$SERVICE_PID" 2>/dev/null || true
    fi
    if [ -z "${KEEP_WORK:-}" ]; then rm -rf "$WORK"; else echo "kept $WORK"; fi
}
trap cleanup EXIT

# build_services: builds $SERVICES (default: both) and $CEILING if set, release, and sets BIN.
SERVICES="${SERVICES:-notes-service-grdb notes-service}"
build_services() {
    local service
    for service in $SERVICES ${CEILING:-}; do
        echo "== building $service (release)"
        if ! swift build -c release --package-path "$PKG" --product "$service" >>"$WORK/build.log" 2>&1; then
            cat "$WORK/build.log"; exit 1
        fi
    done
    grep "warning:" "$WORK/build.log" | grep -F "$PKG/Sources" || true
    BIN="$(swift build -c release --package-path "$PKG" --show-bin-path)"
}

# start_service NAME DATA_DIR [extra options]: starts it on a free loopback port and
# waits until it listens. Sets SERVICE_PID, SERVICE_PORT, and SEEDED (the seed's json).
start_service() {
    local name="$1" data="$2"; shift 2
    local out="$WORK/$name.$(date +%s%N).out"
    : >"$out"
    "$BIN/$name" --data "$data" --host 127.0.0.1 --port 0 "$@" >"$out" 2>>"$WORK/$name.log" &
    SERVICE_PID=$!
    for _ in $(seq 1 1200); do
        if grep -q '^listening ' "$out"; then
            SERVICE_PORT="$(sed -n 's/^listening 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$out")"
            SEEDED="$(sed -n 's/^seeded //p' "$out")"
            return 0
        fi
        if ! kill -0 "$SERVICE_PID" 2>/dev/null; then
            echo "$name exited before listening:"; cat "$out" "$WORK/$name.log"; exit 1
        fi
        sleep 0.1
    done
    echo "$name did not listen within 120 s"; exit 1
}

# stop_service: SIGTERM (the service closes its store) and wait; fails if it exits non-zero,
# or if it has not stopped within a minute (a request its drain waits for): then it is killed.
stop_service() {
    kill -TERM "$SERVICE_PID"
    sleep 60 &
    local timer=$! first="" status=0
    wait -n -p first "$SERVICE_PID" "$timer" || status=$?
    if [ "$first" = "$timer" ]; then
        echo "  the service did not stop within 60 s of SIGTERM: killed"
        kill -KILL "$SERVICE_PID" 2>/dev/null || true
        wait "$SERVICE_PID" 2>/dev/null || true
        status=1
    else
        kill "$timer" 2>/dev/null || true
        wait "$timer" 2>/dev/null || true
    fi
    SERVICE_PID=""
    return $status
}

# json_field JSON NAME: one integer field of a flat json object.
json_field() {
    sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p" <<<"$1"
}
