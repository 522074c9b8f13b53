#!/usr/bin/env bash
# The scripted session `make demo` runs: a music library in a temporary store.
set -euo pipefail
playlists="$1"
store="$(mktemp -d)/music"
trap 'rm -rf "$(dirname "$store")"' EXIT
step() { printf "$ playlists"; printf " %q" "$@"; echo; "$playlists" "$store" "$@"; echo; }

echo "Store: $store"
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
