"""The backend argument reaches the plugins: OpenCL (PoCL on a CPU in CI)
gives the cpu backend's -2 ln L within the backend-equivalence tolerance
(tests/backend_equiv.h BE_TOL: 1e-6 relative to max(|x|, 1))."""
import os

import numpy as np
import pytest

import rvfit


def test_opencl_equals_cpu(data, spectra):
    if "rvfit_backend_opencl" not in os.environ.get("RVFIT_PLUGINS_BUILT",
                                                    ""):
        pytest.skip("this build has no OpenCL backend")
    t = rvfit.read_rvtab(data["rvtab"])
    lib = rvfit.Library(data["lib"])
    try:
        th = np.array([[t[p][i] for p in lib.params] for i in range(len(t))])
        v = np.asarray(t["VRAD"]) + 7.0
        cpu = lib.m2lnl(spectra, th, v, t["VSINI"], backend="cpu")
        assert lib.device("cpu").startswith("cpu")
        try:
            ocl = lib.m2lnl(spectra, th, v, t["VSINI"], backend="opencl")
        except rvfit.RvfitError as e:
            if e.status == 7:  # RVFIT_ERR_UNAVAILABLE: no OpenCL device
                pytest.skip(str(e))
            raise
        assert lib.device("opencl") != lib.device("cpu")
    finally:
        lib.close()
    scale = np.maximum(np.abs(cpu), 1.0)
    assert np.max(np.abs(ocl - cpu) / scale) <= 1e-6
