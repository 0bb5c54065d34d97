"""Reading rvfit's outputs (docs/output-format.md) into astropy Tables."""
import numpy as np
from astropy.io import fits
from astropy.table import Table
from astropy import units as u


def _unit(s, comment=""):
    """A TUNIT string in astropy's generic format (km/s, K).  dex is no
    FITS unit, so rvfit leaves TUNIT empty for dex columns and ends their
    TCOMM with "[dex]" (docs/output-format.md)."""
    if s.strip():
        return u.Unit(s, parse_strict="silent")
    return u.dex if comment.rstrip().endswith("[dex]") else None


def _native(t):
    """Columns in native byte order (FITS data is big-endian), so that
    numpy, pandas and ctypes take them as they are."""
    for name in t.colnames:
        dt = t[name].dtype
        if dt.kind in "biuf" and not dt.isnative:
            t[name] = t[name].astype(dt.newbyteorder("="))
    return t


def read_rvtab(path, hdu="RVTAB"):
    """The RVTAB HDU of an rvtab_*.fits file as an astropy Table; units
    from TUNITn, descriptions from TCOMMn, the primary header (the run's
    configuration and provenance) in meta."""
    with fits.open(path) as f:
        h = f[hdu].header
        t = Table(f[hdu].data, masked=False)
        for i, name in enumerate(t.colnames, start=1):
            com = h.get("TCOMM%d" % i, "")
            t[name].unit = _unit(h.get("TUNIT%d" % i, ""), com)
            if "TCOMM%d" % i in h:
                t[name].description = com
        t.meta["PRIMARY"] = dict(f[0].header)
    return _native(t)


def read_rvmod(path):
    """The best-fit models of an rvmod_*.fits file as a Table with one row
    per spectrum (aligned with RVTAB): <ARM>_WAVELENGTH (Angstrom) and
    <ARM>_MODEL for each arm, plus the FIBERMAP columns when present."""
    t = Table()
    with fits.open(path) as f:
        arms = [h.name[:-len("_MODEL")] for h in f
                if h.name.endswith("_MODEL")]
        for a in arms:
            m = np.asarray(f[a + "_MODEL"].data)
            w = np.asarray(f[a + "_WAVELENGTH"].data, dtype=np.float64)
            if w.ndim == 1:
                w = np.broadcast_to(w, m.shape)
            t[a + "_WAVELENGTH"] = w
            t[a + "_WAVELENGTH"].unit = u.AA
            t[a + "_MODEL"] = m
        if "FIBERMAP" in f:
            fm = Table(f["FIBERMAP"].data)
            for c in fm.colnames:
                t[c] = fm[c]
        t.meta["PRIMARY"] = dict(f[0].header)
    return _native(t)
