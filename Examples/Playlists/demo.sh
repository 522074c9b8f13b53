#!/usr/bin/env bash
# What `make demo` runs: the README's example (Model/Examples/ReadmeExample), a
# scripted session of the playlists example against a store in a temporary
# directory, the versioning example and the StorePool sample.
set -euo pipefail
bin="$1"
# The README's example is built in the macro's package (Model/), with a bin folder of its own.
model_bin="${2:-$bin}"

echo "== The README example (store: /tmp/music)"
# Start from an empty /tmp/music, but only remove one that holds nothing but a Cabinet store
# (its class files, Song's index file, their logs, and the store's own dot files: lock, format, catalog, commit lock).
if [ -d /tmp/music ] && [ -z "$(ls -A /tmp/music | grep -v -x -E -e '(Song|Playlist)(\.index)?(\.wal)?' -e '\.cabinet-[a-z-]+')" ]; then
  rm -rf /tmp/music
fi
"$model_bin/ReadmeExample"
echo

store="$(mktemp -d)/music"
trap 'rm -rf "$(dirname "$store")"' EXIT
step() { printf '$ playlists'; printf ' %q' "$@"; echo; "$bin/playlists" "$store" "$@"; echo; }

echo "== Examples/Playlists (store: $store)"
echo
step add-song "Walking on Sunshine" 298
step add-song "Here Comes the Sun" 185
step add-song "Mr. Blue Sky" 303
step new-playlist "Car"
step add-to "Car" "Walking on Sunshine" "Mr. Blue Sky" "Here Comes the Sun"
step move "Car" 3 1
step list
step delete-song "Mr. Blue Sky"
step list
echo "Files in the store (one Tokyo Cabinet hash database per class):"
ls -l "$store" | tail -n +2
echo
echo "== Examples/Versioning: a class gains a field"
"$bin/Versioning" "$(dirname "$store")/versioning"
echo
echo "== Examples/StorePool: the StorePool sample of docs/SERVICES.md (store: /tmp/notes)"
"$bin/PoolExample"
echo
echo "== Examples/Queries: the queries sample of docs/GUIDE.md (indexes and full-text search)"
"$bin/QueriesExample"
echo
echo "== Examples/LiveData: the live-data samples of docs/SERVICES.md (observations while write blocks change the store)"
"$bin/LiveDataExample"
