"""rvfit.fit: the CLI's fit of spectra held in numpy arrays."""
import numpy as np
from astropy import units as u
from astropy.table import Column, Table, vstack

from .spectra import as_spectra

_DTYPES = {"D": np.float64, "J": np.int32, "L": bool}


def _unit(s):
    return u.Unit(s, parse_strict="silent") if s else None


def _table(cols, sp, models):
    t = Table()
    for name, unit, typ, vals in cols:
        t[name] = Column(vals.astype(_DTYPES.get(typ, np.float64)),
                         unit=_unit(unit))
    if sp.ids is not None:
        t[sp.id_name] = sp.ids
    for name, m in models:
        t[name] = m
    return t


def fit(spectra, lib, backend="cpu", models=False, batch_size=256,
        **fit_settings):
    """Fit every spectrum as `rvfit fit` does (same stages, same backend
    plugin) and return the RVTAB columns as an astropy Table, one row per
    spectrum in order, with units; the spectra's ids as a column; with
    models=True also <ARM>_MODEL (nspec, npix) best-fit models.

    lib: rvfit.Library.  fit_settings: [fit] keys (vmin=-600, npoly=12,
    fit_vsini=False, ...) set on the library before fitting (they stay
    set).  Spectra are fitted in batches of batch_size; the results do not
    depend on it.
    """
    sp = as_spectra(spectra)
    for k, v in fit_settings.items():
        lib.set("fit." + k, v)
    lib._s.backend(backend)
    parts = []
    for r0 in range(0, sp.nspec, max(1, int(batch_size))):
        part = sp if batch_size >= sp.nspec else sp[r0:r0 + batch_size]
        lib._s.load(part)
        lib._s.fit(models)
        ms = [("%s_MODEL" % a.name,
               lib._s.model(i, part.nspec, a.flux.shape[1]))
              for i, a in enumerate(part.arms)] if models else []
        parts.append(_table(lib._s.columns(part.nspec), part, ms))
    return parts[0] if len(parts) == 1 else vstack(parts)
