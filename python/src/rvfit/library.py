"""rvfit.Library: a template library with its grid and arms, and -2 ln L
of spectra evaluated by a backend plugin."""
from collections import namedtuple

import numpy as np

from .session import Session
from .spectra import as_spectra

Axis = namedtuple("Axis", "name unit log10 nodes")
LibArm = namedtuple("LibArm", "name lnl0 dlnl npix sigma_kms wave")


class Library:
    """The template library at `path` (a directory made by `rvfit
    templates`, or its rvfit_library.fits).

    config: optional rvfit INI file; settings: further keys as
    {"section.key": value}, e.g. {"templates.cubic": "teff",
    "fit.vmin": -600}, applied after it (like `rvfit fit --set`).
    """

    def __init__(self, path, config=None, settings=None):
        self._s = Session()
        if config is not None:
            self._s.load_config(config)
        for k, v in (settings or {}).items():
            self.set(k, v)
        self._s.open_library(path)
        self.path = str(path)
        self.axes = [Axis(*a) for a in self._s.axes()]
        self.arms = [LibArm(n, l0, dl, npix, skms,
                            np.exp(l0 + dl * np.arange(npix)))
                     for n, l0, dl, npix, skms in self._s.arms()]
        shape = tuple(len(a.nodes) for a in self.axes)
        self.exists = self._s.exists().reshape(shape)

    def set(self, key, value):
        """Set "section.key" (the section may contain dots:
        "backend.cpu.threads" is section backend.cpu, key threads)."""
        section, _, k = key.rpartition(".")
        if not section:
            raise ValueError("setting %r: use section.key" % key)
        self._s.set(section, k, value)

    @property
    def params(self):
        """Names of the parameters (the library's axes), in theta order."""
        return [a.name for a in self.axes]

    @property
    def grid(self):
        """{parameter: nodes in physical units}."""
        return {a.name: a.nodes for a in self.axes}

    def device(self, backend="cpu"):
        """The device the backend evaluates on, e.g. 'cpu: 2 threads'."""
        self._s.backend(backend)
        return self._s.device()

    def close(self):
        self._s.close()

    def loglike(self, spectra, theta, v, vsini=0.0, backend="cpu",
                spec=None, per_arm=False):
        """-2 ln L of spectra at points (theta, v, vsini), evaluated by the
        backend plugin `backend` in one batch.

        theta: (nparam,) or (n, nparam) in physical units, order
            self.params; v, vsini: km/s, numbers or (n,).
        spec: which spectrum each point belongs to; by default every point
            is of spectrum 0 for a single spectrum, point k of spectrum k
            when there are as many points as spectra, and a single point is
            evaluated for every spectrum.
        Returns m2lnl (n,) including the out-of-grid penalty, and with
        per_arm also chi^2 per arm (n, narm) (‖D − S a‖², the CHISQ_<ARM>
        of rvtab).  Spectra (rvfit.Spectra) stay loaded between calls
        with the same object.
        """
        sp = as_spectra(spectra)
        theta = np.atleast_2d(np.asarray(theta, dtype=np.float64))
        if theta.shape[1] != len(self.axes):
            raise ValueError("theta has %d parameters, the library %d (%s)"
                             % (theta.shape[1], len(self.axes),
                                ", ".join(self.params)))
        v = np.atleast_1d(np.asarray(v, dtype=np.float64))
        vsini = np.atleast_1d(np.asarray(vsini, dtype=np.float64))
        n = max(len(theta), len(v), len(vsini))
        if spec is None:
            if sp.nspec == 1:
                spec = np.zeros(n, dtype=np.uint32)
            elif n == sp.nspec:
                spec = np.arange(n, dtype=np.uint32)
            elif n == 1:
                n = sp.nspec
                spec = np.arange(n, dtype=np.uint32)
            else:
                raise ValueError("%d points for %d spectra: give spec=" %
                                 (n, sp.nspec))
        spec = np.atleast_1d(np.asarray(spec))
        n = max(n, len(spec))
        try:
            spec, theta, v, vsini = (
                np.broadcast_to(spec, (n,)),
                np.broadcast_to(theta, (n, theta.shape[1])),
                np.broadcast_to(v, (n,)), np.broadcast_to(vsini, (n,)))
        except ValueError:
            raise ValueError("spec, theta, v and vsini do not broadcast to "
                             "%d points" % n) from None
        if np.any(spec < 0) or np.any(spec >= sp.nspec):
            raise ValueError("spec outside 0..%d" % (sp.nspec - 1))
        self._s.backend(backend)
        self._s.load(sp)
        m2lnl, chisq = self._s.chisq(spec, theta, v, vsini, len(sp.arms))
        return (m2lnl, chisq) if per_arm else m2lnl
