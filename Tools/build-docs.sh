#!/usr/bin/env bash
# Builds the documentation of Cabinet, CabinetStorage and CabinetRedis into one
# static site (`make docs`): the compiler's symbol graphs, then `docc convert`
# per module with warnings as errors, then `docc merge`. No plugin: the library
# package must not gain a dependency (Tools/check-package-graph.sh).
#   Tools/build-docs.sh    -> .build-docs/site (serve it; see the README)
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
DOCC=${DOCC:-$(dirname "$(command -v "$SWIFT")")/docc}
command -v "$DOCC" >/dev/null || DOCC=docc
# A scratch path of its own: the symbol-graph flags would otherwise rebuild
# `make test`'s .build from scratch each time, and the two would fight.
scratch=.build-docs
graphs="$PWD/$scratch/symbol-graphs"
# CabinetStorage first: the others link to its pages (`--dependency`).
modules="CabinetStorage Cabinet CabinetRedis"
rm -rf "$scratch/archives" "$scratch/site"
for module in $modules; do rm -rf "${graphs:?}/$module"; done

# The compiler writes a module's graph when it emits the module (see
# build_graphs for how each is made fresh). Cabinet's build emits CabinetStorage's
# graph too. Extension blocks give pages to the types Cabinet extends (Int,
# String, Date... as index values; CabinetStorage's StorageProblem.Kind).
build_graphs() {
    mkdir -p "$graphs/all"
    # A graph written by an earlier build can be stale: a doc comment changed in
    # CabinetStorage recompiles CabinetStorage but not Cabinet. Each module is made
    # to emit afresh: one file of each is marked changed (its contents are not touched).
    rm -f "$graphs/all"/*.json
    touch Sources/CabinetStorage/Seam/StorageBackend.swift Sources/Cabinet/Exports.swift Sources/CabinetRedis/RedisBackend.swift
    for target in Cabinet CabinetRedis; do
        "$SWIFT" build --scratch-path "$scratch" --target "$target" \
            -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$graphs/all" \
            -Xswiftc -symbol-graph-minimum-access-level -Xswiftc public \
            -Xswiftc -emit-extension-block-symbols
    done
}
build_graphs
for module in $modules; do
    if [ ! -f "$graphs/all/$module.symbols.json" ]; then
        # graphs/all was deleted under an up-to-date build: build it all again.
        echo "build-docs: no symbol graph for $module; rebuilding $scratch"
        rm -rf "$scratch"; mkdir -p "$scratch/archives"; build_graphs; break
    fi
done
mkdir -p "$scratch/archives"

for module in $modules; do
    mkdir -p "$graphs/$module"
    # Module.symbols.json and Module@Swift.symbols.json (its extensions), not
    # CabinetStorage's under the name Cabinet*.
    cp "$graphs/all/$module.symbols.json" "$graphs/$module/"
    cp "$graphs/all/$module"@*.symbols.json "$graphs/$module/" 2>/dev/null || true
    # Cabinet's pages link to CabinetStorage's (``/CabinetStorage/CabinetError/...``:
    # Cabinet names the app-facing types with type aliases, whose members DocC
    # documents where they are declared), and so do CabinetRedis's.
    dependencies=()
    [ "$module" = CabinetStorage ] || dependencies=(--dependency "$scratch/archives/CabinetStorage.doccarchive")
    "$DOCC" convert "Sources/$module/$module.docc" \
        --additional-symbol-graph-dir "$graphs/$module" \
        --output-path "$scratch/archives/$module.doccarchive" \
        --fallback-display-name "$module" \
        --fallback-bundle-identifier "org.cabinet.$module" \
        --fallback-default-module-kind Framework \
        --transform-for-static-hosting \
        --enable-experimental-external-link-support "${dependencies[@]}" \
        --warnings-as-errors
    Tools/check-docs-coverage.sh "$module" "$scratch/archives/$module.doccarchive"
done

"$DOCC" merge $(for module in $modules; do echo "$scratch/archives/$module.doccarchive"; done) \
    --synthesized-landing-page-name Cabinet \
    --output-path "$scratch/site"
echo "build-docs: $(du -sh "$scratch/site" | cut -f1) of HTML in $scratch/site"
