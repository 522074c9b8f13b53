#!/usr/bin/env bash
# Instructions per speed-test workload, counted by callgrind inside SpeedTestKit.measure
# only (the prepare step and process start-up are not counted), for before/after
# comparisons that do not depend on the machine's noise. See BENCHMARKS.md.
#
#   Tools/callgrind-workloads.sh BIN OUT [workloads...]
#
# BIN: a release speedtest (swift build -c release --package-path Tools --product speedtest); OUT: a
# folder for the callgrind files. simple-update runs on the complex store, so it
# gets 200,000 songs there; the complex workloads get 20,000. The indexed workloads
# (indexed-*, fulltext, inverse) use the 200,000 songs, 10,000 playlists and 1,000 queries.
# Without workloads, all of them.
set -euo pipefail
BIN=$1; OUT=$2; shift 2; mkdir -p "$OUT"
WORKLOADS=${*:-"simple-insert simple-fetch simple-enumerate simple-update complex-insert complex-fetch complex-faults named-buffer indexed-insert indexed-equal indexed-range fulltext inverse"}
# Valgrind 3.19 (Debian 12) gives up on the DWARF 5 debug information Swift 6.3 writes:
# it runs a copy without it (the symbol table, which --toggle-collect needs, stays).
objcopy --strip-debug "$BIN" "$OUT/speedtest"
BIN=$OUT/speedtest
BASE="--songs 200000 --playlists 200 --playlist-size 100 --buffer-references 100000"
for w in $WORKLOADS; do
  if [ "$w" = simple-update ]; then SIZES="$BASE --complex-songs 200000"; else SIZES="$BASE --complex-songs 20000"; fi
  D=$(mktemp -d /tmp/callgrind-workload-XXXX)
  CABINET_SPEEDTEST_SYNC=0 "$BIN" child prepare --engine cabinet --workload "$w" --directory "$D" $SIZES >"$OUT/$w.prepare" 2>&1
  SWIFT_DETERMINISTIC_HASHING=1 CABINET_SPEEDTEST_SYNC=0 valgrind --tool=callgrind --callgrind-out-file="$OUT/$w.out" \
    --toggle-collect='*SpeedTestKit7measure*' \
    "$BIN" child measure --engine cabinet --workload "$w" --directory "$D" $SIZES >"$OUT/$w.sample" 2>"$OUT/$w.err"
  echo "$w $(grep -E '^(summary|totals):' "$OUT/$w.out" | head -1 | awk '{print $2}')"
  rm -rf "$D"
done
