"""Shared data for the Python tests: the CTest fixture's template library
(RVFIT_TEST_DATA/lib, tests/fixture_demo.sh) and a 12-star mock DESI coadd
fitted once by the CLI ($RVFIT_BIN).  Run through ctest (test_e2e_python);
run by hand with RVFIT_BUILD_DIR, RVFIT_BIN and RVFIT_TEST_DATA set."""
import os
import subprocess

import pytest

import rvfit


def _env(name):
    v = os.environ.get(name)
    if not v:
        pytest.skip("%s not set (run through ctest -R test_e2e_python)" %
                    name)
    return v


@pytest.fixture(scope="session")
def data(tmp_path_factory):
    rv = _env("RVFIT_BIN")
    lib = os.path.join(_env("RVFIT_TEST_DATA"), "lib")
    d = tmp_path_factory.mktemp("py")
    coadd, truth = str(d / "coadd12.fits"), str(d / "truth12.fits")
    subprocess.run([rv, "mock", "spectra", "--instrument", "desi",
                    "--nstar", "12", "--seed", "7", "--snr-min", "8",
                    "--snr-max", "60", "--vmax", "300", "--vsini-max", "10",
                    "--out", coadd, "--truth", truth],
                   check=True)
    out = str(d / "out")
    subprocess.run([rv, "fit", "--templates", lib, "--instrument", "desi",
                    "--output-dir", out, "--log-level", "warn",
                    "--set", "output.chisq_v=1", coadd],
                   check=True)
    return {"lib": lib, "coadd": coadd, "truth": truth, "dir": d,
            "rvtab": os.path.join(out, "rvtab_coadd12.fits"),
            "rvmod": os.path.join(out, "rvmod_coadd12.fits")}


@pytest.fixture(scope="session")
def lib(data):
    lib = rvfit.Library(data["lib"])
    yield lib
    lib.close()


@pytest.fixture(scope="session")
def spectra(data):
    return rvfit.read_desi(data["coadd"])
