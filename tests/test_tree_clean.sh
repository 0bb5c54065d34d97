#!/bin/bash
# test_tree_clean.sh — no stray files at the top of the source tree: what
# git tracks there is the project's own set (a log a command left there,
# such as a fuzz run's, was once committed).  Skips outside a git checkout.
set -u
: "${RVFIT_SOURCE_DIR:?}"
cd "$RVFIT_SOURCE_DIR" || exit 1
if ! top=$(git ls-files 2>/dev/null | cut -d/ -f1 | sort -u) || [ -z "$top" ]; then
    echo "SKIPPED: not a git checkout"; exit 77
fi
allowed=" .ci .gitignore CMakeLists.txt README.md bench core docs instruments plugins python scripts tests "
fail=0
for e in $top; do
    case "$allowed" in
        *" $e "*) ;;
        *) echo "FAIL: '$e' is tracked at the top of the tree (not one of:$allowed)"; fail=1 ;;
    esac
done
logs=$(git ls-files '*.log')
[ -z "$logs" ] || { echo "FAIL: log files tracked: $logs"; fail=1; }
[ $fail = 0 ] && echo "test_tree_clean: passed"
exit $fail
