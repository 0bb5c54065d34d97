"""rvfit for Python: read rvfit's outputs, evaluate -2 ln L of spectra and
fit them through librvfit and its backend plugins (docs/python.md).

    import rvfit
    lib = rvfit.Library("lib")
    tab = rvfit.fit(rvfit.read_desi("coadd.fits"), lib)
"""
from ._lib import RvfitError
from .desi import read_desi
from .fit import fit
from .io import read_rvmod, read_rvtab
from .library import Library
from .spectra import Arm, Spectra

__all__ = ["Arm", "Library", "RvfitError", "Spectra", "fit", "read_desi",
           "read_rvmod", "read_rvtab"]
__version__ = "0.1.0"
