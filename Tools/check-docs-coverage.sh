#!/usr/bin/env bash
# Fails if a public symbol is in none of the catalog's own topic groups. DocC puts
# what no `## Topics` section curates into groups it makes up ("Classes",
# "Instance Methods"), marked `"generated": true` in the page's render JSON, so
# this reads the built archive rather than guess from the Markdown: every page of
# the module (the module, each type, each nested type, each extended type) may
# have no such group but "Default Implementations", which lists what a type
# inherits from its protocols (Equatable's !=, Collection's methods): not this
# module's API, and on pages of their own.
#   Tools/check-docs-coverage.sh MODULE ARCHIVE
set -euo pipefail
module=$1 archive=$2
data="$archive/data/documentation"
root="$data/$(echo "$module" | tr '[:upper:]' '[:lower:]')"
[ -f "$root.json" ] || { echo "check-docs-coverage: no page $root.json" >&2; exit 1; }
# The pages, NUL-separated: symbol pages are named after their symbols (`==(_:_:)`).
pages() {
    printf '%s\0' "$root.json"
    find "$root" -name '*.json' ! -name '*-implementations.json' -print0
}
count=$(pages | tr -cd '\0' | wc -c)

# Each uncurated symbol as "page: Group: symbol".
uncurated=$(pages | xargs -0 jq -r '.topicSections[]?
    | select(.generated == true and .title != "Default Implementations")
    | .title as $group | .identifiers[]
    | "\(input_filename | ltrimstr("'"$data/"'") | rtrimstr(".json")): \($group): \(split("/") | last)"')
if [ -n "$uncurated" ]; then
    echo "check-docs-coverage: $module: public symbols in no topic group of its catalog:" >&2
    echo "$uncurated" | sed 's/^/    /' >&2
    echo "check-docs-coverage: curate them in a ## Topics section (the module's page, or Extensions/<Type>.md)" >&2
    exit 1
fi
echo "check-docs-coverage: $module: every public symbol is in a topic group ($count pages checked)"
