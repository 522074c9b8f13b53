#!/usr/bin/env bash
# make service-bench: the notes service on Cabinet's StorePool against the same
# service on GRDB's DatabasePool, under wrk on loopback (BENCHMARKS.md, "A service
# under load"). First the same routes over dictionaries in memory (CEILING,
# notes-service-dictionary; CEILING= skips it): what the routes cost with no
# store at all, the ceiling of both. Then, for each service, on a fresh data
# directory seeded with SEED_NOTES loose notes and a notebook of NOTEBOOK_NOTES notes:
#   1. GET /health (no store: the HTTP stack's own ceiling on this machine), GET,
#      list, PUT and POST at 16 and 64 connections, BENCH_SECONDS each;
#   2. POST appending to the big notebook, at 16 and 64; then RATIO_PAIRS (3)
#      pairs of a plain POST run and a notebook run back to back, whose median
#      ratio is the notebook check (one run's rate here wanders by a quarter);
#   3. GET's p99 alone, then with a POST load beside it (two wrk at once): as
#      fast as the POSTs go, then paced (16 connections, each waiting PACE_MS
#      before each request, default 8: at most 2,000 writes a second);
#   4. kill -9 in the middle of a POST load whose acknowledged IDs are recorded,
#      a restart, and a GET of every acknowledged ID.
# Prints a table (Tools/service-bench/report.py) and keeps the raw wrk output in
# $WORK when KEEP_WORK=1. About 13 minutes with the defaults.
set -euo pipefail

BENCH_SECONDS="${BENCH_SECONDS:-8}"
SEED_NOTES="${SEED_NOTES:-10000}"
NOTEBOOK_NOTES="${NOTEBOOK_NOTES:-100000}"
PACE_MS="${PACE_MS:-8}"
RATIO_PAIRS="${RATIO_PAIRS:-3}"
CEILING="${CEILING-notes-service-dictionary}"
source "$(dirname "$0")/service-bench/common.sh"
LUA="$ROOT/Tools/service-bench/routes.lua"
RESULTS="$WORK/results.jsonl"

command -v wrk >/dev/null || { echo "wrk is missing: apt-get install -y wrk"; exit 1; }
build_services

# service_cpu_ticks: the running service's user + system CPU time so far, in
# clock ticks (/proc/PID/stat, fields 14 and 15); empty once it is gone.
service_cpu_ticks() {
    sed 's/^.*) //' "/proc/$SERVICE_PID/stat" 2>/dev/null | awk '{print $12 + $13}' || true
}
CLOCK_TICKS="$(getconf CLK_TCK)"

# run_wrk SERVICE LABEL THREADS CONNECTIONS [VAR=value ...]: one wrk run against the
# running service; its result line goes into RESULTS, labelled, with the CPU
# seconds the service spent meanwhile (service_cpu_s: a run's rate on this shared
# machine wanders with how fast its CPU runs, the CPU a request costs much less).
run_wrk() {
    local service="$1" label="$2" threads="$3" connections="$4"; shift 4
    local raw="$WORK/wrk-$service-$label.txt"
    local before; before="$(service_cpu_ticks)"
    env FIRST_NOTE="$FIRST" LAST_NOTE="$LAST" "$@" \
        wrk -t"$threads" -c"$connections" -d"${BENCH_SECONDS}s" --latency -s "$LUA" \
        "http://127.0.0.1:$SERVICE_PORT" >"$raw" 2>&1 || { cat "$raw"; return 1; }
    local after; after="$(service_cpu_ticks)"
    local cpu=""
    if [ -n "$before" ] && [ -n "$after" ]; then
        cpu=",\"service_cpu_s\":$(awk -v a="$after" -v b="$before" -v t="$CLOCK_TICKS" 'BEGIN { printf "%.2f", (a - b) / t }')"
    fi
    local line; line="$(sed -n 's/^result //p' "$raw")"
    echo "{\"service\":\"$service\",\"label\":\"$label\",\"connections\":$connections,\"result\":$line$cpu}" >>"$RESULTS"
    printf '  %-22s %s\n' "$label" "$line"
}

