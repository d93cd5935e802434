"""The one definition of every per-vehicle formula: scalar numba kernels.

Each module mirrors a library module (:mod:`vecmath`, :mod:`physics`, :mod:`behaviors`,
:mod:`combine`, :mod:`streams`) and holds plain functions over float scalars (a 2-D vector
is two floats ``x, y``; results are tuples), compiled by numba on first call with the one
decorator :data:`steer_env.core.jit.kernel`. The numpy API (:mod:`steer_env.vecmath` and
friends) calls them through the compiled array loops of :mod:`steer_env.core.loops`; the
environment engine calls them directly from its own compiled step.

Importing this package does not import numba; importing any kernel module does (but
compiles nothing: kernels are compiled, or loaded from the on-disk cache, on first use).
"""
