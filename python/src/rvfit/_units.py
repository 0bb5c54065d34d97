"""Quantities in, numbers in rvfit's units out.

rvfit computes in km/s (velocities), K (Teff), dex (log g in cgs, [Fe/H],
[alpha/Fe]) and vacuum Angstrom (wavelengths, LSF widths).  An astropy
Quantity, or a table Column that carries a unit, is converted to that
unit or refused with astropy's UnitConversionError naming the argument;
a bare number is taken in rvfit's unit.  Units are never dropped
unconverted.
"""
import numpy as np
from astropy import units as u

KMS = u.km / u.s
_LOGG = u.dex(u.cm / u.s ** 2)


def _quantity(x):
    """x as a Quantity when it carries a unit (a Quantity, or a Column
    with one), else None."""
    if isinstance(x, u.Quantity):
        return x
    if isinstance(x, (list, tuple)) and \
            any(isinstance(e, u.Quantity) for e in x):
        return u.Quantity(x)  # a list of Quantities, each converted
    unit = getattr(x, "unit", None)
    if isinstance(unit, u.UnitBase):
        return u.Quantity(np.asarray(x), unit)
    return None


def has_unit(x):
    """Whether x, or an element of a list x, carries a unit."""
    if isinstance(x, (list, tuple)):
        return any(has_unit(e) for e in x)
    return isinstance(x, u.Quantity) or \
        isinstance(getattr(x, "unit", None), u.UnitBase)


def _refuse(what, q, unit, note=""):
    raise u.UnitConversionError(
        "%s: a Quantity in %r cannot be converted to %s%s (a bare number "
        "is taken in %s)" % (what, q.unit.to_string(), unit, note, unit))


def _as_quantity(x, what):
    try:
        return _quantity(x)
    except (u.UnitsError, TypeError) as e:  # a list of mixed units
        raise u.UnitConversionError("%s: %s" % (what, e)) from None


def value(x, unit, what, equivalencies=()):
    """x in `unit` as a float64 array (or x itself when it has no unit)."""
    q = _as_quantity(x, what)
    if q is None:
        return x
    try:
        return np.asarray(q.to_value(unit, equivalencies=equivalencies),
                          dtype=np.float64)
    except u.UnitsError:
        _refuse(what, q, unit.to_string())


def velocity(x, what):
    """A velocity in km/s."""
    return value(x, KMS, what)


def wavelength(x, what):
    """A wavelength or wavelength interval in Angstrom (lengths only: a
    frequency grid is not a wavelength grid)."""
    return value(x, u.AA, what)


def dimensionless(x, what):
    """A pure number (a resolution matrix)."""
    return value(x, u.dimensionless_unscaled, what)


def flux_ivar(flux, ivar, what):
    """flux and ivar as numbers in one unit system: both bare, or both
    with units, ivar converted to 1/flux.unit**2 (a likelihood only needs
    them consistent, so flux keeps its own unit)."""
    qf, qi = _quantity(flux), _quantity(ivar)
    if qf is None and qi is None:
        return flux, ivar
    if qf is None or qi is None:
        raise u.UnitsError(
            "%s: flux and ivar must both carry units or both be bare "
            "numbers (flux in %s, ivar in %s)" %
            (what, "-" if qf is None else qf.unit.to_string(),
             "-" if qi is None else qi.unit.to_string()))
    want = qf.unit ** -2
    try:
        iv = qi.to_value(want)
    except u.UnitsError:
        _refuse(what + " ivar", qi, want.to_string(),
                " (1 / the flux's unit squared)")
    return np.asarray(qf.value), np.asarray(iv)


def parameter(x, name, unit):
    """A grid parameter in the library's unit for its axis ("K", "dex";
    Teff also from other temperature scales, log g from dex(cm/s^2) or
    dex(m/s^2))."""
    what = "parameter %s" % name
    q = _as_quantity(x, what)
    if q is None:
        return x
    if unit == "dex" or unit == "":
        if name.upper() == "LOGG" and q.unit != u.dex:
            return value(q, _LOGG, what)
        return value(q, u.dex if unit == "dex" else
                     u.dimensionless_unscaled, what)
    try:
        target = u.Unit(unit)
    except ValueError:
        raise u.UnitsError("%s: the library's unit %r is not one astropy "
                           "knows; give a bare number" % (what, unit)) \
            from None
    return value(q, target, what, equivalencies=u.temperature())
