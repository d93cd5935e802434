"""TEMPORARY stand-in."""

from numba import njit

kernel = njit(cache=True, nogil=True, error_model="numpy")
inline_kernel = njit(cache=True, nogil=True, error_model="numpy", inline="always")
