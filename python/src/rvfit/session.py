"""A librvfit session (rvfit/session.h): config, library, backend, batch."""
import ctypes

import numpy as np

from . import _lib
from ._lib import call

_NAME = 128


def _ptr(a, ctype):
    return None if a is None else a.ctypes.data_as(ctypes.POINTER(ctype))


class Session:
    """Owns one rvfit_session handle; closed with close() or on deletion."""

    def __init__(self):
        h = ctypes.c_void_p()
        call("rvfit_session_new", ctypes.byref(h))
        self._h = h
        self._backend = None
        self.loaded = None  # the Spectra loaded into the backend

    def close(self):
        if getattr(self, "_h", None):
            _lib.lib().rvfit_session_free(self._h)
            self._h = None

    def __del__(self):
        self.close()

    def load_config(self, path):
        call("rvfit_session_load_config", self._h, str(path).encode())
        self.loaded = None

    def set(self, section, key, value):
        if isinstance(value, bool):
            value = int(value)
        call("rvfit_session_set", self._h, section.encode(), key.encode(),
             str(value).encode())
        self.loaded = None  # [fit] settings act when a batch is loaded

    def open_library(self, path):
        call("rvfit_session_open_library", self._h,
             None if path is None else str(path).encode())

    def axes(self):
        c = _lib.lib()
        out = []
        for i in range(c.rvfit_session_nparam(self._h)):
            name = ctypes.create_string_buffer(_NAME)
            unit = ctypes.create_string_buffer(_NAME)
            log10, nnode = ctypes.c_int(), ctypes.c_int()
            node = np.zeros(4096)
            call("rvfit_session_axis", self._h, i, name, unit, _NAME,
                 ctypes.byref(log10), ctypes.byref(nnode),
                 _ptr(node, ctypes.c_double))
            out.append((name.value.decode(), unit.value.decode(),
                        bool(log10.value), node[:nnode.value].copy()))
        return out

    def arms(self):
        c = _lib.lib()
        out = []
        for a in range(c.rvfit_session_narm(self._h)):
            name = ctypes.create_string_buffer(_NAME)
            lnl0, dlnl, skms = (ctypes.c_double(), ctypes.c_double(),
                                ctypes.c_double())
            npix = ctypes.c_size_t()
            call("rvfit_session_arm", self._h, a, name, _NAME,
                 ctypes.byref(lnl0), ctypes.byref(dlnl), ctypes.byref(npix),
                 ctypes.byref(skms))
            out.append((name.value.decode(), lnl0.value, dlnl.value,
                        npix.value, skms.value))
        return out

    def exists(self):
        n = _lib.lib().rvfit_session_nmodel(self._h)
        e = np.zeros(n, dtype=np.uint8)
        call("rvfit_session_exists", self._h, _ptr(e, ctypes.c_uint8))
        return e.astype(bool)

    def backend(self, name):
        """Open backend `name` unless it is the one open."""
        if self._backend != name:
            self._backend = None
            self.loaded = None
            call("rvfit_session_open_backend", self._h, name.encode())
            self._backend = name

    def device(self):
        return _lib.lib().rvfit_session_device(self._h).decode()

    def load(self, spectra):
        """Put Spectra into the backend (once per Spectra object)."""
        if self.loaded is spectra:
            return
        self.loaded = None
        narm = len(spectra.arms)
        call("rvfit_session_batch_new", self._h, spectra.nspec, narm)
        for i, a in enumerate(spectra.arms):
            kind, ndiag, res = 0, 0, None
            if a.resolution is not None:
                kind, ndiag, res = 1, a.resolution.shape[1], a.resolution
            elif a.lsf is not None:
                kind, res = 2, a.lsf
            call("rvfit_session_batch_arm", self._h, i, a.name.encode(),
                 a.flux.shape[1], int(a.wave.ndim == 2),
                 _ptr(a.wave, ctypes.c_double), _ptr(a.flux, ctypes.c_float),
                 _ptr(a.ivar, ctypes.c_float), kind, ndiag,
                 _ptr(res, ctypes.c_float))
        call("rvfit_session_batch_load", self._h,
             _ptr(spectra.snr, ctypes.c_double))
        self.loaded = spectra

    def chisq(self, spec, param, v, vsini, narm):
        n = len(spec)
        spec = np.ascontiguousarray(spec, dtype=np.uint32)
        param = np.ascontiguousarray(param, dtype=np.float64)
        v = np.ascontiguousarray(v, dtype=np.float64)
        vsini = np.ascontiguousarray(vsini, dtype=np.float64)
        m2lnl = np.empty(n)
        chisq = np.empty((n, narm))
        call("rvfit_session_chisq", self._h, n, _ptr(spec, ctypes.c_uint32),
             _ptr(param, ctypes.c_double), _ptr(v, ctypes.c_double),
             _ptr(vsini, ctypes.c_double), _ptr(m2lnl, ctypes.c_double),
             _ptr(chisq, ctypes.c_double))
        return m2lnl, chisq

    def fit(self, models):
        call("rvfit_session_fit", self._h, int(bool(models)))

    def columns(self, nspec):
        """[(name, unit, type letter, values)] of the RVTAB columns."""
        out = []
        for c in range(_lib.lib().rvfit_session_ncol(self._h)):
            name = ctypes.create_string_buffer(_NAME)
            unit = ctypes.create_string_buffer(_NAME)
            typ = ctypes.create_string_buffer(2)
            call("rvfit_session_col", self._h, c, name, unit, _NAME, typ)
            vals = np.empty(nspec)
            call("rvfit_session_col_values", self._h, c,
                 _ptr(vals, ctypes.c_double))
            out.append((name.value.decode(), unit.value.decode(),
                        typ.value.decode(), vals))
        return out

    def model(self, arm, nspec, npix):
        m = np.empty((nspec, npix), dtype=np.float32)
        call("rvfit_session_model", self._h, arm, _ptr(m, ctypes.c_float))
        return m
