#!/usr/bin/python3
"""Digest of the data of every FITS file under the given paths: one line
per HDU with its name and the SHA-256 of its data bytes (headers are left
out: they carry dates, versions and command lines).  Two runs of the same
workload on two builds give identical lines when their outputs are
bitwise identical.

    python3 bench/fits_digest.py DIR_OR_FILE... > digest.txt
    diff digest-before.txt digest-after.txt
"""
import hashlib
import os
import sys
import warnings

from astropy.io import fits


def files(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, _, names in sorted(os.walk(p)):
                for n in sorted(names):
                    if n.endswith((".fits", ".fits.gz", ".fit")):
                        yield os.path.join(root, n)
        else:
            yield p


def main():
    base = os.path.commonpath([os.path.abspath(p) for p in sys.argv[1:]])
    for path in files(sys.argv[1:]):
        rel = os.path.relpath(os.path.abspath(path), base)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with fits.open(path, memmap=False) as hl:
                    for i, h in enumerate(hl):
                        raw = h._get_raw_data(h._data_size, "ubyte",
                                              h._data_offset) \
                            if h._data_size else b""
                        dig = hashlib.sha256(bytes(raw)).hexdigest()[:16]
                        print(f"{rel} {i} {h.name} {dig}")
        except Exception as e:  # corrupt inputs of the fault tests
            print(f"{rel} unreadable {type(e).__name__}")


if __name__ == "__main__":
    main()
