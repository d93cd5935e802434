"""Baselines and evaluation: the scripted agents, policies by name, model loading, and the
comparison and rendering tools.

* :mod:`~agents.evaluation.policy_base` -- task ids, the one-line errors, ``LearnedPolicy``.
* :mod:`~agents.evaluation.policies` -- :func:`~agents.evaluation.policies.load_policy`
  (validating loader of SB3 zips and RLlib checkpoints), ``make_policy`` (any agent by name).
* :mod:`~agents.evaluation.scripted` -- the scripted baselines (SB3 ``predict``).
* :mod:`~agents.evaluation.stats` -- Wilson intervals, paired differences, survival curves.
* :mod:`~agents.evaluation.results` -- episode results, JSON and CSV written atomically.
* :mod:`~agents.evaluation.frames` -- captions, side-by-side panels, the animation writer.
* :mod:`~agents.evaluation.compare` / :mod:`~agents.evaluation.render` -- ``python -m
  agents.compare`` and ``python -m agents.render``, one stack for every task: the task's
  ``metrics.layout`` picks the layout (:func:`~agents.evaluation.compare.comparison_of`),
  one row per agent of the learned role (:class:`~agents.evaluation.compare.AgentsTable`,
  with :mod:`~agents.evaluation.episodes`) or every side against every side
  (:mod:`~agents.evaluation.cross_play`); :mod:`~agents.evaluation.team_calibration` and
  :mod:`~agents.evaluation.team_league` build on the cross-play.
* :mod:`~agents.evaluation.mixture` / :mod:`~agents.evaluation.league` -- opponents mixed
  per environment (``train.py --opponent-pool``) and population training (``python -m
  agents.league``).
"""
