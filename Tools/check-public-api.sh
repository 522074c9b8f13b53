#!/usr/bin/env bash
# Checks what `import Cabinet` shows an app (docs/PUBLIC-API.md), from outside the
# package: typechecks three one-file snippets against the modules `swift build`
# made (a fraction of a second each; `make test` runs it after building).
#   app      `import Cabinet` alone, naming every app-facing type: must compile
#   backend  `import CabinetStorage`, naming the storage layer's own types: must
#            compile (they are public, for backends' authors; this also catches a
#            rename that would make the next check pass for nothing)
#   hidden   `import Cabinet` alone, naming those same types: must fail, with
#            "cannot find type 'NAME'" for each one
#   Tools/check-public-api.sh [BIN_PATH]   (default: `swift build --show-bin-path`)
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
SWIFTC=${SWIFTC:-$(dirname "$(command -v "$SWIFT")")/swiftc}
command -v "$SWIFTC" >/dev/null || SWIFTC=swiftc
bin=${1:-$("$SWIFT" build --show-bin-path)}
modules="$bin/Modules"
[ -d "$modules" ] || modules="$bin"
[ -f "$modules/Cabinet.swiftmodule" ] || [ -d "$modules/Cabinet.swiftmodule" ] || {
    echo "check-public-api: no Cabinet module in $modules: run swift build first" >&2; exit 1; }

# The app-facing names Cabinet declares (Sources/Cabinet/Exports.swift), and the
# storage layer's names an app must not see. Keep both in step with PUBLIC-API.md.
app_names="CabinetError RecordLocation StoreProgress StorageProblem StoreImportReport
    TokyoCabinetByteOrder StorageLimits StorageBackend TokyoCabinetBackend MemoryBackend CommitDurability"
hidden_names="StorageTable OrderedStorageTable StoreServices
    ConcurrentReadingBackend OtherWritersBackend OthersSave PendingRecovery StoreCatalog
    CRC32 TokyoCabinetYields WriteBatch TableChanges"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# snippet FILE MODULE NAMES: a file that imports MODULE and names each of NAMES.
snippet() {
    { echo "import $2"; for name in $3; do echo "typealias Uses$name = $name"; done; } > "$work/$1.swift"
}
typecheck() {
    "$SWIFTC" -typecheck -I "$modules" -I Sources/CTokyoCabinet -I Sources/CTokyoCabinetYields/include "$work/$1.swift" 2>&1
}

snippet app Cabinet "$app_names"
# The catch pattern the CabinetError documentation shows: an operator, found only
# through an imported module (Exports.swift declares Cabinet's own).
cat >> "$work/app.swift" <<'EOF'
func opening(_ path: String) -> String {
    do { _ = try ObjectStore(path: path); return "opened" } catch CabinetError.Code.notADirectory { return "a file" } catch { return "\(error)" }
}
var options = TokyoCabinetBackend.Options()
let backends: [any StorageBackend] = [MemoryBackend()]
func savingFlushed(_ store: ObjectStore) throws { try store.save(durability: .flushed) }
EOF
if ! output=$(typecheck app); then
    echo "$output" >&2
    echo "check-public-api: a file that imports only Cabinet cannot use the app-facing types above" >&2
    exit 1
fi

snippet backend CabinetStorage "$hidden_names"
if ! output=$(typecheck backend); then
    echo "$output" >&2
    echo "check-public-api: CabinetStorage no longer declares a name this check hides from apps: update the lists" >&2
    exit 1
fi

snippet hidden Cabinet "$hidden_names"
if output=$(typecheck hidden); then
    echo "check-public-api: a file that imports only Cabinet sees the storage layer's own types ($(echo $hidden_names))" >&2
    exit 1
fi
visible=""
for name in $hidden_names; do
    grep -q "cannot find type '$name' in scope" <<<"$output" || visible="$visible $name"
done
if [ -n "$visible" ]; then
    echo "$output" >&2
    echo "check-public-api: \`import Cabinet\` alone shows:$visible (docs/PUBLIC-API.md)" >&2
    exit 1
fi
echo "check-public-api: import Cabinet shows the $(wc -w <<<"$app_names") app-facing types and none of the $(wc -w <<<"$hidden_names") storage types"
