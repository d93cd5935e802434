"""Demos built on the library: the behavior gallery (``python -m steer_env.demos.gallery``)."""
