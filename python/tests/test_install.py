"""`pip install ./python` gives an importable package that finds this
build's librvfit (offline: Debian's setuptools, no build isolation)."""
import os
import shutil
import subprocess
import sys

import pytest

SRC = os.path.join(os.path.dirname(__file__), "..")


def test_pip_install(data, tmp_path):
    pytest.importorskip("pip")
    pytest.importorskip("setuptools")
    src = tmp_path / "src"  # a copy: pip's build files stay out of the tree
    shutil.copytree(SRC, src, ignore=shutil.ignore_patterns(
        "build", "*.egg-info", "__pycache__", "tests"))
    target = tmp_path / "site"
    r = subprocess.run([sys.executable, "-m", "pip", "install", "-q",
                        "--no-build-isolation", "--no-deps", "--no-index",
                        "--target", str(target), str(src)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    env = dict(os.environ, PYTHONPATH=str(target))
    code = ("import rvfit; print(rvfit.__file__); "
            "print(rvfit.Library(%r).params)" % data["lib"])
    r = subprocess.run([sys.executable, "-c", code], capture_output=True,
                       text=True, env=env, cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0].startswith(str(target))
    assert "['TEFF', 'LOGG', 'FEH', 'ALPHAFE']" in r.stdout
