#!/bin/bash
# test_cli_messages.sh — what the command line says back:
#  - a bad option value names the option as typed (-j, --threads, --set),
#    the config key and the reason, never "command line:0:";
#  - `rvfit templates` logs the smoothing each arm gets: the instrument's
#    sigma_kms when it sets one (sdss: 45 km/s), --sigma0 in A otherwise
#    (desi), and warns that --sigma0 does nothing when every arm is smoothed
#    in velocity.  (The grid does not exist: the log comes first, then the
#    error naming the missing file.)
#  - `rvfit --help` says how to run under mpirun, that --status keeps a
#    status file, and how many threads a rank takes; `rvfit fit --help`
#    lists --status; `rvfit --version` gives the program, the plugin ABI
#    and every plugin found with its version and the ABI it was built for.
set -uo pipefail
: "${RVFIT_BIN:?}" "${RVFIT_TEST_TMP:?}"
tmp=$RVFIT_TEST_TMP/cli_messages
rm -rf "$tmp" && mkdir -p "$tmp"
fail() { echo "FAIL: $*" >&2; exit 1; }

# expect STATUS PATTERN ARGS...: rvfit ARGS exits STATUS and prints PATTERN
expect() {
  local want=$1 pat=$2 out rc
  shift 2
  out=$("$RVFIT_BIN" "$@" 2>&1); rc=$?
  echo "$ rvfit $* -> $rc"; echo "$out"
  [ "$rc" = "$want" ] || fail "rvfit $*: exit $rc, expected $want"
  grep -qF -- "$pat" <<< "$out" || fail "rvfit $*: no '$pat'"
  grep -q "command line:0" <<< "$out" && fail "rvfit $*: 'command line:0'"
  return 0
}

expect 2 "option -j: [run] threads: 'abc' is not an integer" \
  fit -t "$tmp" -j abc x.fits
expect 2 "option --threads: [run] threads: 'abc' is not an integer" \
  fit -t "$tmp" --threads abc x.fits
expect 2 "option --batch-size: [run] batch_size: '-3' is not an integer" \
  fit -t "$tmp" --batch-size -3 x.fits
expect 2 "option --set: [fit] npoly: '33' is not an integer in [0, 32]" \
  fit -t "$tmp" --set fit.npoly=33 x.fits
expect 2 "option --set: unknown key 'foo' in section [fit]" \
  fit -t "$tmp" --set fit.foo=1 x.fits
expect 2 "--log-level loud: use error, warn, info or debug" fit -t "$tmp" --log-level loud x.fits
expect 2 "option -j: [run] threads: 'q'" \
  templates --grid "$tmp/none" --out "$tmp/lib" -j q

expect 1 "(smoothing B, R, Z 0.4 A;" \
  templates --grid "$tmp/none" --out "$tmp/lib" -i desi
expect 1 "(smoothing B, R, Z 0.25 A;" \
  templates --grid "$tmp/none" --out "$tmp/lib" -i desi --sigma0 0.25
expect 1 "(smoothing BOSS 45 km/s;" \
  templates --grid "$tmp/none" --out "$tmp/lib" -i sdss
expect 1 "--sigma0 has no effect: every arm of sdss is smoothed in velocity" \
  templates --grid "$tmp/none" --out "$tmp/lib" -i sdss --sigma0 0.5
out=$("$RVFIT_BIN" templates --grid "$tmp/none" --out "$tmp/lib" -i sdss 2>&1)
grep -q "sigma0\|0.4 A" <<< "$out" && fail "sdss templates log sigma0: $out"
expect 0 "mpirun -n N rvfit fit" --help
expect 0 "--status FILE" --help
expect 0 "share of its" --help
expect 0 "--status FILE      the job's status file" fit --help
expect 0 "mpirun -n 8 rvfit fit" fit --help
abi=$(sed -n 's/^#define RVFIT_ABI_MAJOR \([0-9]*\).*/\1/p' \
      "${RVFIT_SOURCE_DIR:?}/core/sdk/include/rvfit/abi.h")
expect 0 "plugin ABI $abi." --version
out=$("$RVFIT_BIN" --version 2>&1)
grep -qE "^  backend +cpu +[0-9.]+ +ABI $abi\.[0-9]+ " <<< "$out" ||
  fail "rvfit --version lists no cpu backend with its ABI: $out"
echo "test_cli_messages: passed"
