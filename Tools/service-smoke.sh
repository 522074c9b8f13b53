#!/usr/bin/env bash
# make service-smoke: every route of both notes services (Examples/NotesService),
# through curl on loopback (the Cabinet service's live stream too), then a graceful
# stop (SIGTERM, with a live stream open; the store logs that it closed) and a
# restart that still has the data.
set -euo pipefail
source "$(dirname "$0")/service-bench/common.sh"
command -v curl >/dev/null || { echo "curl is missing: apt-get install -y curl"; exit 1; }
build_services

PASSED=0
FAILED=0
BODY=""

# check WHAT STATUS METHOD PATH [JSON] [TEXT]: the response has STATUS and, if given, contains TEXT.
check() {
    local what="$1" status="$2" method="$3" path="$4" json="${5:-}" text="${6:-}"
    local args=(-s -o "$WORK/body" -w '%{http_code}' -X "$method")
    [ -n "$json" ] && args+=(-H 'Content-Type: application/json' -d "$json")
    local got; got="$(curl "${args[@]}" "http://127.0.0.1:$SERVICE_PORT$path")"
    BODY="$(cat "$WORK/body")"
    if [ "$got" = "$status" ] && { [ -z "$text" ] || grep -qF -- "$text" <<<"$BODY"; }; then
        PASSED=$((PASSED + 1))
    else
        FAILED=$((FAILED + 1))
        echo "  FAILED $what: $method $path gave $got $BODY (wanted $status${text:+ with $text})"
    fi
}

for service in $SERVICES; do
    echo "== $service"
    data="$WORK/data-$service"
    start_service "$service" "$data"
    check "the liveness probe" 200 GET /health "" ok
    check "create a notebook" 201 POST /notebooks '{"title":"Work"}' '"title":"Work"'
    notebook="$(json_field "$BODY" id)"
    check "create a note" 201 POST /notes '{"title":"A","body":"a"}' '"title":"A"'
    first="$(json_field "$BODY" id)"
    check "get it" 200 GET "/notes/$first" "" '"body":"a"'
    check "update it" 200 PUT "/notes/$first" '{"title":"B","body":"b"}' '"title":"B"'
    check "get the update" 200 GET "/notes/$first" "" '"title":"B"'
    check "append to the notebook" 201 POST "/notebooks/$notebook/notes" '{"title":"C","body":"c"}' "\"notebook\":$notebook"
    second="$(json_field "$BODY" id)"
    check "the notebook counts it" 200 GET "/notebooks/$notebook" "" '"noteCount":1'
    check "the notebook lists it" 200 GET "/notebooks/$notebook/notes?limit=5" "" "\"id\":$second"
    check "a page of one" 200 GET "/notes?limit=1" "" "\"next\":$first"
    check "the page after the first" 200 GET "/notes?after=$first" "" "\"id\":$second"
    check "delete the appended note" 204 DELETE "/notes/$second"
    check "it is gone" 404 GET "/notes/$second"
    check "and gone from the notebook" 200 GET "/notebooks/$notebook" "" '"noteCount":0'
    if [ "$service" = notes-service ]; then
        # The live route (Cabinet only): a watcher sees the snapshot, then the note another client appends.
        curl -sN --max-time 10 "http://127.0.0.1:$SERVICE_PORT/notebooks/$notebook/live" >"$WORK/live" &
        watcher=$!
        sleep 0.5
        check "append while a client watches" 201 POST "/notebooks/$notebook/notes" '{"title":"Watched","body":"w"}'
        sleep 0.5
        kill "$watcher" 2>/dev/null || true
        wait "$watcher" 2>/dev/null || true
        if grep -q '^event: snapshot' "$WORK/live" && grep -q '^event: change' "$WORK/live" && grep -q '"title":"Watched"' "$WORK/live"; then
            PASSED=$((PASSED + 1))
        else
            FAILED=$((FAILED + 1)); echo "  FAILED: the live stream did not show the snapshot and the appended note:"; cat "$WORK/live"
        fi
        check "a missing notebook's live stream" 404 GET /notebooks/999999/live
    fi
    check "a missing note" 404 GET /notes/999999
    check "update a missing note" 404 PUT /notes/999999 '{"title":"X","body":"x"}'
    check "delete a missing note" 404 DELETE /notes/999999
    check "append to a missing notebook" 404 POST /notebooks/999999/notes '{"title":"X","body":"x"}'
    check "a bad limit" 400 GET "/notes?limit=0"
    check "a body that is not a note" 400 POST /notes '{"title":1}'
    watcher=""
    if [ "$service" = notes-service ]; then
        # A live stream still open at SIGTERM: the service ends it cleanly and stops
        # (were the drain to wait for it, curl would give up after 20 s and exit 28).
        curl -sN --max-time 20 "http://127.0.0.1:$SERVICE_PORT/notebooks/$notebook/live" >"$WORK/live" &
        watcher=$!
        sleep 0.5
    fi
    if stop_service; then PASSED=$((PASSED + 1)); else FAILED=$((FAILED + 1)); echo "  FAILED: SIGTERM exit status"; fi
    if [ -n "$watcher" ]; then
        # curl exits 0 for a complete response (18 for one cut off, 28 if it ran out its time).
        curl_status=0
        wait "$watcher" || curl_status=$?
        if [ "$curl_status" = 0 ]; then
            PASSED=$((PASSED + 1))
        else
            FAILED=$((FAILED + 1)); echo "  FAILED: the live stream open at SIGTERM did not end cleanly (curl exited $curl_status)"
        fi
    fi
    # The store's service logs "closed" after closing it, and is the last service the group stops.
    if tail -1 "$WORK/$service.log" | grep -q "closed"; then
        PASSED=$((PASSED + 1))
    else
        FAILED=$((FAILED + 1)); echo "  FAILED: no \"closed\" log line after SIGTERM"; tail -3 "$WORK/$service.log"
    fi
    start_service "$service" "$data"
    check "the update survived a restart" 200 GET "/notes/$first" "" '"title":"B"'
    stop_service
done

echo "smoke: $PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
