#!/usr/bin/env bash
# Fails if a public symbol is in none of the catalog's own topic groups. DocC puts
# what no `## Topics` section curates into groups it makes up ("Classes",
# "Instance Methods"), marked `"generated": true` in the page's render JSON; so:
#   - the module's page has no such group: every top-level type, function and
#     extended module (Swift's Int, String... that the module extends) is curated;
#   - a type with a page in the catalog's Extensions/ has none either (apart from
#     "Default Implementations", the protocols' members it inherits): every one of
#     its own members is curated there.
#   Tools/check-docs-coverage.sh MODULE ARCHIVE CATALOG
set -euo pipefail
module=$1 archive=$2 catalog=$3
data="$archive/data/documentation"
lower() { tr '[:upper:]' '[:lower:]'; }

pages=("$data/$(echo "$module" | lower).json")
shopt -s nullglob
for extension in "$catalog"/Extensions/*.md; do
    # "# ``Cabinet/ObjectStore``" -> data/documentation/cabinet/objectstore.json
    symbol=$(sed -n '1s/^# ``\(.*\)``$/\1/p' "$extension")
    [ -n "$symbol" ] || { echo "check-docs-coverage: $extension does not start with # \`\`Symbol\`\`" >&2; exit 1; }
    case $symbol in "$module"/*) ;; *) symbol="$module/$symbol" ;; esac
    pages+=("$data/$(echo "$symbol" | lower).json")
done

missing=0
for page in "${pages[@]}"; do
    [ -f "$page" ] || { echo "check-docs-coverage: no page $page" >&2; missing=1; continue; }
    # Each uncurated symbol as "Group: last/path/component".
    uncurated=$(jq -r '.topicSections[]? | select(.generated == true and .title != "Default Implementations")
                       | .title as $group | .identifiers[] | "\($group): \(split("/") | last)"' "$page")
    if [ -n "$uncurated" ]; then
        echo "check-docs-coverage: ${page#"$data/"} has symbols in no topic group of $catalog:" >&2
        echo "$uncurated" | sed 's/^/    /' >&2
        missing=1
    fi
done
[ "$missing" = 0 ] || { echo "check-docs-coverage: curate them in a ## Topics section (root page or Extensions/*.md)" >&2; exit 1; }
echo "check-docs-coverage: $module: every public symbol is in a topic group (${#pages[@]} pages checked)"
