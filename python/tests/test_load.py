"""Where librvfit is loaded from: the package's own copy first (what pip
installs), then RVFIT_LIB, RVFIT_BUILD_DIR, pkg-config and the linker;
a failure lists every place tried.  Each case runs in a fresh
interpreter (a process loads librvfit once) on a copy of the package."""
import os
import re
import shutil
import subprocess
import sys

import pytest

SRC = os.path.join(os.path.dirname(__file__), "..", "src", "rvfit")
# The libraries' soname major (the plugin ABI major, rvfit/abi.h), as the
# package's loader names them.
with open(os.path.join(SRC, "_lib.py")) as _f:
    ABI = re.search(r"^ABI_MAJOR = (\d+)$", _f.read(), re.M).group(1)
LIBRVFIT = "librvfit.so." + ABI
LIBSDK = "librvfit_sdk.so." + ABI
CODE = ("import sys, warnings, rvfit, rvfit._lib as L\n"
        "warnings.simplefilter('always')\n"
        "lib = rvfit.Library(sys.argv[1])\n"
        "print(L.lib()._name)\n")


@pytest.fixture
def pkg(tmp_path):
    """A copy of the package at tmp/site/rvfit, without a lib/ of its
    own."""
    site = tmp_path / "site"
    shutil.copytree(SRC, site / "rvfit",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return site


def _run(site, lib, **env):
    e = {k: v for k, v in os.environ.items()
         if not k.startswith(("RVFIT_", "PKG_CONFIG", "LD_LIBRARY"))}
    e.update(PYTHONPATH=str(site), **env)
    return subprocess.run([sys.executable, "-c", CODE, lib], env=e,
                          capture_output=True, text=True, cwd=str(site))


def _build():
    b = os.environ.get("RVFIT_BUILD_DIR")
    if not b:
        pytest.skip("RVFIT_BUILD_DIR not set (run through ctest)")
    return b


def test_nothing_found_lists_all_tried(data, pkg):
    r = _run(pkg, data["lib"])
    if r.returncode == 0:
        pytest.skip("an rvfit is installed on this machine: %s" % r.stdout)
    err = r.stderr.splitlines()[-1]
    assert err.startswith("ImportError: rvfit: cannot load librvfit; tried ")
    own = os.path.join(str(pkg), "rvfit", "lib", LIBRVFIT)
    assert "%s (no such file)" % own in err
    assert LIBRVFIT + " (" in err and "pip install ./python" in err


def test_build_dir_when_the_package_has_none(data, pkg):
    b = _build()
    r = _run(pkg, data["lib"], RVFIT_BUILD_DIR=b)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[0] == os.path.join(b, "core", LIBRVFIT)


def test_package_copy_first(data, pkg):
    """With a librvfit inside the package (here the build's, linked in)
    RVFIT_LIB is not used, and a warning says so."""
    b = _build()
    (pkg / "rvfit" / "lib").mkdir()
    for n in (LIBRVFIT, LIBSDK):
        os.symlink(os.path.join(b, "core", n), pkg / "rvfit" / "lib" / n)
    r = _run(pkg, data["lib"], RVFIT_LIB="/nonexistent/librvfit.so")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[0] == str(pkg / "rvfit" / "lib" / LIBRVFIT)
    assert "RVFIT_LIB ignored" in r.stderr
