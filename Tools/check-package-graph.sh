#!/usr/bin/env bash
# Checks what depending on Cabinet costs. The app package of
# Examples/DependingOnCabinet (the README's manifest), set beside this checkout
# as ../cabinet, resolves, and SwiftPM has fetched swift-log (the library's one
# dependency) and no other package: no GRDB, no argument parser, nothing the
# tools in Tools/ use, and no swift-syntax. The app of
# Examples/DependingOnCabinetModel, which uses the @StoredModel macro (the
# package in Model/), fetches swift-log and swift-syntax, and nothing the
# macro's tests use. `make test` runs it first.
#   Tools/check-package-graph.sh [CHECKOUT]    (another checkout of Cabinet)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
repository="${1:-$here}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
ln -s "$repository" "$work/cabinet"

# check EXAMPLE WHAT EXPECTED: resolves Examples/EXAMPLE and compares the packages it fetched.
check() {
    cp -R "$here/Examples/$1" "$work/$1"
    if ! log="$(swift package --package-path "$work/$1" resolve 2>&1)"; then
        echo "$log" >&2
        echo "check-package-graph: a package that depends on $2 does not resolve" >&2
        exit 1
    fi
    fetched="$(ls "$work/$1/.build/checkouts" 2>/dev/null | sort | tr '\n' ' ')"
    if [ "$fetched" != "$3 " ]; then
        echo "check-package-graph: a package that depends on $2 fetched: ${fetched:-nothing }(expected $3)" >&2
        exit 1
    fi
    echo "check-package-graph: a package that depends on $2 fetches $3 and nothing else"
}
check DependingOnCabinet Cabinet "swift-log"
check DependingOnCabinetModel CabinetModel "swift-log swift-syntax"
