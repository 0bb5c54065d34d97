"""rvfit.Library: a template library with its grid and arms, and ln L
of spectra evaluated by a backend plugin."""
from collections import namedtuple

import numpy as np
from astropy import units as u

from . import _units
from .session import Session
from .spectra import as_spectra

# -2 ln L a backend reports where the continuum fit is singular
# (RVFIT_M2LNL_FAIL, rvfit/limits.h).
M2LNL_FAIL = 1.0e30

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
        "backend.cpu.threads" is section backend.cpu, key threads).  The
        settings with a unit are velocities in km/s ([fit] vmin, vmax,
        ccf_vstep, vsini_max): a velocity Quantity is converted, any
        other Quantity refused."""
        section, _, k = key.rpartition(".")
        if not section:
            raise ValueError("setting %r: use section.key" % key)
        if isinstance(value, u.Quantity):
            value = float(_units.velocity(value, "setting " + key))
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

    def _theta(self, theta, params):
        """(n, nparam) float64 points in the library's units from theta
        by position ((nparam,), (n, nparam), or a sequence of nparam
        columns some of which are Quantities), by name (a mapping such as
        a dict, an astropy Table or Row) or from keywords (teff=...)."""
        names = self.params
        if params:
            if theta is not None:
                raise TypeError("give theta or parameters by name (%s), "
                                "not both" % ", ".join(params))
            unknown = [k for k in params if k.upper() not in names]
            if unknown:
                raise TypeError("unknown parameter(s) %s; the library's are "
                                "%s (or theta=)" % (", ".join(unknown),
                                ", ".join(n.lower() for n in names)))
            theta = {k.upper(): v for k, v in params.items()}
        if theta is None:
            raise TypeError("no parameters: give theta (%s, in this order) "
                            "or each by name" % ", ".join(names))
        if hasattr(theta, "keys"):
            cols = [self._by_name(theta, n) for n in names]
        elif isinstance(theta, (list, tuple)) and \
                len(theta) == len(names) and _units.has_unit(theta):
            cols = list(theta)
        elif _units.has_unit(theta):
            if len(names) != 1:
                raise u.UnitsError(
                    "theta carries units for %d parameters in one array: "
                    "give them by name (%s) or as a list of %d" %
                    (len(names), ", ".join(n.lower() + "=" for n in names),
                     len(names)))
            cols = [theta]
        else:
            th = np.atleast_2d(np.asarray(theta, dtype=np.float64))
            if th.ndim != 2 or th.shape[1] != len(names):
                raise ValueError("theta has %d parameters, the library %d "
                                 "(%s)" % (th.shape[-1], len(names),
                                           ", ".join(names)))
            return th
        cols = [np.asarray(_units.parameter(c, n, a.unit), dtype=np.float64)
                for c, n, a in zip(cols, names, self.axes)]
        try:
            cols = np.broadcast_arrays(*cols)
        except ValueError:
            raise ValueError("the parameters %s do not broadcast: %s" %
                             (", ".join(names), [c.shape for c in cols])) \
                from None
        return np.atleast_2d(np.stack([c.ravel() for c in cols], axis=1))

    @staticmethod
    def _by_name(theta, name):
        """Parameter `name` of a mapping, any case; a Row's value gets its
        column's unit."""
        key = next((k for k in theta.keys() if str(k).upper() == name), None)
        if key is None:
            raise KeyError("parameter %s is missing from theta (keys: %s)" %
                           (name, ", ".join(map(str, theta.keys()))))
        x = theta[key]
        col = getattr(theta, "columns", {}).get(key)
        unit = getattr(col, "unit", None)
        if unit is not None and not hasattr(x, "unit"):
            x = u.Quantity(x, unit)
        return x

    def _eval(self, spectra, theta, v, vsini, backend, spec, params):
        """(-2 ln L, chi^2 per arm, theta) of the points, one batch."""
        sp, spec, theta, v, vsini = self._points(spectra, theta, v, vsini,
                                                 spec, params)
        self._s.backend(backend)
        self._s.load(sp)
        m2lnl, chisq = self._s.chisq(spec, theta, v, vsini, len(sp.arms))
        return m2lnl, chisq, theta

    def _points(self, spectra, theta, v, vsini, spec, params):
        sp = as_spectra(spectra)
        theta = self._theta(theta, params)
        if v is None:
            raise TypeError("v (the radial velocity, km/s) is required")
        v = np.atleast_1d(np.asarray(_units.velocity(v, "v"),
                                     dtype=np.float64))
        vsini = np.atleast_1d(np.asarray(_units.velocity(vsini, "vsini"),
                                         dtype=np.float64))
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
        return sp, spec, theta, v, vsini

    def m2lnl(self, spectra, theta=None, v=None, vsini=0.0, backend="cpu",
              spec=None, per_arm=False, **params):
        """-2 ln L of spectra at points (theta, v, vsini) as the backend
        plugin `backend` computes it (one batch), with its finite
        out-of-grid penalty: the function rvfit's fit minimises.

        theta: the grid parameters, by position ((nparam,) or (n, nparam)
            in the order of self.params) or by name (a mapping: dict,
            astropy Table or Row); or give them as keywords instead
            (teff=, logg=, feh=, alphafe=, any case).  Quantities are
            converted (Teff to K, log g and abundances to dex, log g in
            cgs); bare numbers are in those units.
        v, vsini: radial and rotational velocity, numbers (km/s) or
            velocity Quantities, scalars or (n,).
        spec: which spectrum each point belongs to; by default every point
            is of spectrum 0 for a single spectrum, point k of spectrum k
            when there are as many points as spectra, and a single point is
            evaluated for every spectrum.
        Returns m2lnl (n,) = ||D - S a||^2 + ln det(S^T S) + penalty summed
        over arms (the continuum a marginalised), and with per_arm also
        chi^2 per arm (n, narm) (||D - S a||^2, the CHISQ_<ARM> of rvtab).
        Spectra (rvfit.Spectra) stay loaded between calls with the same
        object.
        """
        m2lnl, chisq, _ = self._eval(spectra, theta, v, vsini, backend,
                                     spec, params)
        return (m2lnl, chisq) if per_arm else m2lnl

    def loglike(self, spectra, theta=None, v=None, vsini=0.0,
                backend="cpu", spec=None, per_arm=False, **params):
        """ln L of spectra at points (theta, v, vsini): -m2lnl / 2 (the
        same arguments; see m2lnl), up to a constant that depends on the
        spectra only, and -inf where the backend's value carries its
        out-of-grid penalty for a parameter outside its axis' range, or
        could not be computed (a singular continuum fit).  NaN parameters
        are refused (RvfitError).
        Inside the axes' ranges it is -m2lnl / 2 as computed, including
        the penalty of a cell without models or, for a simplex library,
        of a point outside the hull of the models present.

        Returns lnL (n,), and with per_arm also chi^2 per arm (n, narm).
        """
        m2lnl, chisq, theta = self._eval(spectra, theta, v, vsini, backend,
                                         spec, params)
        lnl = -0.5 * m2lnl
        lnl[self.outside(theta) | (m2lnl >= M2LNL_FAIL)] = -np.inf
        return (lnl, chisq) if per_arm else lnl

    def outside(self, theta=None, **params):
        """True for each point with a parameter outside its axis' node
        range, where the backend adds its out-of-grid penalty to -2 ln L
        and loglike is -inf (and for NaN, which they refuse)."""
        th = self._theta(theta, params)
        out = np.zeros(len(th), dtype=bool)
        for k, a in enumerate(self.axes):
            x = th[:, k]
            out |= np.isnan(x) | (x < a.nodes[0]) | (x > a.nodes[-1])
        return out
