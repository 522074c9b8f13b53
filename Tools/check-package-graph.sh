#!/usr/bin/env bash
# Checks that depending on the Cabinet library costs nothing else: the app
# package of Examples/DependingOnCabinet (the README's manifest), set beside this
# checkout as ../cabinet, resolves, and SwiftPM has fetched swift-log (the
# library's one dependency) and no other package: no GRDB, no argument parser,
# nothing the tools in Tools/ use. `make test` runs it first.
#   Tools/check-package-graph.sh [CHECKOUT]    (another checkout of Cabinet)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
repository="${1:-$here}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp -R "$here/Examples/DependingOnCabinet" "$work/app"
ln -s "$repository" "$work/cabinet"
if ! log="$(swift package --package-path "$work/app" resolve 2>&1)"; then
    echo "$log" >&2
    echo "check-package-graph: a package that depends on Cabinet does not resolve" >&2
    exit 1
fi
fetched="$(ls "$work/app/.build/checkouts" 2>/dev/null | sort | tr '\n' ' ')"
if [ "$fetched" != "swift-log " ]; then
    echo "check-package-graph: a package that depends on Cabinet fetched: ${fetched:-nothing }(expected swift-log alone)" >&2
    exit 1
fi
echo "check-package-graph: a package that depends on Cabinet fetches swift-log and nothing else"
