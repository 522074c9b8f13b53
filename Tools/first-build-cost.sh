#!/usr/bin/env bash
# What the @StoredModel macro adds to an app's first build: the debug build of
# Examples/DependingOnCabinet (Cabinet alone) and of
# Examples/DependingOnCabinetModel (the macro: swift-syntax and the plugin),
# each copied beside this checkout (as ../cabinet, as check-package-graph.sh
# does) and built from an empty .build. Prints wall clock, CPU (user + system)
# and peak memory of each; docs/MODEL.md ("Depending on it") records them.
# On a shared machine the wall clock follows the load: compare the CPU time.
#   Tools/first-build-cost.sh [CHECKOUT]    (another checkout of Cabinet)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
repository="${1:-$here}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
ln -s "$repository" "$work/cabinet"

for example in DependingOnCabinet DependingOnCabinetModel; do
    cp -R "$here/Examples/$example" "$work/$example"
    rm -rf "$work/$example/.build"
    # Resolving fetches the dependencies; the build is what is measured.
    if ! log="$(swift package --package-path "$work/$example" resolve 2>&1)"; then
        echo "$log" >&2
        exit 1
    fi
    /usr/bin/time -f "$example: %e s wall clock, %U + %S s CPU, %M KB peak memory (load $(cut -d' ' -f1 /proc/loadavg) at start)" \
        swift build --package-path "$work/$example" >/dev/null
done
