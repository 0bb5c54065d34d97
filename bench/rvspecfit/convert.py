#!/usr/bin/env python3
"""Make rvfit's synthetic DESI coadd readable by rvspecfit's rvs_desi_fit.

rvspecfit 0.9.0 (desi_fit.proc_desi) reads FIBERMAP['BRICKID'] for every
fitted fibre (it names the diagnostic figures with it), and real DESI coadds
carry that column, but `rvfit mock spectra` writes a FIBERMAP subset without
it.  This copies the file and appends BRICKID = 0; nothing else changes
(spectra, ivar, masks, resolution matrices and SCORES are byte-identical).

Usage: convert.py IN.fits OUT.fits
"""
import sys

import numpy as np
from astropy.io import fits


def main():
    src, dst = sys.argv[1], sys.argv[2]
    with fits.open(src) as hdul:
        fm = hdul["FIBERMAP"]
        if "BRICKID" not in fm.columns.names:
            col = fits.Column(name="BRICKID", format="J",
                              array=np.zeros(len(fm.data), np.int32))
            new = fits.BinTableHDU.from_columns(fm.columns + col,
                                                header=fm.header,
                                                name="FIBERMAP")
            hdul[hdul.index_of("FIBERMAP")] = new
        hdul.writeto(dst, overwrite=True)


if __name__ == "__main__":
    main()
