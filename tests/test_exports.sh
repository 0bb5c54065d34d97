#!/bin/bash
# test_exports.sh — each core library exports exactly the documented API:
# every dynamic symbol is rvfit_* (plus the RVFIT_<major> version node), and
# every one is declared RVFIT_EXPORT in that library's own public headers
# (so an internal function such as a fit stage cannot leak, and the SDK
# does not export engine functions or the reverse).
set -euo pipefail
: "${RVFIT_BIN:?}" "${RVFIT_SOURCE_DIR:?}"
build=$(dirname "$RVFIT_BIN")
fail=0
for part in sdk:librvfit_sdk engine:librvfit tools:librvfit_tools; do
  dir=${part%%:*} lib=${part#*:}
  so="$build/core/$lib.so"
  [ -e "$so" ] || { echo "FAIL: $so not built"; exit 1; }
  syms=$(nm -D --defined-only "$so" | awk '{print $3}' | sed 's/@.*//' | sort -u)
  # declared names: RVFIT_EXPORT <type...> rvfit_name(
  declared=$(cat "$RVFIT_SOURCE_DIR"/core/$dir/include/rvfit/*.h | tr '\n' ' ' |
             grep -oE 'RVFIT_EXPORT[^;(]*\brvfit_[a-z0-9_]+ *\(' |
             grep -oE 'rvfit_[a-z0-9_]+ *\($' | tr -d ' (' | sort -u)
  n=0
  for s in $syms; do
    case $s in RVFIT_[0-9]*) continue ;; esac
    n=$((n + 1))
    # here-strings, not pipes: with pipefail, grep -q closing the pipe
    # early can kill echo with SIGPIPE and fail a correct check
    if ! grep -qx "$s" <<< "$declared"; then
      echo "FAIL: $lib exports $s, not declared RVFIT_EXPORT in core/$dir/include"
      fail=1
    fi
  done
  for d in $declared; do
    grep -qx "$d" <<< "$syms" || { echo "FAIL: $lib lacks declared $d"; fail=1; }
  done
  echo "$lib: $n symbols, all documented"
done
[ $fail = 0 ] && echo "test_exports: passed"
exit $fail
