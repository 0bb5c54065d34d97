"""rvfit for Python: read rvfit's outputs, evaluate ln L of spectra and
fit them through librvfit and its backend plugins (docs/python.md).

    import rvfit
    lib = rvfit.Library("lib")
    tab = rvfit.fit(rvfit.read_desi("coadd.fits"), lib)

The names below are imported on first use, so that `import rvfit` (and
the `rvfit` command, which only needs rvfit._cli) does not pay for numpy
and astropy.
"""
import importlib

_WHERE = {"Arm": "spectra", "Library": "library", "RvfitError": "_lib",
          "Spectra": "spectra", "fit": "fitting", "read_desi": "desi",
          "read_rvmod": "io", "read_rvtab": "io"}

__all__ = sorted(_WHERE)
__version__ = "0.1.0"


def __getattr__(name):
    if name not in _WHERE:
        raise AttributeError("module 'rvfit' has no attribute %r" % name)
    value = getattr(importlib.import_module("." + _WHERE[name], __name__),
                    name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_WHERE))
