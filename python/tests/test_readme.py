"""The README's Python example runs as written, on the mock coadd standing
in for the demo's, and prints the CLI's velocities and ln L at the first
star's optimum (given in m/s there, in km/s here)."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import rvfit

README = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")


def _example():
    text = open(README).read()
    sec = text[text.index("### Python"):]
    return re.search(r"```python\n(.*?)```", sec, re.S).group(1)


def test_readme_example(data):
    code = _example()
    assert len(code.strip().splitlines()) == 7
    d = data["dir"] / "readme"
    (d / "demo").mkdir(parents=True)
    os.symlink(data["lib"], d / "demo" / "lib")
    os.symlink(data["coadd"], d / "demo" / "coadd-demo.fits")
    r = subprocess.run([sys.executable, "-c", code], cwd=d,
                       capture_output=True, text=True, env=os.environ)
    assert r.returncode == 0, r.stderr
    cli = rvfit.read_rvtab(data["rvtab"])
    for i in (0, 11):
        line = next(l for l in r.stdout.splitlines()
                    if l.split() and l.split()[0] == str(cli["TARGETID"][i]))
        assert abs(float(line.split()[1]) - cli["VRAD"][i]) < 1e-9, line
    last = r.stdout.splitlines()[-1]
    assert last.startswith("[") and last.endswith("]"), last
    lib = rvfit.Library(data["lib"])
    try:
        th = [cli[p][0] for p in lib.params]
        want = lib.loglike(rvfit.read_desi(data["coadd"])[0], th,
                           float(cli["VRAD"][0]), 0.0)[0]
    finally:
        lib.close()
    assert np.isfinite(want)
    assert float(last.strip("[]")) == pytest.approx(want, rel=1e-6)
