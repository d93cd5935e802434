"""Bridges from steer-env's environments to third-party training libraries.

* :mod:`steer_env.integrations.benchmarl`: the team pursuit task as a BenchMARL task
  (MAPPO, IPPO, MASAC, ... on ``team_pursuit_v0``); needs the ``benchmarl`` extra.
"""
