"""steer-env: Craig Reynolds' steering behaviors as vectorized physics and Gymnasium envs.

The library (``physics``, ``behaviors``, ``combine``, ``neighbors``, ``vecmath``) is a numpy
API over the scalar numba kernels of :mod:`steer_env.core` (compiled on first use, cached on
disk) and imports neither Gymnasium nor pygame; importing the package also registers the
environments ``steer_env/Pursuit-v0`` and ``steer_env/Evasion-v0`` with Gymnasium.
"""

from steer_env import behaviors, combine, vecmath

# Importing steer_env.envs registers the Gymnasium environments.
from steer_env.envs import ENV_IDS, EvasionEnv, PursuitEnv
from steer_env.neighbors import Neighbors, find_neighbors
from steer_env.physics import VehicleParams, Vehicles, integrate

__version__ = "0.1.0"

__all__ = [
    "ENV_IDS",
    "EvasionEnv",
    "Neighbors",
    "PursuitEnv",
    "VehicleParams",
    "Vehicles",
    "__version__",
    "behaviors",
    "combine",
    "find_neighbors",
    "integrate",
    "vecmath",
]
