"""read_rvtab / read_rvmod against the FITS cards and arrays as written."""
import warnings

import numpy as np
from astropy import units as u
from astropy.io import fits
from astropy.table import Table

import rvfit


def test_rvtab_units_and_values(data):
    t = rvfit.read_rvtab(data["rvtab"])
    assert len(t) == 12
    assert t["VRAD"].unit == u.km / u.s
    assert t["VRAD_ERR"].unit == u.km / u.s
    assert t["VSINI"].unit == u.km / u.s
    assert t["TEFF"].unit == u.K
    assert t["LOGG"].unit == u.dex
    assert t["CHISQ_TOT"].unit is None
    assert t["SUCCESS"].dtype == bool
    with fits.open(data["rvtab"]) as f:
        h, raw = f["RVTAB"].header, f["RVTAB"].data
        i = raw.columns.names.index("VRAD") + 1
        assert h["TUNIT%d" % i] == "km/s"
        np.testing.assert_array_equal(t["VRAD"], raw["VRAD"])
        np.testing.assert_array_equal(t["TARGETID"], raw["TARGETID"])
    assert t["VRAD"].description == "radial velocity (barycentric)"
    assert t.meta["PRIMARY"]["NSPEC"] == 12


def test_rvmod(data):
    m = rvfit.read_rvmod(data["rvmod"])
    assert len(m) == 12
    with fits.open(data["rvmod"]) as f:
        for arm in ("B", "R", "Z"):
            w = f[arm + "_WAVELENGTH"].data
            assert m[arm + "_MODEL"].shape == (12, len(w))
            assert m[arm + "_WAVELENGTH"].unit == u.AA
            np.testing.assert_array_equal(m[arm + "_WAVELENGTH"][5], w)
            np.testing.assert_array_equal(m[arm + "_MODEL"],
                                          f[arm + "_MODEL"].data)
    t = rvfit.read_rvtab(data["rvtab"])
    np.testing.assert_array_equal(m["TARGETID"], t["TARGETID"])


def test_astropy_reads_without_unit_warnings(data):
    """Table.read of every table HDU of rvtab and rvmod warns about no
    unit (dex is no FITS unit: its columns leave TUNIT empty and say
    "[dex]" in TCOMM, where read_rvtab finds it)."""
    with fits.open(data["rvtab"]) as f, fits.open(data["rvmod"]) as g:
        hdus = [(data["rvtab"], h.name) for h in f[1:]
                if isinstance(h, fits.BinTableHDU)]
        hdus += [(data["rvmod"], h.name) for h in g[1:]
                 if isinstance(h, fits.BinTableHDU)]
        h = f["RVTAB"].header
        i = f["RVTAB"].columns.names.index("LOGG") + 1
        assert h.get("TUNIT%d" % i, "") == ""
        assert h["TCOMM%d" % i].endswith("[dex]")
    assert ("RVTAB" in [n for _, n in hdus]) and len(hdus) >= 3
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for path, name in hdus:
            t = Table.read(path, hdu=name)
            assert len(t) == 12
    assert rvfit.read_rvtab(data["rvtab"])["FEH_ERR"].unit == u.dex
