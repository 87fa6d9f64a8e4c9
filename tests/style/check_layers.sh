#!/bin/sh
# The dependency rule of docs/DESIGN.md ("Layers"): a file of src/ includes headers only from
# its own layer and the layers below it. Layers, bottom to top:
LAYERS="runtime core fabric channel pt2pt coll comm rma api io fortran"
# Usage: check_layers.sh SOURCE_DIR. Prints every include that goes up and fails if any does.
src="$1/src"
rank() {
    i=0
    for l in $LAYERS; do
        [ "$l" = "$1" ] && { echo $i; return; }
        i=$((i + 1))
    done
    echo -1
}
bad=0
for f in $(find "$src" -name '*.c' -o -name '*.h' | sort); do
    rel=${f#"$src"/}
    layer=${rel%%/*}
    lr=$(rank "$layer")
    if [ "$lr" -lt 0 ]; then
        [ "$rel" = "$layer" ] && continue # files at the top of src/ (the version script)
        echo "check_layers: $rel is in '$layer', which is not a layer of docs/DESIGN.md"
        bad=1
        continue
    fi
    for inc in $(sed -n 's/^#include "\([a-z0-9_]*\)\/.*/\1/p' "$f" | sort -u); do
        ir=$(rank "$inc")
        if [ "$ir" -gt "$lr" ]; then
            echo "check_layers: $rel ($layer) includes from $inc, a layer above it"
            bad=1
        fi
    done
done
[ $bad = 0 ] && echo "check_layers: every include of src/ goes down or stays in its layer"
exit $bad
