"""Quantities are converted to rvfit's units or refused, never stripped;
bare numbers are km/s, K, dex and Angstrom; parameters by name equal
parameters by position; ln L is -inf outside the grid.

The values compared are the ln L of a bare-number call in rvfit's units,
at points chosen so that a stripped unit (1000x or 1e-3x the velocity,
10x the wavelength, 1e6x the ivar) changes ln L by far more than the
tolerance."""
import numpy as np
import pytest
from astropy import units as u
from astropy.table import QTable

import rvfit

KMS = u.km / u.s


@pytest.fixture(scope="module")
def star(data, lib, spectra):
    """Star 0 of the mock coadd at the CLI's optimum: spectra, theta (K,
    dex), v and vsini (km/s) as numbers."""
    t = rvfit.read_rvtab(data["rvtab"])
    th = np.array([t[p][0] for p in lib.params])
    return spectra[0:1], th, float(t["VRAD"][0]), float(t["VSINI"][0])


def test_velocity_units(lib, star):
    """v = VRAD given in km/s, m/s and Mm/s, and as a bare number: one
    ln L; a stripped unit would put v 1000x off (VRAD ~ 270 km/s)."""
    sp, th, v, vsini = star
    assert abs(v) > 50
    bare = lib.loglike(sp, th, v, vsini)[0]
    assert np.isfinite(bare)
    for q in (v * KMS, (v * 1000.0) * u.m / u.s, (v / 1000.0) * u.Mm / u.s):
        got = lib.loglike(sp, th, q, vsini * KMS)[0]
        assert got == pytest.approx(bare, rel=1e-10, abs=1e-8), q
    # the same velocity in km/s, m/s and Mm/s at 1 km/s
    one = [lib.loglike(sp, th, q)[0] for q in
           (1.0, 1.0 * KMS, 1000.0 * u.m / u.s, 0.001 * u.Mm / u.s)]
    np.testing.assert_allclose(one, one[0], rtol=1e-10)
    # and a list of Quantities, one per point
    two = lib.loglike(sp, th, [v * KMS, 1000.0 * u.m / u.s], vsini)
    np.testing.assert_allclose(
        two, [bare, lib.loglike(sp, th, 1.0, vsini)[0]], rtol=1e-10)
    # m2lnl converts the same way
    assert lib.m2lnl(sp, th, v * 1000 * u.m / u.s, vsini * KMS)[0] == \
        pytest.approx(-2 * bare, rel=1e-10)


def test_wrong_units_refused(lib, star):
    sp, th, v, _ = star
    with pytest.raises(u.UnitConversionError, match="^v: .*'K'.*km / s"):
        lib.loglike(sp, th, 5000 * u.K)
    with pytest.raises(u.UnitConversionError, match="^vsini: "):
        lib.loglike(sp, th, v, 3 * u.AA)
    with pytest.raises(u.UnitConversionError, match="parameter TEFF"):
        lib.loglike(sp, [5000 * KMS, 4.5, 0, 0], v)
    with pytest.raises(u.UnitConversionError, match="parameter LOGG"):
        lib.loglike(sp, v=v, teff=5000, logg=4.5 * u.K, feh=0, alphafe=0)
    with pytest.raises(u.UnitsError, match="by name"):
        lib.loglike(sp, th * u.K, v)
    with pytest.raises(u.UnitConversionError, match="setting fit.vmin"):
        lib.set("fit.vmin", -600 * u.K)


def test_parameter_units(lib, star):
    """Teff in K and in deg C, log g in dex(cm/s2) and dex(m/s2), [Fe/H]
    in dex: the bare-number ln L."""
    sp, th, v, vsini = star
    bare = lib.loglike(sp, th, v, vsini)[0]
    teff, logg, feh, alpha = th
    got = lib.loglike(sp, [(teff - 273.15) * u.deg_C,
                           (logg - 2.0) * u.dex(u.m / u.s ** 2),
                           feh * u.dex, alpha], v, vsini)[0]
    assert got == pytest.approx(bare, rel=1e-9)
    got = lib.loglike(sp, v=v, vsini=vsini, teff=teff * u.K,
                      logg=logg * u.dex(u.cm / u.s ** 2), feh=feh,
                      alphafe=alpha)[0]
    assert got == pytest.approx(bare, rel=1e-12)


