"""Agents for the steer-env tasks: scripted baselines, learned-model loading, evaluation.

* :mod:`agents.scripted` -- classic and naive pursuers, classic evader (SB3 ``predict``).
* :mod:`agents.policies` -- :func:`~agents.policies.load_policy` (validating SB3 loader),
  :func:`~agents.policies.make_policy` (any agent by name), shipped model paths.
* :mod:`agents.stats` -- Wilson intervals, paired differences, survival curves.
* :mod:`agents.compare` -- ``python -m agents.compare``: learned vs scripted, paired episodes.
* :mod:`agents.render` -- ``python -m agents.render``: episode GIFs.
* :mod:`agents.training` -- helpers of ``train.py`` (checkpoints, resume, callbacks).

Importing :mod:`agents` is cheap: torch and stable-baselines3 load only when a model does.
"""
