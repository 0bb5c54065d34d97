"""Library.m2lnl and .loglike: the backend's -2 ln L and ln L of numpy
spectra, checked against the CLI's chi^2 at its optimum and the shape of
the likelihood in v."""
import numpy as np
import pytest

import rvfit


def _best(t, lib):
    return np.array([[t[p][i] for p in lib.params] for i in range(len(t))])


def test_grid(lib):
    assert lib.params == ["TEFF", "LOGG", "FEH", "ALPHAFE"]
    # the small mock grid (tools' "small" preset)
    np.testing.assert_allclose(lib.grid["TEFF"][[0, -1]], [4000, 7000])
    np.testing.assert_allclose(lib.grid["LOGG"], [1, 2, 3, 4, 5])
    assert [a.name for a in lib.arms] == ["B", "R", "Z"]
    assert lib.exists.shape == tuple(len(v) for v in lib.grid.values())
    b = lib.arms[0]
    assert b.wave[0] < 3600 < 5900 < b.wave[-1]


def test_chisq_at_cli_optimum(data, lib, spectra):
    """chi^2 per arm at (VRAD, VSINI, parameters) of the CLI's rvtab is its
    CHISQ_<ARM> (same backend, same point)."""
    t = rvfit.read_rvtab(data["rvtab"])
    m2lnl, chisq = lib.m2lnl(spectra, _best(t, lib), t["VRAD"], t["VSINI"],
                             per_arm=True)
    assert m2lnl.shape == (12,) and chisq.shape == (12, 3)
    lnl, chisq2 = lib.loglike(spectra, _best(t, lib), t["VRAD"], t["VSINI"],
                              per_arm=True)
    np.testing.assert_array_equal(lnl, -0.5 * m2lnl)
    np.testing.assert_array_equal(chisq2, chisq)
    for a, arm in enumerate("BRZ"):
        np.testing.assert_allclose(chisq[:, a], t["CHISQ_" + arm],
                                   rtol=1e-12)
    np.testing.assert_allclose(chisq.sum(1), t["CHISQ_TOT"], rtol=1e-12)


def test_maximum_in_v(data, lib, spectra):
    """ln L is highest at VRAD and falls by about 1/2 at VRAD +- VRAD_ERR
    (VRAD_ERR is the width of L in v)."""
    t = rvfit.read_rvtab(data["rvtab"])
    th = _best(t, lib)
    fall = []
    for i in range(len(t)):
        v0, dv = t["VRAD"][i], t["VRAD_ERR"][i]
        v = v0 + dv * np.array([-1.0, 0.0, 1.0])
        m = lib.loglike(spectra[i:i + 1], th[i], v, t["VSINI"][i])
        assert m[1] > m[0] and m[1] > m[2], (i, m)
        fall.append(m[1] - 0.5 * (m[0] + m[2]))
    assert 0.25 < np.median(fall) < 1.0, fall


def test_points_of_one_spectrum_in_a_batch(data, lib, spectra):
    """A spectrum evaluated alone or inside the 12-spectrum batch (spec=)
    gives the same numbers."""
    t = rvfit.read_rvtab(data["rvtab"])
    th = _best(t, lib)[4]
    v = np.linspace(-300, 300, 7)
    alone = lib.m2lnl(spectra[4:5], th, v, 0.0)
    inbatch = lib.m2lnl(spectra, th, v, 0.0, spec=np.full(7, 4))
    np.testing.assert_allclose(alone, inbatch, rtol=1e-12)


def _lsf_sigma(res, wave):
    """Gaussian sigma (A) of each band-matrix column: its second moment
    less the pixel box's 1/12 (rvfit integrates an LSF over the pixels)."""
    nd = res.shape[1]
    k = np.arange(nd)[:, None] - nd // 2
    dl = np.gradient(wave)[None, None, :]
    w = np.clip(res, 0, None)
    mean = (w * k).sum(1) / w.sum(1)
    var = (w * (k - mean[:, None]) ** 2).sum(1) / w.sum(1)
    return np.sqrt(np.clip(var - 1.0 / 12.0, 0.01, None)) * dl[0]


def test_lsf_spectra(data, lib, spectra):
    """The same stars with a Gaussian LSF of the band matrices' width
    instead of the matrices: the maximum in v stays within 2 km/s."""
    t = rvfit.read_rvtab(data["rvtab"])
    arms = [rvfit.Arm(a.name, a.wave, a.flux, a.ivar,
                      lsf=_lsf_sigma(a.resolution, a.wave))
            for a in spectra.arms]
    lsf = rvfit.Spectra(arms)
    th = _best(t, lib)
    for i in (0, 4, 7):
        v = t["VRAD"][i] + np.arange(-10, 10.01, 0.25)
        m = lib.loglike(lsf[i:i + 1], th[i], v, t["VSINI"][i])
        assert abs(v[np.argmax(m)] - t["VRAD"][i]) < 2.0


def test_errors(lib, spectra):
    with pytest.raises(ValueError, match="4"):
        lib.loglike(spectra, [5000, 4.5], 0.0)
    a = spectra.arms[0]
    bad = rvfit.Spectra([rvfit.Arm("Q", a.wave, a.flux, a.ivar)])
    with pytest.raises(rvfit.RvfitError, match="arm 'Q' is not in"):
        lib.loglike(bad, [5000, 4.5, 0, 0], 0.0)
    with pytest.raises(rvfit.RvfitError, match="backend 'nosuch'"):
        lib.loglike(spectra, [5000, 4.5, 0, 0], 0.0, backend="nosuch")
