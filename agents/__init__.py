"""Agents for the steer-env tasks, in three rooms:

* :mod:`agents.evaluation` -- scripted baselines, policies by name, model loading, and the
  comparison and rendering tools (``python -m agents.compare``, ``python -m agents.render``).
* :mod:`agents.training` -- ``train.py``'s options, run folder and run lifecycle.
* :mod:`agents.rllib` -- ``train.py --framework rllib``: PPO on RLlib/Ray.

The modules of the first release (``agents.compare``, ``agents.policies``,
``agents.scripted``, ``agents.rllib_training``, ...) still import, with a
``DeprecationWarning`` naming the new module (:mod:`agents.deprecation`).

Importing :mod:`agents` is cheap: torch and stable-baselines3 load only when a model does.
"""