# start_seeded SERVICE: starts it on a fresh data directory with the seed; sets FIRST, LAST, NOTEBOOK.
start_seeded() {
    local service="$1"
    echo "== $service: seeding $SEED_NOTES notes and a notebook of $NOTEBOOK_NOTES"
    start_service "$service" "$WORK/data-$service" --seed-notes "$SEED_NOTES" --seed-notebook-notes "$NOTEBOOK_NOTES"
    FIRST="$(json_field "$SEEDED" firstNote)"; LAST="$(json_field "$SEEDED" lastNote)"
    NOTEBOOK="$(json_field "$SEEDED" notebook)"
    echo "  seeded $SEEDED, port $SERVICE_PORT"
}

# rate_routes SERVICE: every route's requests a second at 16 and 64 connections.
rate_routes() {
    local service="$1" c
    for c in 16 64; do
        run_wrk "$service" "health-c$c" 2 "$c" ROUTE=health
        run_wrk "$service" "get-c$c" 2 "$c" ROUTE=get
        run_wrk "$service" "list-c$c" 2 "$c" ROUTE=list
        run_wrk "$service" "put-c$c" 2 "$c" ROUTE=put
        run_wrk "$service" "post-c$c" 2 "$c" ROUTE=post
        run_wrk "$service" "post-notebook-c$c" 2 "$c" ROUTE=post POST_PATH="/notebooks/$NOTEBOOK/notes"
    done
}

# notebook_pairs SERVICE: the notebook check, RATIO_PAIRS times at 16 and 64
# connections, a plain POST run right before each notebook run. On a shared
# machine one run's rate wanders by a quarter from the next; a ratio of two
# runs made back to back, and the median of several, is what the check uses.
notebook_pairs() {
    local service="$1" c round
    for round in $(seq 1 "$RATIO_PAIRS"); do
        for c in 16 64; do
            run_wrk "$service" "pair-post-c$c-r$round" 2 "$c" ROUTE=post
            run_wrk "$service" "pair-notebook-c$c-r$round" 2 "$c" ROUTE=post POST_PATH="/notebooks/$NOTEBOOK/notes"
        done
    done
}

if [ -n "$CEILING" ]; then
    start_seeded "$CEILING"
    rate_routes "$CEILING"
    stop_service
fi

for service in $SERVICES; do
    data="$WORK/data-$service"
    start_seeded "$service"
    rate_routes "$service"
    notebook_pairs "$service"

    # Reads alone, then the same reads beside a POST load (one wrk thread each).
    run_wrk "$service" "get-alone" 1 16 ROUTE=get
    run_wrk "$service" "post-beside-get" 1 16 ROUTE=post &
    writer=$!
    run_wrk "$service" "get-beside-post" 1 16 ROUTE=get
    wait "$writer"
    run_wrk "$service" "paced-post-beside-get" 1 16 ROUTE=post PACE_MS="$PACE_MS" &
    writer=$!
    run_wrk "$service" "get-beside-paced-post" 1 16 ROUTE=get
    wait "$writer"
    echo "{\"service\":\"$service\",\"label\":\"rss-kb\",\"value\":$(ps -o rss= -p "$SERVICE_PID")}" >>"$RESULTS"
    stop_service

    # kill -9 in the middle of a POST load; every acknowledged create must be there after.
    echo "== $service: kill -9 under POST load"
    start_service "$service" "$data"
    acks="$WORK/acks-$service"
    run_wrk "$service" "post-killed" 2 16 ROUTE=post ACK_FILE="$acks" &
    loader=$!
    sleep "$((BENCH_SECONDS / 2))"
    kill -KILL "$SERVICE_PID"
    wait "$SERVICE_PID" 2>/dev/null || true
    SERVICE_PID=""
    wait "$loader" || true
    start_service "$service" "$data"
    cat "$acks".* 2>/dev/null | sort -n >"$acks"
    python3 "$ROOT/Tools/service-bench/check_acked.py" "$SERVICE_PORT" "$acks" "$service" >>"$RESULTS"
    tail -1 "$RESULTS"
    stop_service
done

echo
python3 "$ROOT/Tools/service-bench/report.py" "$RESULTS" "$BENCH_SECONDS" "$SEED_NOTES" "$NOTEBOOK_NOTES" "$PACE_MS" "$RATIO_PAIRS"
