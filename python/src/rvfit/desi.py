"""A DESI coadd (or spectra) file read with astropy into rvfit.Spectra —
a convenience for examples and notebooks.  Unlike the CLI's desi plugin it
selects no rows (the plugin drops SKY/BAD fibres and bad FIBERSTATUS);
pixels with MASK != 0 get ivar 0 as there."""
import numpy as np
from astropy.io import fits

from .spectra import Arm, Spectra


def read_desi(path, rows=None):
    """Spectra of the DESI file `path` (all rows, or the given rows): one
    Arm per camera with its resolution band matrices, ids = TARGETID,
    snr = SCORES MEDIAN_COADD_SNR_<cam> where the file has it."""
    arms, snr = [], []
    with fits.open(path) as f:
        names = [h.name for h in f]
        sel = slice(None) if rows is None else np.asarray(rows)
        for cam in ("B", "R", "Z"):
            if cam + "_FLUX" not in names:
                continue
            flux = np.asarray(f[cam + "_FLUX"].data[sel], dtype=np.float32)
            ivar = np.asarray(f[cam + "_IVAR"].data[sel], dtype=np.float32)
            if cam + "_MASK" in names:
                ivar = np.where(f[cam + "_MASK"].data[sel] != 0, 0, ivar)
            arms.append(Arm(cam, np.asarray(f[cam + "_WAVELENGTH"].data,
                                            dtype=np.float64),
                            flux, ivar,
                            resolution=f[cam + "_RESOLUTION"].data[sel]))
            col = "MEDIAN_COADD_SNR_" + cam
            snr.append(np.asarray(f["SCORES"].data[col][sel], dtype=float)
                       if "SCORES" in names and
                       col in f["SCORES"].columns.names
                       else np.full(len(flux), np.nan))
        ids = np.asarray(f["FIBERMAP"].data["TARGETID"][sel])
    return Spectra(arms, ids=ids, snr=np.stack(snr, axis=1))
