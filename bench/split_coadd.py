#!/usr/bin/env python3
"""Split a DESI coadd into N files of unequal sizes (rows in order).

Every per-spectrum HDU (*_FLUX, *_IVAR, *_MASK, *_RESOLUTION, FIBERMAP,
SCORES, ...) is cut by rows; the wavelength HDUs are copied.  Sizes grow
linearly (1, 2, ..., N parts of the total), so that the files differ in
size as survey files do.  Usage: split_coadd.py COADD N OUTPREFIX
"""
import sys

import numpy as np
from astropy.io import fits


def main():
    src, n, prefix = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with fits.open(src) as h:
        nrow = len(h["FIBERMAP"].data)
        w = np.arange(1, n + 1, dtype=float)
        edges = np.round(np.concatenate([[0], np.cumsum(w)]) / w.sum() * nrow)
        edges = edges.astype(int)
        for k in range(n):
            a, b = edges[k], edges[k + 1]
            out = [fits.PrimaryHDU(header=h[0].header)]
            for hdu in h[1:]:
                name = hdu.name
                if name.endswith("_WAVELENGTH"):
                    out.append(hdu.copy())
                elif isinstance(hdu, fits.BinTableHDU):
                    out.append(fits.BinTableHDU(hdu.data[a:b], hdu.header,
                                                name=name))
                else:
                    out.append(fits.ImageHDU(hdu.data[a:b], hdu.header,
                                             name=name))
            path = f"{prefix}-{k + 1}.fits"
            fits.HDUList(out).writeto(path, overwrite=True)
            print(f"{path}: rows {a}..{b - 1} ({b - a} spectra)")


if __name__ == "__main__":
    main()
