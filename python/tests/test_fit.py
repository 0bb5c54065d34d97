"""rvfit.fit on spectra read with astropy gives what `rvfit fit` wrote for
the same file: the same pipeline, so every column is equal bit for bit."""
import os

import numpy as np

import rvfit


def _same(a, b, cols):
    for c in cols:
        np.testing.assert_array_equal(np.asarray(a[c], dtype=float),
                                      np.asarray(b[c], dtype=float),
                                      err_msg="column " + c)


def test_fit_equals_cli(data, lib, spectra):
    cli = rvfit.read_rvtab(data["rvtab"])
    py = rvfit.fit(spectra, lib)
    np.testing.assert_array_equal(py["TARGETID"], cli["TARGETID"])
    cols = [c for c in py.colnames if c != "TARGETID"]
    # every RVTAB column of the CLI, in the CLI's order
    assert cols == cli.colnames[:len(cols)]
    _same(py, cli, cols)
    assert py["VRAD"].unit == cli["VRAD"].unit
    assert py["RVS_WARN"].dtype == np.int32 and py["SUCCESS"].dtype == bool


def test_fit_recovers_truth(data, lib, spectra):
    """Against the mock's truth table (not produced by the fit)."""
    py = rvfit.fit(spectra, lib)
    truth = rvfit.read_rvtab(data["truth"], hdu=1)
    assert list(truth["TARGETID"]) == list(py["TARGETID"])
    pull = (py["VRAD"] - truth["VRAD"]) / py["VRAD_ERR"]
    assert np.all(np.abs(py["VRAD"] - truth["VRAD"]) < 5.0)
    assert np.sqrt(np.mean(pull ** 2)) < 3.0
    assert np.all(np.abs(py["TEFF"] - truth["TEFF"]) < 500)


def test_models_and_batches(data, lib, spectra):
    """Models equal rvmod's; batches of 5 give the same table."""
    whole = rvfit.fit(spectra, lib, models=True)
    parts = rvfit.fit(spectra, lib, models=True, batch_size=5)
    _same(parts, whole, [c for c in whole.colnames if not
                         c.endswith("_MODEL")])
    mod = rvfit.read_rvmod(data["rvmod"])
    for arm in ("B", "R", "Z"):
        np.testing.assert_array_equal(whole[arm + "_MODEL"],
                                      mod[arm + "_MODEL"])
        np.testing.assert_array_equal(parts[arm + "_MODEL"],
                                      mod[arm + "_MODEL"])


def test_fit_settings_reach_the_fit(data, spectra):
    """[fit] vmax below the true velocities: VRAD stays inside it and the
    RV warning is set (the settings are the CLI's [fit] keys)."""
    lib = rvfit.Library(data["lib"])
    try:
        t = rvfit.fit(spectra[:3], lib, vmin=-50, vmax=50)
    finally:
        lib.close()
    fast = np.abs(rvfit.read_rvtab(data["rvtab"])["VRAD"][:3]) > 60
    assert np.all(np.abs(t["VRAD"][fast]) <= 60)
    assert np.all(t["RVS_WARN"][fast] & 2)


def test_masked_pixels_like_cli(data, lib):
    """MASK != 0 pixels (given ivar > 0 here on purpose) are dropped by
    read_desi as by the desi plugin: equal fits, NPIX_TOT lower by exactly
    the number masked."""
    import subprocess
    from astropy.io import fits
    path = str(data["dir"] / "masked.fits")
    with fits.open(data["coadd"]) as f:
        f["B_MASK"].data[0, 1000:1200] = 4
        f["R_MASK"].data[3, 2000:2050] = 1
        assert np.all(f["B_IVAR"].data[0, 1000:1200] > 0)
        assert np.all(f["R_IVAR"].data[3, 2000:2050] > 0)
        f.writeto(path)
    out = str(data["dir"] / "masked")
    subprocess.run([os.environ["RVFIT_BIN"], "fit", "--templates",
                    data["lib"], "--output-dir", out, "--log-level", "warn",
                    path], check=True)
    cli = rvfit.read_rvtab(os.path.join(out, "rvtab_masked.fits"))
    py = rvfit.fit(rvfit.read_desi(path), lib)
    _same(py, cli, [c for c in py.colnames])
    orig = rvfit.read_rvtab(data["rvtab"])
    assert orig["NPIX_TOT"][0] - py["NPIX_TOT"][0] == 200
    assert orig["NPIX_TOT"][3] - py["NPIX_TOT"][3] == 50
