#!/bin/bash
# test_docs_config.sh — docs/configuration.md is exactly what
# `rvfit config --markdown` prints for the plugins of this build (the
# core keys from the parser's table, the plugin sections from the
# descriptors): a key, default or help text changed in the code without
# regenerating the document fails here, and so does an edit by hand.
# Skips (77) when this configuration did not build every plugin the
# document lists (e.g. -DRVFIT_CUDA=OFF): its output would lack them.
set -u
doc=${RVFIT_SOURCE_DIR:?}/docs/configuration.md
built=",${RVFIT_PLUGINS_BUILT:?},"
[ -r "$doc" ] || { echo "FAIL: $doc missing"; exit 1; }
missing=""
for s in $(grep -oE '^\| `\[(backend|instrument)\.[A-Za-z0-9_]+\]`' "$doc" |
           grep -oE '(backend|instrument)\.[A-Za-z0-9_]+'); do
    t=rvfit_${s/./_}
    case $built in *,"$t",*) ;; *) missing="$missing $t" ;; esac
done
if [ -n "$missing" ]; then
    echo "SKIPPED: docs/configuration.md documents plugins this configuration did not build:$missing"
    exit 77
fi
out=${RVFIT_TEST_TMP:?}/configuration.md
mkdir -p "$RVFIT_TEST_TMP"
"${RVFIT_BIN:?}" config --markdown "${RVFIT_PLUGIN_PATH:?}" > "$out" ||
    { echo "FAIL: rvfit config --markdown exited $?"; exit 1; }
if ! diff -u "$doc" "$out"; then
    echo "FAIL: docs/configuration.md differs from \`rvfit config --markdown\` (above: - committed, + generated)."
    echo "      Regenerate: build/rvfit config --markdown build/plugins > docs/configuration.md"
    exit 1
fi
echo "test_docs_config: docs/configuration.md matches ($(wc -l < "$doc") lines)"
