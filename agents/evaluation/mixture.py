"""Mixtures of opponents for the team task: one role's pool, played one member per
environment.

A *pool* is a list of members of one role of the team pursuit task, each a scripted
strategy of the task (run from observations, :class:`~agents.evaluation.scripted.ScriptedPolicy`)
or a trained model of that role, with a weight. :class:`MixturePolicy` plays a pool as one
policy with SB3's ``predict``: each environment of the batch plays the member drawn for it
at the start of its episode (with the pool's weights, from the policy's own seeded
generator), and each member acts on the rows of its own environments in one batched call.
``train.py --env team_pursuit --opponent-pool POOL.json`` trains a best response to such a
mixture; ``python -m agents.league`` writes the pools of its rounds.

A pool file (JSON)::

    {"role": "evader",
     "members": [{"name": "flow", "strategy": "flow", "weight": 0.5},
                 {"name": "e1", "model": "runs/league/e1/model.zip", "weight": 0.5}]}

A relative ``model`` path is read from the pool file's folder.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.evaluation.policy_base import PolicyLoadError, UsageError
from agents.evaluation.results import atomic_write_json

ROLES = ("pursuer", "evader")


@dataclass(frozen=True)
class Member:
    """One member of a pool: a scripted ``strategy`` of the role or a ``model`` of it."""

    name: str
    weight: float
    strategy: str | None = None
    model: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


def check_weights(weights: Sequence[float], what: str = "weights") -> NDArray[np.float64]:
    """``weights`` as probabilities (divided by their sum); :class:`ValueError` naming
    ``what`` unless they are finite, non-negative and not all zero."""
    w = np.asarray(weights, dtype=np.float64).reshape(-1)
    if w.size == 0:
        raise ValueError(f"{what}: a mixture needs at least one member")
    if not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
        raise ValueError(f"{what} must be finite, non-negative and not all zero, got {w.tolist()}")
    return w / w.sum()


def read_pool(path: str | os.PathLike[str], role: str | None = None) -> tuple[str, list[Member]]:
    """``(role, members)`` of the pool file ``path``; :class:`UsageError` (one line) for a
    missing or malformed file, a role other than ``role`` (when given), or a member that is
    neither a strategy nor a model."""
    p = Path(path)
    try:
        data = json.loads(p.read_text())
    except FileNotFoundError:
        raise UsageError(f"--opponent-pool {p}: no such file") from None
    except (OSError, ValueError) as exc:
        raise UsageError(f"--opponent-pool {p}: not a JSON pool file ({exc})") from None
    if not isinstance(data, dict) or data.get("role") not in ROLES:
        raise UsageError(f'--opponent-pool {p}: needs "role": "pursuer" or "evader"')
    if role is not None and data["role"] != role:
        raise UsageError(f"--opponent-pool {p} is a pool of {data['role']}s, not {role}s")
    raw = data.get("members")
    if not isinstance(raw, list) or not raw:
        raise UsageError(f'--opponent-pool {p}: needs a non-empty "members" list')
    members = []
    for i, m in enumerate(raw):
        if not isinstance(m, dict) or ("strategy" in m) == ("model" in m):
            raise UsageError(
                f'--opponent-pool {p}: member {i} needs exactly one of "strategy" or "model"'
            )
        model = m.get("model")
        if model is not None and not Path(model).is_absolute():
            model = str(p.parent / model)
        try:
            weight = float(m.get("weight", 1.0))
        except (TypeError, ValueError):
            raise UsageError(
                f"--opponent-pool {p}: member {i} has a weight that is not a number"
            ) from None
        name = m.get("name") or m.get("strategy") or Path(model).parent.name
        members.append(Member(str(name), weight, m.get("strategy"), model))
    try:
        check_weights([m.weight for m in members], f"--opponent-pool {p}: the weights")
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return data["role"], members


def write_pool(path: str | os.PathLike[str], role: str, members: Sequence[Member]) -> Path:
    """Write a pool file atomically (the format :func:`read_pool` reads)."""
    if role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}, got {role!r}")
    p = Path(path)
    atomic_write_json(p, {"role": role, "members": [m.to_json() for m in members]})
    return p


def load_members(
    members: Sequence[Member],
    role: str,
    config: dict[str, Any] | None = None,
    task: Any = None,
) -> list:
    """One policy per member of the cross-play task ``task`` (an entry or a name, by
    default :data:`~agents.evaluation.cross_play.DEFAULT_TASK`), in order:
    :class:`~agents.evaluation.scripted.ScriptedPolicy` for a strategy, the loaded model for
    a model (:class:`PolicyLoadError` for a bad one)."""
    from agents.evaluation.cross_play import cross_play_task, load_team_policy
    from agents.evaluation.scripted import ScriptedPolicy

    entry = cross_play_task(task)
    policies = []
    for m in members:
        if m.strategy is not None:
            if m.strategy not in entry.baselines[role]:
                raise UsageError(
                    f"pool member {m.name!r}: {m.strategy!r} is not a scripted {role} strategy "
                    f"of {entry.name} (use {', '.join(entry.baselines[role])})"
                )
            policies.append(ScriptedPolicy(entry, m.strategy, config=config, role=role))
        else:
            try:
                policies.append(
                    load_team_policy(m.model, role, device="cpu", config=config, task=entry)
                )
            except PolicyLoadError as exc:
                raise PolicyLoadError(f"pool member {m.name!r}: {exc}") from None
    return policies


class MixturePolicy:
    """A mixture of policies of one role, played one member per environment.

    Args:
        policies: the members (anything with SB3's ``predict``), all of the same role.
        weights: one per member (divided by their sum).
        agents_per_env: rows of each environment in the observations ``predict`` is given
            (the role's agents per environment, environment-major).
        seed: seeds the generator that draws each environment's member.

    ``predict(obs, episode_start=...)``: the first call (or one with another number of
    environments) draws a member for every environment; later, every environment with a row
    in ``episode_start`` draws again, in environment order. :attr:`member` holds each
    environment's current member; :attr:`draws` counts the draws made.
    """

    def __init__(
        self,
        policies: Sequence[Any],
        weights: Sequence[float],
        agents_per_env: int,
        seed: int | None = None,
        names: Sequence[str] | None = None,
    ) -> None:
        if len(policies) != len(weights):
            raise ValueError(
                f"weights: one per policy ({len(policies)} policies, {len(weights)} weights)"
            )
        if agents_per_env < 1:
            raise ValueError(f"agents_per_env must be >= 1, got {agents_per_env}")
        self.policies = list(policies)
        self.probabilities = check_weights(weights)
        self.agents_per_env = int(agents_per_env)
        self.names = list(names) if names is not None else [str(i) for i in range(len(policies))]
        self._rng = np.random.default_rng(seed)
        self.member: NDArray[np.int64] | None = None
        self.draws = 0

    def _draw(self, n: int) -> NDArray[np.int64]:
        self.draws += n
        return self._rng.choice(len(self.policies), size=n, p=self.probabilities)

    def predict(
        self,
        observation: NDArray[np.floating],
        state: Any = None,
        episode_start: NDArray[np.bool_] | None = None,
        deterministic: bool = True,
    ) -> tuple[NDArray[np.float32], None]:
        """One action per observation row; rows ``e * r .. e * r + r - 1`` are environment
        ``e``'s, and every one of them acts with that environment's member."""
        obs = np.asarray(observation)
        lead = obs.shape[:-1]
        flat = obs.reshape(-1, obs.shape[-1])
        rows, r = flat.shape[0], self.agents_per_env
        if rows % r:
            raise ValueError(
                f"MixturePolicy: {rows} observation rows are not whole environments of {r} agents"
            )
        envs = rows // r
        if self.member is None or self.member.size != envs:
            self.member = self._draw(envs)
        elif episode_start is not None:
            starts = np.asarray(episode_start, dtype=bool).reshape(envs, r).any(axis=1)
            if starts.any():
                self.member[starts] = self._draw(int(starts.sum()))
        row_member = np.repeat(self.member, r)
        actions = np.zeros((rows, 2), dtype=np.float32)
        for j, policy in enumerate(self.policies):
            idx = np.flatnonzero(row_member == j)
            if idx.size:
                a, _ = policy.predict(flat[idx], deterministic=deterministic)
                actions[idx] = np.asarray(a, dtype=np.float32).reshape(idx.size, 2)
        return actions.reshape(*lead, 2), None


def mixture_of_pool(
    members: Sequence[Member],
    role: str,
    agents_per_env: int,
    seed: int | None,
    config: dict[str, Any] | None = None,
    policies: Sequence[Any] | None = None,
) -> MixturePolicy:
    """:class:`MixturePolicy` of a pool's members (loaded unless ``policies`` is given)."""
    if policies is None:
        policies = load_members(members, role, config)
    weights = [m.weight for m in members]
    return MixturePolicy(policies, weights, agents_per_env, seed, [m.name for m in members])
