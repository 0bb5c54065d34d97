"""Spectra given as numpy arrays, in the layout librvfit's batches use."""
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from . import _units

RES_NONE, RES_BAND, RES_LSF = 0, 1, 2


def _frozen(a, dtype):
    a = np.ascontiguousarray(a, dtype=dtype)
    if a.base is not None or a.flags.writeable:
        a = a.copy()
    a.flags.writeable = False
    return a


@dataclass(frozen=True)
class Arm:
    """One arm of nspec spectra (vacuum Angstrom; ivar = 1/sigma^2, 0 for
    pixels not to use).  Arrays may be astropy Quantities: wave and lsf
    are converted to Angstrom, ivar to 1/flux.unit**2 (flux and ivar
    carry units both or neither); bare numbers are in those units.

    wave: (npix,) shared by all spectra, or (nspec, npix).
    flux, ivar: (nspec, npix), or (npix,) for a single spectrum.
    resolution: optional band matrix (nspec, ndiag, npix) in DESI's layout
        (the RESOLUTION HDU of a coadd).
    lsf: optional Gaussian LSF sigma in Angstrom, the pixel box excluded
        (rvfit integrates the Gaussian over each pixel): a number, (npix,)
        or (nspec, npix).  Give at most one of resolution and lsf; with
        neither the templates are used at the library's own resolution.
    """
    name: str
    wave: np.ndarray
    flux: np.ndarray
    ivar: np.ndarray
    resolution: Optional[np.ndarray] = None
    lsf: Optional[object] = None

    def normalised(self):
        """A checked copy: float64 wavelengths, float32 data, 2-D rows."""
        what = "arm %s" % self.name
        flux, ivar = _units.flux_ivar(self.flux, self.ivar, what)
        flux = np.atleast_2d(np.asarray(flux, dtype=np.float32))
        ivar = np.atleast_2d(np.asarray(ivar, dtype=np.float32))
        nspec, npix = flux.shape
        if ivar.shape != flux.shape:
            raise ValueError("arm %s: ivar %s but flux %s" %
                             (self.name, ivar.shape, flux.shape))
        wave = np.asarray(_units.wavelength(self.wave, what + " wave"),
                          dtype=np.float64)
        if wave.shape not in ((npix,), (nspec, npix)):
            raise ValueError("arm %s: wave %s for flux %s" %
                             (self.name, wave.shape, flux.shape))
        res = lsf = None
        if self.resolution is not None and self.lsf is not None:
            raise ValueError("arm %s: give resolution or lsf, not both" %
                             self.name)
        if self.resolution is not None:
            res = np.asarray(_units.dimensionless(
                self.resolution, what + " resolution"), dtype=np.float32)
            if res.ndim == 2:
                res = res[None]
            if res.ndim != 3 or res.shape[0] != nspec or \
                    res.shape[2] != npix:
                raise ValueError("arm %s: resolution %s, expected "
                                 "(%d, ndiag, %d)" %
                                 (self.name, res.shape, nspec, npix))
        if self.lsf is not None:
            lsf = np.broadcast_to(np.asarray(
                _units.wavelength(self.lsf, what + " lsf"),
                dtype=np.float32), (nspec, npix))
        return Arm(self.name, _frozen(wave, np.float64),
                   _frozen(flux, np.float32), _frozen(ivar, np.float32),
                   None if res is None else _frozen(res, np.float32),
                   None if lsf is None else _frozen(lsf, np.float32))

    @property
    def nspec(self):
        return np.atleast_2d(self.flux).shape[0]


class Spectra:
    """nspec spectra in one or more arms; arrays are copied and read-only,
    so that a Library can keep them loaded in its backend between calls.

    ids: optional identifiers (e.g. TARGETID), one per spectrum, copied
        into fit results as column `id_name`.
    snr: optional (nspec, narm) S/N per arm for the SN_<ARM> columns
        (default: the median of flux*sqrt(ivar), as rvfit computes it).
    """

    def __init__(self, arms: Sequence[Arm], ids=None, id_name="TARGETID",
                 snr=None):
        self.arms = tuple(a.normalised() for a in arms)
        if not self.arms:
            raise ValueError("spectra without arms")
        n = {a.nspec for a in self.arms}
        if len(n) != 1:
            raise ValueError("arms with different numbers of spectra: %s" %
                             sorted(n))
        self.nspec = n.pop()
        self.ids = None if ids is None else np.asarray(ids)
        if self.ids is not None and self.ids.shape != (self.nspec,):
            raise ValueError("ids %s for %d spectra" %
                             (self.ids.shape, self.nspec))
        self.id_name = id_name
        self.snr = None if snr is None else _frozen(
            np.broadcast_to(snr, (self.nspec, len(self.arms))), np.float64)

    def __len__(self):
        return self.nspec

    def __getitem__(self, rows):
        """The spectra of rows (an index, a slice or an index array) as
        Spectra."""
        if isinstance(rows, (int, np.integer)):
            rows = slice(rows, rows + 1 if rows != -1 else None)
        def take(x, ndim_rows):
            if x is None or x.ndim < ndim_rows:
                return x
            return x[rows]
        arms = [Arm(a.name, take(a.wave, 2), a.flux[rows], a.ivar[rows],
                    take(a.resolution, 3), take(a.lsf, 2))
                for a in self.arms]
        return Spectra(arms, None if self.ids is None else self.ids[rows],
                       self.id_name,
                       None if self.snr is None else self.snr[rows])


def as_spectra(obj):
    """Spectra from Spectra, a sequence of Arm, or a mapping arm name ->
    Arm or mapping with keys wave, flux, ivar[, resolution, lsf]."""
    if isinstance(obj, Spectra):
        return obj
    if isinstance(obj, Arm):
        return Spectra([obj])
    if hasattr(obj, "items"):
        arms = []
        for name, a in obj.items():
            arms.append(a if isinstance(a, Arm) else Arm(name=name, **a))
        return Spectra(arms)
    return Spectra(list(obj))
