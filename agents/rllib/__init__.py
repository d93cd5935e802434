"""``train.py --framework rllib``: PPO on RLlib (Ray), single-agent and team tasks.

* :mod:`~agents.rllib.training` -- what an RLlib run does that an SB3 run does not.
* :mod:`~agents.rllib.config` -- the ``PPOConfig`` and its settings.
* :mod:`~agents.rllib.cluster` -- join or start Ray.
* :mod:`~agents.rllib.env` / :mod:`~agents.rllib.runner` -- the native vector env on the
  env runners and the array sampling loop.
* :mod:`~agents.rllib.team` / :mod:`~agents.rllib.team_env` -- the team task.
* :mod:`~agents.rllib.policy` -- a checkpoint as a policy (torch only, no Ray cluster).

Importing this package imports no ray.
"""
