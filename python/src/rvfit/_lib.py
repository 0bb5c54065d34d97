"""Locating librvfit and declaring the C functions of rvfit/session.h.

The library is looked for, in order, at
  1. the package's own copy, <package>/lib/librvfit.so.3, which
     `pip install` builds with its plugins (<package>/lib/rvfit/plugins)
     and program (<package>/bin/rvfit);
  2. $RVFIT_LIB: the librvfit shared object itself or the directory holding it;
  3. $RVFIT_BUILD_DIR: a CMake build directory of rvfit (its core/librvfit.so);
  4. pkg-config's libdir of the `rvfit` package (an installed rvfit);
  5. the dynamic linker's search path (librvfit.so.3, librvfit.so).
The package's copy comes first so that the library, its plugins and the
program of one installation are used together; 2-5 serve a package used
from the source tree (PYTHONPATH=python/src) or installed without its C
side.  librvfit finds its backend plugins relative to itself, so a build
tree's library uses that build's plugins and an installed one the
installed plugins.
"""
import ctypes
import functools
import os
import subprocess
import warnings

ABI_MAJOR = 3
_NAMES = ("librvfit.so.%d" % ABI_MAJOR, "librvfit.so")


class RvfitError(RuntimeError):
    """An rvfit status other than OK; the message is rvfit's own."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


PACKAGE_LIBDIR = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                              "lib")


def _fallbacks():
    """Where to look when the package has no librvfit of its own."""
    env = os.environ.get("RVFIT_LIB")
    if env:
        if os.path.isdir(env):
            yield from (os.path.join(env, n) for n in _NAMES)
        else:
            yield env
        return
    build = os.environ.get("RVFIT_BUILD_DIR")
    if build:
        yield from (os.path.join(build, "core", n) for n in _NAMES)
    try:
        libdir = subprocess.run(
            ["pkg-config", "--variable=libdir", "rvfit"], check=True,
            capture_output=True, text=True).stdout.strip()
        if libdir:
            yield from (os.path.join(libdir, n) for n in _NAMES)
    except (OSError, subprocess.CalledProcessError):
        pass
    yield from _NAMES


def _preload_sdk(path):
    """librvfit_sdk from librvfit's own directory first: an installed
    librvfit carries no run path, and its prefix need not be on the
    linker's path."""
    d = os.path.dirname(path)
    for n in ("librvfit_sdk.so.%d" % ABI_MAJOR, "librvfit_sdk.so"):
        if d and os.path.exists(os.path.join(d, n)):
            ctypes.CDLL(os.path.join(d, n), mode=ctypes.RTLD_GLOBAL)
            return


def _load_own(path):
    """The package's own librvfit: it loads, or the reason is the error
    (another librvfit would not match the package's plugins and program)."""
    try:
        _preload_sdk(path)
        c = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    except OSError as e:
        raise ImportError(
            "rvfit: cannot load the package's librvfit %s (%s); the system "
            "libraries it was built against (CFITSIO, inih, Qhull, ...) "
            "must be installed: scripts/setup-deps.sh in rvfit's source "
            "tree lists them" % (path, e)) from None
    ignored = [v for v in ("RVFIT_LIB", "RVFIT_BUILD_DIR") if os.environ.get(v)]
    if ignored:
        warnings.warn("rvfit: using the package's own librvfit %s; %s "
                      "ignored (for a package installed without one)" %
                      (path, " and ".join(ignored)), stacklevel=3)
    return c


def _load():
    own = os.path.join(PACKAGE_LIBDIR, _NAMES[0])
    if os.path.exists(own):
        return _load_own(own)
    tried = ["%s (no such file)" % own]
    for path in _fallbacks():
        if os.sep in path and not os.path.exists(path):
            tried.append("%s (no such file)" % path)
            continue
        try:
            _preload_sdk(path)
            return ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise ImportError(
        "rvfit: cannot load librvfit; tried " + "; ".join(tried) +
        ". Install the package with its C side (pip install ./python in "
        "rvfit's source tree), or build rvfit (cmake) and set "
        "RVFIT_BUILD_DIR to the build directory or RVFIT_LIB to "
        "librvfit.so, or install it (cmake --install) where pkg-config or "
        "the linker finds it.")


_P = ctypes.c_void_p
_S = ctypes.c_char_p
_I = ctypes.c_int
_Z = ctypes.c_size_t
_D = ctypes.POINTER(ctypes.c_double)
_F = ctypes.POINTER(ctypes.c_float)
_U32 = ctypes.POINTER(ctypes.c_uint32)
_U8 = ctypes.POINTER(ctypes.c_uint8)
_E = ctypes.c_char_p  # rvfit_err: a char buffer of ERR_LEN bytes
ERR_LEN = 2048

_PROTOS = {
    "rvfit_session_new": (_I, [ctypes.POINTER(_P), _E]),
    "rvfit_session_free": (None, [_P]),
    "rvfit_session_load_config": (_I, [_P, _S, _E]),
    "rvfit_session_set": (_I, [_P, _S, _S, _S, _E]),
    "rvfit_session_open_library": (_I, [_P, _S, _E]),
    "rvfit_session_nparam": (_I, [_P]),
    "rvfit_session_axis": (_I, [_P, _I, _S, _S, _Z, ctypes.POINTER(_I),
                                ctypes.POINTER(_I), _D, _E]),
    "rvfit_session_narm": (_I, [_P]),
    "rvfit_session_arm": (_I, [_P, _I, _S, _Z, _D, _D,
                               ctypes.POINTER(_Z), _D, _E]),
    "rvfit_session_nmodel": (_Z, [_P]),
    "rvfit_session_exists": (_I, [_P, _U8, _E]),
    "rvfit_session_open_backend": (_I, [_P, _S, _E]),
    "rvfit_session_device": (_S, [_P]),
    "rvfit_session_batch_new": (_I, [_P, _Z, _I, _E]),
    "rvfit_session_batch_arm": (_I, [_P, _I, _S, _Z, _I, _D, _F, _F, _I,
                                     _I, _F, _E]),
    "rvfit_session_batch_load": (_I, [_P, _D, _E]),
    "rvfit_session_chisq": (_I, [_P, _Z, _U32, _D, _D, _D, _D, _D, _E]),
    "rvfit_session_fit": (_I, [_P, _I, _E]),
    "rvfit_session_ncol": (_I, [_P]),
    "rvfit_session_col": (_I, [_P, _I, _S, _S, _Z, _S, _E]),
    "rvfit_session_col_values": (_I, [_P, _I, _D, _E]),
    "rvfit_session_model": (_I, [_P, _I, _F, _E]),
}


@functools.lru_cache(maxsize=None)
def lib():
    """The loaded librvfit with its session functions declared (once)."""
    c = _load()
    for name, (res, args) in _PROTOS.items():
        f = getattr(c, name)
        f.restype = res
        f.argtypes = args
    return c


def call(name, *args):
    """Call rvfit_<name>(..., err); raise RvfitError on a failing status."""
    err = ctypes.create_string_buffer(ERR_LEN)
    rc = getattr(lib(), name)(*args, err)
    if rc != 0:
        raise RvfitError(rc, err.value.decode(errors="replace") or
                         "%s failed (status %d)" % (name, rc))
    return rc
