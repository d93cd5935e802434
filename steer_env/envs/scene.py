"""Drawing one environment of a batch: reads the state, never changes it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from steer_env import behaviors
from steer_env.engine.batch import Batch
from steer_env.tasks.config import TaskConfig

#: Positions kept per vehicle for the trails.
TRAIL_LENGTH = 30


def draw(renderer, batch: Batch, env: int, trails, cfg: TaskConfig) -> NDArray[np.uint8] | None:
    """Draw environment ``env`` of ``batch`` with ``renderer`` (a
    :class:`steer_env.rendering.Renderer`) and return its frame (``None`` in human mode).

    Shows the arena, its obstacles (filled circles), trails, what the task's rules draw
    (``draw_overlay`` of the rules package: the capture radius around each pursuer), the
    debug overlays of each scripted
    vehicle's strategy (pursuit's predicted intercept point, the wander circle and target,
    evade's threat range, separation's radius) and the vehicles as triangles coloured by
    team, learned agents outlined; vehicles out of the game are left out.
    """
    from steer_env.rendering import ROLE_COLORS

    state = batch.state
    pos = state.position[env]
    vel = state.velocity[env]
    head = state.heading[env]
    alive = state.alive[env]
    max_speed = batch.vehicles["max_speed"]
    radius = batch.vehicles["radius"]
    team_names = batch.rules.TEAMS
    roles = [team_names[code] for code in batch.team.tolist()]
    debug = ROLE_COLORS["debug"]
    renderer.begin_frame()

    obstacles = state.obstacles[env]
    present = obstacles[:, 2] > 0.0
    if present.any():
        shown = obstacles[present]
        renderer.circle(shown[:, :2], shown[:, 2], ROLE_COLORS["obstacle"], width=0)

    for i in range(batch.n_vehicles):
        renderer.polyline(trails.get(i), ROLE_COLORS[roles[i]], width=1)

    batch.rules.draw_overlay(renderer, batch, env)

    for i, spec in enumerate(batch.roster):
        if spec.strategy is None or not alive[i]:
            continue
        j = batch.nearest_opponent(env, i)
        for b in spec.strategy.behaviors:
            if b.kind == "pursuit" and j >= 0:
                aim = behaviors.pursuit_target(
                    pos[i], vel[i], max_speed[i], pos[j], vel[j], b.value("prediction_time")
                )
                renderer.line(pos[i], aim, debug, width=1)
                renderer.point(aim, debug, size_px=4)
            elif b.kind == "separation":
                renderer.circle(pos[i], b.value("neighbor_radius"), debug, width=1)
            elif b.kind == "wander":
                distance = b.value("wander_distance")
                centre = pos[i] + head[i] * distance
                target = behaviors.wander_world_target(
                    pos[i], head[i], state.wander[env, i], distance
                )
                renderer.circle(centre, b.value("wander_radius"), debug, width=1)
                renderer.point(target, debug, size_px=4)
            elif b.kind == "evade" and np.isfinite(b.value("threat_range")):
                renderer.circle(pos[i], b.value("threat_range"), ROLE_COLORS[roles[i]], width=1)

    shown = np.flatnonzero(alive)
    colors = [ROLE_COLORS[roles[i]] for i in shown]
    renderer.vehicles(pos[shown], head[shown], radius[shown] * 1.6, colors)
    for i in batch.agent_index:
        if alive[i]:
            renderer.circle(pos[i], radius[i] * 2.2, ROLE_COLORS["agent"], width=2)
    renderer.text(f"t = {int(state.steps[env])}/{batch.world.time_limit}", (8, 8))
    return renderer.finish()


class Scenes:
    """What every front end needs to draw the environments of its batch: one renderer and
    one trail buffer per environment that has been drawn (made on its first frame, so an
    env that never renders never imports pygame).

    ``render_mode`` is the renderers' (``"rgb_array"``, or ``"human"`` for a window of
    one environment); the frames show :func:`draw`."""

    def __init__(
        self,
        batch: Batch,
        config: Any,
        render_mode: str,
        title: str,
        fps: float,
    ) -> None:
        self.batch = batch
        self.config = config
        self.render_mode = render_mode
        self.title = title
        self.fps = fps
        self._renderers: dict[int, Any] = {}
        self._trails: dict[int, Any] = {}

    def frame(self, env: int) -> NDArray[np.uint8] | None:
        """Draw environment ``env`` (``None`` in human mode, which shows it instead)."""
        from steer_env import rendering

        if env not in self._renderers:
            half = self.config.half_size
            self._renderers[env] = rendering.Renderer(
                (-half, -half, half, half),
                width_px=600,
                render_mode=self.render_mode,
                fps=self.fps,
                title=self.title,
            )
            self._trails[env] = rendering.Trails(TRAIL_LENGTH)
            self._trails[env].reset(self.batch.state.position[env])
        return draw(self._renderers[env], self.batch, env, self._trails[env], self.config)

    def restart(self, envs: Iterable[int]) -> None:
        """New episodes in ``envs``: their trails start again from where the vehicles are."""
        for env in envs:
            trails = self._trails.get(env)
            if trails is not None:
                trails.reset(self.batch.state.position[env])

    def push(self, stepped: NDArray[np.bool_] | None = None) -> None:
        """After a step: every drawn environment's trail takes the new positions (only
        those of ``stepped``, when given: one that restarted instead of stepping has the
        trail :meth:`restart` gave it, as a single env's after ``reset()``)."""
        for env, trails in self._trails.items():
            if stepped is None or stepped[env]:
                trails.push(self.batch.state.position[env])

    def close(self) -> None:
        for renderer in self._renderers.values():
            renderer.close()
        self._renderers.clear()
        self._trails.clear()

    def __getstate__(self) -> dict[str, Any]:
        # pygame windows and surfaces cannot be pickled: a copy draws with its own.
        state = self.__dict__.copy()
        state["_renderers"] = {}
        state["_trails"] = {}
        return state
