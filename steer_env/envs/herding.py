"""Herding-v0: a learned sheepdog brings a scripted flock into a pen."""

from __future__ import annotations

from typing import Any, ClassVar

from steer_env.envs.base import SteerEnv
from steer_env.tasks.herding import HERDING, HerdingConfig, HerdingTask


class HerdingEnv(SteerEnv):
    """
    ## Description

    A learned dog herds a flock of ``n_sheep`` (25) scripted sheep into a circular pen near
    a corner of a walled 100 m field. The sheep are Strömbom et al.'s (2014) written with
    the classic steering behaviours: they repel each other within ``repulsion_distance``
    (2 m), and while a dog is within ``detection_range`` (30 m) they flee it and are drawn
    to the centre of their ``local_centre`` (15) nearest flockmates; with no dog near they
    graze, ambling at 5% of their top speed. The dog is 1.5 times as fast as a sheep
    (``speed_ratio``). Every vehicle moves by the same physics step; the walls stop any
    vehicle that reaches them. The scripted baselines are Strömbom's dog (collect the
    straggler, then drive the flock from behind) and a dog that only drives
    (:mod:`steer_env.tasks.herding`).

    Units: metres, seconds, kilograms, newtons. The field is ``[-arena_size/2,
    arena_size/2]^2``; the agent's frame has x forward (along its heading) and y to its left.

    ## Action Space

    ``Box(-1, 1, (2,), float32)``: the steering force in the dog's frame, in units of its
    ``dog_max_force``; the vector's magnitude is clipped to 1.

    | Num | Action        | Min | Max |
    |-----|---------------|-----|-----|
    | 0   | forward force | -1  | 1   |
    | 1   | side force    | -1  | 1   |

    ## Observation Space

    ``Box(-1, 1, (24 + 5 * K + 4 * L,), float32)``, in the dog's frame, with ``K =
    min(observed_sheep, n_sheep)`` slots for the nearest sheep, nearest first, and ``L``
    obstacle slots (``observed_obstacles``; K = 5, L = 0 and 49 values by default):

    | Index | Observation | Min | Max |
    |-------|-------------|-----|-----|
    | 0, 1 | own velocity (forward, side) / max speed | -1 | 1 |
    | 2, 3 | offset to the nearest point of the west wall / arena_size | -1 | 1 |
    | 4, 5 | ... east wall | -1 | 1 |
    | 6, 7 | ... south wall | -1 | 1 |
    | 8, 9 | ... north wall | -1 | 1 |
    | 10 | elapsed time: 2 * step / time_limit - 1 | -1 | 1 |
    | 11 + 5k + 0, 1 | sheep k position relative to the agent / arena diagonal | -1 | 1 |
    | 11 + 5k + 2, 3 | sheep k velocity relative to the agent / (sum of max speeds) | -1 | 1 |
    | 11 + 5k + 4 | 1 if slot k holds a sheep, 0 if it is padding | 0 | 1 |
    | 11 + 5K, 12 + 5K | offset to the pen's centre / arena diagonal | -1 | 1 |
    | 13 + 5K, 14 + 5K | offset to the flock's centre (mean position) / arena diagonal | -1 | 1 |
    | 15 + 5K, 16 + 5K | flock's mean velocity relative to the agent / (sum of max speeds) | -1 | 1 |
    | 17 + 5K | mean distance of the sheep to the flock centre / arena_size | 0 | 1 |
    | 18 + 5K, 19 + 5K | offset to the sheep farthest from the flock centre / arena diagonal | -1 | 1 |
    | 20 + 5K | fraction of the sheep inside the pen | 0 | 1 |
    | 21 + 5K, 22 + 5K | offset to Strömbom's collect or drive point / arena diagonal | -1 | 1 |
    | 23 + 5K | 1 while Strömbom's dog would collect a straggler, 0 while it would drive | 0 | 1 |
    | 24 + 5K + 4k + 0, 1 | offset to obstacle k's nearest edge point / arena diagonal | -1 | 1 |
    | 24 + 5K + 4k + 2 | obstacle k's radius / arena_size | 0 | 1 |
    | 24 + 5K + 4k + 3 | 1 if slot k holds an obstacle, 0 if it is padding | 0 | 1 |

    ## Obstacles

    The arena is empty by default. ``obstacles=[(x, y, radius), ...]`` fixes a layout of
    circular obstacles; ``n_obstacles=N`` places ``N`` anew at each reset from the seed
    (radii uniform in ``[obstacle_radius_min, obstacle_radius_max]``, each at least
    ``obstacle_gap`` from the walls, the other obstacles and every vehicle's start and the pen).
    No vehicle's body ever overlaps one: like a wall, an obstacle stops a vehicle where it
    first touches it and takes away the velocity pointing into it. The nearest
    ``observed_obstacles`` are in the observation, and the scripted vehicles add Reynolds'
    obstacle avoidance (Buckland's detection box) right after wall avoidance.

    ## Rewards

    * ``success``: ``success_reward`` (10) on the step the flock is penned.
    * ``shaping`` (``reward_shaping=True``): potential-based, ``shaping_gamma * phi(s') -
      phi(s)`` with ``phi = shaping_scale * (penned_weight * penned_fraction - (d +
      spread_weight * spread + target_weight * t) / diagonal)``, ``d`` the flock centre's
      distance to the pen centre, ``spread`` the sheep's mean distance to the flock
      centre, ``t`` the dog's distance to Strömbom's target point (where his dog would
      go: observed, see above) and ``phi = 0`` in terminal states, so an episode's shaped
      return is its unshaped return minus ``phi(s_0)`` (Ng, Harada and Russell 1999): the
      shaping guides exploration and leaves the optimal policy unchanged.
      ``shaping_gamma`` is 1 by default (the terms are differences of the potential). The
      defaults (``shaping_scale`` 10, ``penned_weight`` 3, ``target_weight`` 1,
      ``success_reward`` 10) make a metre of the flock's progress worth about 0.07, a
      metre of the dog towards Strömbom's point as much, and every sheep penned about
      1.2. Without the target term (``target_weight=0``) a dog's first, random moves
      mostly scatter the flock, and whether PPO ever finds the pen depends on the seed;
      with it the dog first learns to go where the heuristic would, then to beat it.
      With ``terminal_potential=True`` the final state keeps its ``phi``: the shaped
      return gains ``shaping_gamma^T * phi(s_T)``, so a flock left nearer the pen,
      tighter or partly penned pays even when the episode is not a success (this changes
      which policy is optimal; the default does not).

    The terms are reported in ``info["reward_success"]`` and ``info["reward_shaping"]``.

    ## Starting State

    The flock is spread uniformly over a square of ``start_spread`` (40 m) a side, centred
    at least ``flock_pen_distance`` (40 m) from the pen's centre; the dog starts at least
    ``dog_start_distance`` (20 m) from the flock's centre (the farthest of 16 uniform
    candidates when none is that far). All at rest, random headings.

    ## Episode End

    * Termination: at least ``success_fraction`` (1.0: every sheep) of the flock is inside
      the pen (``info["is_success"] = True``).
    * Termination: ``time_limit`` steps (300, i.e. 150 s). Time is observed, so the limit is
      part of the task, as in the project's other envs; ``gym.make(...,
      max_episode_steps=N)`` adds Gymnasium's truncating ``TimeLimit``.

    ## Info

    The same keys on every step and at reset:

    | Key | Type | Meaning |
    |---|---|---|
    | ``reward_success``, ``reward_shaping`` | float | the reward's terms |
    | ``penned`` | int | sheep inside the pen after the step |
    | ``flock_distance`` | float | m, flock centre to pen centre |
    | ``is_success`` | bool | on the final step, whether the flock was penned |
    | ``pen_step`` | int | on the final step, the step it was penned; ``-1`` otherwise |
    | ``penned_fraction`` | float | on the final step, the fraction penned |
    | ``cohesion`` | float | on the final step, m, the sheep's mean distance to the centre |
    | ``fragmentation`` | float | on the final step, the largest group (sheep linked within ``group_radius``, 5 m) / ``n_sheep`` |
    | ``polarisation`` | float | on the final step, the norm of the moving sheep's mean unit velocity |
    | ``dog_path`` | float | on the final step, m the dog ran in the episode |
    | ``control_efficiency`` | float | on the final step, the flock centre's progress to the pen per m the dog ran |

    The outcome keys are 0 (``pen_step`` -1) before the final step.

    ## Arguments

    ``gym.make("steer_env/Herding-v0", render_mode=None, **kwargs)`` accepts every field of
    :class:`steer_env.tasks.herding.HerdingConfig`, validated at construction: unknown names
    and values out of range raise ``ValueError`` naming the argument.

    | Argument | Accepted | Default |
    |---|---|---|
    | ``n_sheep`` | integer in [1, 1000] | 25 |
    | ``n_dogs`` | integer in [1, 16] (Herding-v0 steps the first; see ``herding_v0``) | 1 |
    | ``arena_size`` | [2, 10^4] m | 100 |
    | ``dt`` | (0, 1] s | 0.5 |
    | ``time_limit`` | integer in [1, 10^7] steps | 300 |
    | ``pen_x``, ``pen_y``, ``pen_radius`` | the pen inside the field, radius above ``vehicle_radius`` | 35, 35, 12 m |
    | ``success_fraction`` | (0, 1] | 1 |
    | ``vehicle_radius`` | (0, arena_size / 4) m | 0.5 |
    | ``sheep_max_speed``, ``sheep_max_force``, ``sheep_mass`` | (0, 1000] m/s, (0, 10^6] N, [0.001, 10^6] kg | 2, 4, 1 |
    | ``speed_ratio`` | (0, 100]: dog max speed / sheep max speed | 1.5 |
    | ``dog_max_force``, ``dog_mass`` | (0, 10^6] N, [0.001, 10^6] kg | 6, 1 |
    | ``detection_range``, ``repulsion_distance`` | (0, 10^4] m | 30, 2 |
    | ``local_centre`` | integer in [1, 1000] | 15 |
    | ``cohesion_weight``, ``repulsion_weight``, ``flight_weight``, ``noise_weight`` | [0, 10^6] | 1.05, 2, 1, 0.3 |
    | ``graze_speed`` | (0, 1] | 0.05 |
    | ``wander_radius``, ``wander_distance``, ``wander_jitter`` | m, m, m/s | 1, 2, 4 |
    | ``start_spread``, ``flock_pen_distance``, ``dog_start_distance`` | m | 40, 40, 20 |
    | ``observed_sheep`` | integer in [1, 1000] | 5 |
    | ``max_observed_dogs`` | -1 (``n_dogs - 1``) or [0, n_dogs - 1] | -1 |
    | ``success_reward``, ``shaping_scale``, ``spread_weight``, ``penned_weight``, ``target_weight`` | [0, 10^6] | 10, 10, 1, 3, 1 |
    | ``reward_shaping`` | True / False | True |
    | ``shaping_gamma`` | (0, 1] | 1 |
    | ``terminal_potential`` | True / False | False |
    | ``group_radius`` | (0, 10^4] m | 5 |
    | ``flank_angle`` | [0, pi/2] rad (the ``flanks`` team) | 0.6 |
    | ``obstacles`` | ``None`` or ``(x, y, radius)`` circles, m; gaps >= 2 vehicle_radius | None |
    | ``n_obstacles`` | integer in [0, 64]: circles placed at each reset from the seed | 0 |
    | ``obstacle_radius_min``, ``obstacle_radius_max`` | (0, 10^4] m, min <= max | 3, 6 |
    | ``obstacle_gap`` | [2 vehicle_radius, 10^4] m | 3 |
    | ``observed_obstacles`` | integer in [-1, 64]; -1 = min(obstacles, 4) | -1 |
    | ``obstacle_weight`` | [0, 10^6] | 6 |
    | ``detection_length`` | (0, 10^4] m | 6 |

    ``render_mode``: ``"human"`` or ``"rgb_array"`` (``pip install "steer-env[render]"``):
    the pen, the flock's centre, the sheep and the dog.

    ## Version History

    * v0: initial release.

    >>> import gymnasium as gym
    >>> import steer_env
    >>> env = gym.make("steer_env/Herding-v0")
    >>> obs, info = env.reset(seed=0)
    >>> obs.shape
    (49,)
    """

    task: ClassVar[HerdingTask] = HERDING

    def __init__(self, render_mode: str | None = None, **kwargs: object) -> None:
        super().__init__(render_mode, **kwargs)
        _check_one_dog(self.config)

    @classmethod
    def vector_env(cls, num_envs: int = 1, **kwargs: Any) -> Any:
        """``num_envs`` Herding-v0 environments in one native batch (one learned dog each)."""
        venv = super().vector_env(num_envs, **kwargs)
        _check_one_dog(venv.config)
        return venv


def _check_one_dog(cfg: HerdingConfig) -> None:
    """The single-agent forms step one learned dog: ``ValueError`` for another ``n_dogs``."""
    if cfg.n_dogs != 1:
        raise ValueError(
            f"Herding-v0 has one learned dog: n_dogs must be 1, got {cfg.n_dogs} "
            "(several dogs: steer_env.envs.herding_v0.parallel_env(n_dogs=...))"
        )


#: The ``vector_entry_point`` of ``steer_env/Herding-v0`` (``gym.make_vec``).
make_herding_vector = HerdingEnv.vector_env