def test_parameters_by_name(data, lib, spectra):
    """Keywords (any case), a dict and the rvtab Table itself (its columns
    carry K and dex) give the positional values for all 12 stars."""
    t = rvfit.read_rvtab(data["rvtab"])
    th = np.array([[t[p][i] for p in lib.params] for i in range(len(t))])
    pos = lib.loglike(spectra, th, t["VRAD"], t["VSINI"])
    assert np.all(np.isfinite(pos))
    kw = lib.loglike(spectra, v=t["VRAD"], vsini=t["VSINI"],
                     teff=th[:, 0], LOGG=th[:, 1], feh=th[:, 2],
                     alphafe=th[:, 3])
    np.testing.assert_array_equal(kw, pos)
    d = lib.loglike(spectra, dict(zip(lib.params, th.T)), t["VRAD"],
                    t["VSINI"])
    np.testing.assert_array_equal(d, pos)
    tab = lib.loglike(spectra, t, t["VRAD"], t["VSINI"])
    np.testing.assert_array_equal(tab, pos)
    # a table in other units: Teff in deg C, v in m/s
    q = QTable({"teff": (th[:, 0] - 273.15) * u.deg_C, "logg": th[:, 1],
                "feh": th[:, 2], "alphafe": th[:, 3]})
    got = lib.loglike(spectra, q, np.asarray(t["VRAD"]) * 1000 * u.m / u.s,
                      t["VSINI"])
    np.testing.assert_allclose(got, pos, rtol=1e-9)
    with pytest.raises(TypeError, match="unknown parameter.*tef"):
        lib.loglike(spectra, v=0.0, tef=5000, logg=4, feh=0, alphafe=0)
    with pytest.raises(KeyError, match="ALPHAFE is missing"):
        lib.loglike(spectra, {"teff": 5000, "logg": 4, "feh": 0}, 0.0)
    with pytest.raises(TypeError, match="not both"):
        lib.loglike(spectra, th[0], 0.0, teff=5000)
    with pytest.raises(TypeError, match="v .*required"):
        lib.loglike(spectra, th[0])


def test_outside_the_grid(lib, star):
    """ln L is -inf where a parameter leaves its axis' range; m2lnl keeps
    the backend's finite penalty there; on the edge ln L is finite; NaN is
    refused."""
    sp, th, v, vsini = star
    lo, hi = lib.grid["TEFF"][[0, -1]]
    pts = np.array([th, th, th, th, th])
    pts[1, 0], pts[2, 0], pts[3, 1], pts[4, 2] = hi, hi + 1.0, \
        lib.grid["LOGG"][-1] + 0.5, lib.grid["FEH"][0] - 0.01
    lnl = lib.loglike(sp, pts, v, vsini)
    assert np.all(np.isfinite(lnl[:2]))
    assert np.all(lnl[2:] == -np.inf)
    np.testing.assert_array_equal(lib.outside(pts), [0, 0, 1, 1, 1])
    m2 = lib.m2lnl(sp, pts, v, vsini)
    assert np.all(np.isfinite(m2))
    # the penalty: 1e4 per squared mean node spacing outside (limits.h),
    # in log10 Teff on this grid
    assert lib.axes[0].log10
    h = np.log10(hi / lo) / (len(lib.grid["TEFF"]) - 1)
    d = np.log10((hi + 1.0) / hi) / h
    assert m2[2] - m2[1] == pytest.approx(1e4 * d ** 2, rel=1e-6)
    pts[3, 1] = np.nan
    with pytest.raises(rvfit.RvfitError, match="point 3: LOGG = nan"):
        lib.loglike(sp, pts, v, vsini)


def test_spectra_units(lib, star):
    """Wavelengths in nm, LSF in nm, flux in Jy with ivar in 1/mJy^2: the
    bare-number ln L (Angstrom; ivar in 1/Jy^2 = 1e-6/mJy^2)."""
    sp, th, v, vsini = star
    arms = sp.arms
    bare = lib.loglike(rvfit.Spectra(
        [rvfit.Arm(a.name, a.wave, a.flux, a.ivar, lsf=1.0) for a in arms]),
        th, v, vsini)[0]
    q = rvfit.Spectra([rvfit.Arm(a.name, a.wave / 10.0 * u.nm,
                                 a.flux * u.Jy, a.ivar * 1e-6 / u.mJy ** 2,
                                 lsf=0.1 * u.nm) for a in arms])
    got = lib.loglike(q, th, v, vsini)[0]
    assert got == pytest.approx(bare, rel=1e-6)
    a = arms[0]
    with pytest.raises(u.UnitConversionError, match="arm B wave"):
        rvfit.Spectra([rvfit.Arm("B", a.wave * KMS, a.flux, a.ivar)])
    with pytest.raises(u.UnitsError, match="arm B: flux and ivar"):
        rvfit.Spectra([rvfit.Arm("B", a.wave, a.flux * u.Jy, a.ivar)])
    with pytest.raises(u.UnitConversionError, match="arm B ivar"):
        rvfit.Spectra([rvfit.Arm("B", a.wave, a.flux * u.Jy,
                                 a.ivar * u.Jy ** -1)])
