"""Real DESI coadds (tiles and healpix layout, $RVFIT_SHARED_DATA/desi),
read with astropy by rvfit.read_desi and fitted by rvfit.fit, give the
CLI's rvtab bit for bit (NaNs, masks and SCORES' S/N included)."""
import os
import subprocess

import numpy as np
import pytest

import rvfit

FILES = ["coadd-4-80613-thru20210324", "coadd-special-dark-27247"]


@pytest.mark.parametrize("stem", FILES)
def test_real_coadd_equals_cli(data, lib, stem):
    path = os.path.join(os.environ.get("RVFIT_SHARED_DATA", "/nonexistent"),
                        "desi", stem + ".fits")
    if not os.path.exists(path):
        pytest.skip("no real DESI data at %s" % path)
    out = str(data["dir"] / "real")
    subprocess.run([os.environ["RVFIT_BIN"], "fit", "--templates",
                    data["lib"], "--output-dir", out, "--overwrite",
                    "--log-level", "warn", path], check=True)
    cli = rvfit.read_rvtab(os.path.join(out, "rvtab_%s.fits" % stem))
    py = rvfit.fit(rvfit.read_desi(path), lib)
    assert len(cli) >= 1
    np.testing.assert_array_equal(py["TARGETID"], cli["TARGETID"])
    for c in py.colnames:
        np.testing.assert_array_equal(np.asarray(py[c], dtype=float),
                                      np.asarray(cli[c], dtype=float),
                                      err_msg=c)
