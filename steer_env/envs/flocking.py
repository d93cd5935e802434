"""Flocking-v0: a learned boid migrates with a flock of Reynolds' boids to a goal region
while a predator hunts them."""

from __future__ import annotations

from typing import Any, ClassVar

from steer_env.envs.base import SteerEnv
from steer_env.tasks.flocking import FLOCKING, FlockingConfig, FlockingTask


class FlockingEnv(SteerEnv):
    """
    ## Description

    Reynolds' flocking with a purpose: a flock of ``n_boids`` (16) boids starts at rest in
    a disc of radius 3 m around ``(-12, 0)`` and must migrate as one flock to the goal
    region, a disc of radius ``goal_radius`` (4 m) around ``(12, 0)``, while
    ``n_predators`` (1) scripted predators, 1.5 times as fast, pursue the nearest boid. A
    boid a predator catches leaves the game. The flock succeeds when the largest group
    of boids inside the goal region (boids whose centres are at most ``link_distance``,
    2.5 m, apart are linked; a group is a connected component) holds at least
    ``success_fraction`` (75%) of the flock. Here one boid is learned and the others run
    Reynolds' boids (evade, separation, seek, alignment, cohesion, combined by
    Buckland's dithering: :mod:`steer_env.tasks.flocking`); ``flocking_v0`` is the form
    with every boid learned. The classic flocks (``dithered``, ``prioritized``,
    ``weighted_sum``) play the same boid from the learned boid's observation.

    Units: metres, seconds, kilograms, newtons. The walled square is ``[-arena_size/2,
    arena_size/2]^2`` (40 m); the agent's frame has x forward (along its heading) and y
    to its left.

    ## Action Space

    ``Box(-1, 1, (2,), float32)``: the steering force in the boid's frame, in units of its
    ``boid_max_force`` (4 N on 1 kg: full speed, 2 m/s, from rest in five steps); the
    vector's magnitude is clipped to 1.

    | Num | Action        | Min | Max |
    |-----|---------------|-----|-----|
    | 0   | forward force | -1  | 1   |
    | 1   | side force    | -1  | 1   |

    ## Observation Space

    ``Box(-1, 1, (13 + 5 * K + 5 * P + 4 * L,), float32)``, in the boid's frame, with
    ``K`` slots for the nearest other boids (``observed_boids``, 7), ``P`` for the nearest
    predators (``observed_predators``, 1), nearest first (padding beyond the flock or the
    predators, so a policy plays any flock size), and ``L`` obstacle slots
    (``observed_obstacles``; 53 values by default). A slot's position is in the near
    field, offset / (``observation_range`` + distance) with ``observation_range`` 5 m:
    its direction, and a length ``d / (5 + d)`` that resolves the few metres where
    catches and collisions happen.

    | Index | Observation | Min | Max |
    |-------|-------------|-----|-----|
    | 0, 1 | own velocity (forward, side) / max speed | -1 | 1 |
    | 2, 3 | offset to the nearest point of the west wall / arena_size | -1 | 1 |
    | 4, 5 | ... east wall | -1 | 1 |
    | 6, 7 | ... south wall | -1 | 1 |
    | 8, 9 | ... north wall | -1 | 1 |
    | 10 | elapsed time: 2 * step / time_limit - 1 | -1 | 1 |
    | 11 + 5k + 0, 1 | boid k offset from the agent / (observation_range + distance) | -1 | 1 |
    | 11 + 5k + 2, 3 | boid k velocity relative to the agent / (sum of max speeds) | -1 | 1 |
    | 11 + 5k + 4 | 1 if slot k holds a boid, 0 if it is padding | 0 | 1 |
    | 11 + 5K + 5k + 0, 1 | predator k offset from the agent / (observation_range + distance) | -1 | 1 |
    | 11 + 5K + 5k + 2, 3 | predator k velocity relative to the agent / (sum of max speeds) | -1 | 1 |
    | 11 + 5K + 5k + 4 | 1 if slot k holds a predator, 0 if it is padding | 0 | 1 |
    | 11 + 5K + 5P, 12 + 5K + 5P | offset to the goal region's centre / arena diagonal | -1 | 1 |
    | 13 + 5K + 5P + 4k + 0, 1 | offset to obstacle k's nearest edge point / arena diagonal | -1 | 1 |
    | 13 + 5K + 5P + 4k + 2 | obstacle k's radius / arena_size | 0 | 1 |
    | 13 + 5K + 5P + 4k + 3 | 1 if slot k holds an obstacle, 0 if it is padding | 0 | 1 |

    ## Obstacles

    None by default. ``obstacles=[(x, y, radius), ...]`` fixes a layout; ``n_obstacles=N``
    places ``N`` anew at each reset from the seed (radii uniform in
    ``[obstacle_radius_min, obstacle_radius_max]``, 1 to 2 m, each at least
    ``obstacle_gap`` from the walls, the other obstacles, every start and the goal
    region). No body ever overlaps one; the nearest ``observed_obstacles`` are observed;
    the scripted boids, the classic flocks and the predators avoid them.

    ## Rewards

    Named terms, each in ``info``:

    * ``success``: ``success_reward`` (5) on the step the flock succeeds, to every boid
      still in the game.
    * ``progress``: ``shaping_gamma * phi(s') - phi(s)`` with ``phi = -progress_scale * d``
      (0.1 per m), ``d`` the distance to the goal region's centre, and ``phi = 0`` once
      the flock succeeds. A caught boid and a time-out keep their ``phi``, so the terms
      of an episode sum (discounted by ``shaping_gamma``, 1) to ``phi(end) -
      phi(start)``: each step pays the distance it covers towards the goal, and success
      pays the rest of the way.
    * ``collision``: ``-collision_penalty`` (-0.05) on each step the boid's body touches
      another boid's (the closest approach during the step, so no boid passes through
      another).
    * ``caught``: ``-caught_penalty`` (-8) on the step a predator catches it (its centre
      within ``catch_radius``, 0.5 m, of the predator's during the step).

    ## Starting State

    Each boid takes the first of 16 points uniform in the start disc whose body keeps
    ``start_gap`` (0.2 m) from every boid already placed, at rest, facing the goal. Each
    predator starts at rest at a point uniform in the 12 m square around the field's
    centre (``predator_zone``), facing the flock.

    ## Episode End

    * Termination: the flock succeeds (``info["is_success"] = True``).
    * Termination: the learned boid is caught, or fewer boids are left than success needs.
    * Termination: ``time_limit`` steps (165, i.e. 16.5 s), a time-out. Time is observed,
      so the limit is part of the task, as in the project's other envs;
      ``env.spec.max_episode_steps`` reports it.

    ## Info

    The same keys on every step and at reset:

    | Key | Type | Meaning |
    |---|---|---|
    | ``reward_success``, ``reward_progress`` | float | the reward's terms |
    | ``reward_collision``, ``reward_caught`` | float | the reward's terms |
    | ``collisions`` | int | boids that touched another boid on this step |
    | ``catches`` | int | boids caught on this step |
    | ``boids_left`` | int | boids in the game |
    | ``is_success`` | bool | on the final step: the flock arrived |
    | ``arrival_step`` | int | on the final step of a success, its step; ``-1`` otherwise |
    | ``arrival_time`` | float | on the final step of a success, s to it; ``-1`` otherwise |
    | ``arrival_fraction`` | float | on the final step, the flock's fraction inside the goal region |
    | ``boids_caught`` | float | on the final step, boids caught in the episode |
    | ``collision_rate`` | float | on the final step, boid-steps touching another boid per boid-minute |
    | ``min_separation`` | float | on the final step, m, least centre distance of two boids (-1: never two) |
    | ``polarization`` | float | on the final step, the episode's mean length of the boids' mean heading |
    | ``largest_group`` | float | on the final step, the episode's mean largest group over the flock |
    | ``neighbor_loss_rate`` | float | on the final step, the fraction of boid-steps with no boid within ``link_distance`` |

    ``python -m agents.compare --env flocking`` reports them with 95% intervals for this
    form (``--set n_learned=-1``: every boid learned, in ``flocking_v0``'s batch).

    ## Arguments

    ``gym.make("steer_env/Flocking-v0", render_mode=None, **kwargs)`` accepts every field
    of :class:`steer_env.tasks.flocking.FlockingConfig`, validated at construction:
    unknown names and values out of range raise ``ValueError`` naming the argument.

    | Argument | Accepted | Default |
    |---|---|---|
    | ``n_boids`` | integer in [1, 1024] | 16 |
    | ``n_learned`` | 1 here (-1 or [0, n_boids] in ``flocking_v0``) | 1 |
    | ``n_predators`` | integer in [0, 64] | 1 |
    | ``arena_size`` | [2, 10^4] m | 40 |
    | ``dt`` | (0, 1] s | 0.1 |
    | ``time_limit`` | integer in [1, 10^7] steps | 165 |
    | ``route_length`` | (0, 10^4] m, above start_radius + goal_radius, inside the walls | 24 |
    | ``start_radius``, ``goal_radius`` | (0, 10^4] m, inside the walls | 3, 4 |
    | ``start_gap`` | [0, 10^4] m | 0.2 |
    | ``predator_zone`` | [0, 10^4] m, inside the walls | 12 |
    | ``vehicle_radius`` | (0, arena_size / 4) m | 0.2 |
    | ``boid_max_speed``, ``boid_max_force`` | (0, 1000] m/s, (0, 10^6] N | 2, 4 |
    | ``boid_mass`` | [0.001, 10^6] kg | 1 |
    | ``predator_max_speed``, ``predator_max_force``, ``predator_mass`` | as the boid's | 3, 4, 1 |
    | ``predator_prediction`` | [0, 10^4] s | 1 |
    | ``catch_radius`` | [0, 10^4] m | 0.5 |
    | ``link_distance`` | (0, 10^4] m | 2.5 |
    | ``success_fraction`` | (0, 1] | 0.75 |
    | ``evade_weight``, ``separation_weight``, ``seek_weight`` | [0, 10^6] | 3, 2, 2 |
    | ``alignment_weight``, ``cohesion_weight`` | [0, 10^6] | 1, 1 |
    | ``evade_radius`` | [0, 10^5] m | 6 |
    | ``separation_radius``, ``flock_radius`` | (0, 10^5] m, (0, 10^4] m | 1, 4 |
    | ``combination`` | ``"dithered"``, ``"prioritized"``, ``"weighted_sum"`` | ``"dithered"`` |
    | ``boid_strategy`` | ``None`` (Reynolds' boid) or any ``Strategy`` | None |
    | ``observed_boids`` | integer in [0, 1024] | 7 |
    | ``observed_predators`` | integer in [0, 64] | 1 |
    | ``observation_range`` | (0, 10^4] m | 5 |
    | ``success_reward``, ``progress_scale`` | [0, 10^6] | 5, 0.1 |
    | ``collision_penalty``, ``caught_penalty`` | [0, 10^6] | 0.05, 8 |
    | ``shaping_gamma`` | (0, 1] | 1 |
    | ``obstacles`` | ``None`` or ``(x, y, radius)`` circles, m; gaps >= 2 vehicle_radius | None |
    | ``n_obstacles`` | integer in [0, 64]: circles placed at each reset from the seed | 0 |
    | ``obstacle_radius_min``, ``obstacle_radius_max`` | (0, 10^4] m, min <= max | 1, 2 |
    | ``obstacle_gap`` | [2 vehicle_radius, 10^4] m | 1 |
    | ``observed_obstacles`` | integer in [-1, 64]; -1 = min(obstacles, 4) | -1 |
    | ``obstacle_weight`` | [0, 10^6] | 6 |
    | ``detection_length`` | (0, 10^4] m | 4 |

    ``render_mode``: ``"human"`` or ``"rgb_array"`` (``pip install "steer-env[render]"``):
    the goal region, the boids, the predators and the learned boid outlined.

    ## Version History

    * v0: initial release.

    >>> import gymnasium as gym
    >>> import steer_env
    >>> env = gym.make("steer_env/Flocking-v0")
    >>> obs, info = env.reset(seed=0)
    >>> obs.shape
    (53,)
    >>> env.spec.max_episode_steps
    165
    """  # noqa: E501 (the tables' rows)

    task: ClassVar[FlockingTask] = FLOCKING

    def __init__(self, render_mode: str | None = None, **kwargs: Any) -> None:
        super().__init__(render_mode, **kwargs)
        _check_one_boid(self.config)

    @classmethod
    def vector_env(cls, num_envs: int = 1, **kwargs: Any) -> Any:
        """``num_envs`` Flocking-v0 environments in one native batch (one learned boid
        each)."""
        venv = super().vector_env(num_envs, **kwargs)
        _check_one_boid(venv.config)
        return venv


def _check_one_boid(cfg: FlockingConfig) -> None:
    """The single-agent forms step one learned boid: ``ValueError`` for another
    ``n_learned``."""
    if cfg.learned_boids != 1:
        raise ValueError(
            f"Flocking-v0 has one learned boid: n_learned must be 1, got {cfg.n_learned} "
            "(several learned boids: steer_env.envs.flocking_v0.parallel_env(n_learned=...))"
        )


#: The ``vector_entry_point`` of ``steer_env/Flocking-v0`` (``gym.make_vec``).
make_flocking_vector = FlockingEnv.vector_env
