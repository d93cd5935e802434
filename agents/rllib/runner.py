"""An RLlib env runner that samples the native vector env with whole-array operations.

**Why.** RLlib 2.60's ``SingleAgentEnvRunner._sample`` does Python work per sub-env and
step: an ``add_env_step`` on an episode object, the env-to-module and module-to-env
connector pipelines over per-episode lists, per-episode callbacks. That is tens of
microseconds per env-step, against under a microsecond for one sub-env's step in the
package's batched vector env (:class:`~steer_env.envs.vector.SteerVectorEnv`), so the
native env makes the stock runner's sampling only about 2x faster than Gymnasium's
``SyncVectorEnv`` of single envs (``benchmarks/results_rllib.json``, written by
``python -m benchmarks --sections sb3,rllib``; the RLlib guide tables it).

:class:`NativeVectorEnvRunner` keeps everything of the parent class (env creation and
seeding, the RLModule, ``get_state``/``set_state`` weight sync, checkpoints, metrics,
``sample()``'s timers and ``on_sample_end``) and replaces only the sampling loop. Per
timestep it does, on ``(num_envs, ...)`` arrays:

1. one forward pass of the RLModule on the ``(num_envs, obs_dim)`` observations
   (``forward_exploration``, or ``forward_inference`` when ``explore=False``), actions drawn
   from the module's action distribution (deterministic without exploration) and their
   log-probabilities, exactly as RLlib's ``GetActions`` connector does; the actions sent
   to the env are unsquashed or clipped as RLlib's ``NormalizeAndClipActions`` would
   (``normalize_actions``/``clip_actions``; train.py switches both off and the env wrapper
   clips, see :mod:`agents.rllib.env`), while the episodes store the distribution's
   actions;
2. one ``step`` of the vector env;
3. the step's observations, actions, rewards, terminated/truncated flags, infos and model
   outputs (``action_dist_inputs``, ``action_logp``, ``weights_seq_no``) appended as
   arrays.

At the end of ``sample()`` the per-step arrays are stacked into ``(num_envs, T, ...)``
arrays and cut, per sub-env, into ``SingleAgentEpisode`` chunks built directly from
numpy slices: one per episode that ended in this call (terminated or truncated) and one
per ongoing episode (continued in the next call under the same id, with the one-step
lookback buffer of ``SingleAgentEpisode.cut(len_lookback_buffer=1)``). The Python work is
per episode and per step, no longer per sub-env and step.

**Semantics kept** (``tests/test_rllib_runner.py`` compares both runners episode by
episode): the sub-envs follow Gymnasium's ``NEXT_STEP`` autoreset, where the step after an
episode's last step resets that sub-env and ignores its action; that step starts the next
episode (its observation is the new episode's first) and is not a transition, nor counted
in ``num_env_steps_sampled``, as in RLlib's own loop, which also runs until that count
reaches ``num_timesteps``. One id per episode across its chunks, ``t_started``, the
lookback data of continued chunks, ``is_terminated``/``is_truncated``, infos per step, the
numbers of timesteps and episodes logged, episode returns and lengths (``get_metrics``),
the ``on_episode_end`` callback (with ``prev_episode_chunks``) and the returned order (done
episodes by the step they ended in, then sub-env index; then the ongoing chunks by
sub-env) are the parent's. A failing ``env.step`` is handled as the parent does: with
``restart_failed_sub_environments`` the env is recreated and reset, the episodes that
ended before the failure are returned and the ongoing ones dropped; without it the runner
raises and RLlib restarts the runner (``restart_failed_env_runners``).

**Differences.** ``on_episode_end`` sees the episode already as numpy arrays (RLlib calls it
just before ``to_numpy()``). The connector metrics (``env_to_module_connector``,
``module_to_env_connector`` timers, ``env_to_module_sum_episodes_length_in/out``) are not
logged, as there are no connector passes; the module's forward pass and the env steps are
(``rlmodule_inference_timer``, ``env_step_timer``). Episode ids are fresh uuids, as RLlib's,
but not the same ones. Episode durations (``episode_duration_sec_mean``) are wall time, so
shorter.

**Fallback.** The fast loop needs what it can honour in whole arrays. Otherwise ``_sample``
is the parent's, unchanged (after a reset of all sub-envs when switching between the two
loops, since they keep their ongoing episodes differently):

* a user env-to-module or module-to-env connector (e.g. an observation filter such as
  ``MeanStdFilter``), or RLlib's default connectors switched off;
* a stateful (recurrent) RLModule, or no RLModule;
* ``on_episode_created``, ``on_episode_start`` or ``on_episode_step`` callbacks (called per
  sub-env and step by RLlib);
* observation or action spaces other than ``Box``, an env whose autoreset mode is not
  ``NEXT_STEP``, ``episodes_to_numpy=False`` or ``episode_lookback_horizon`` other than 1;
* per call: ``sample(num_episodes=...)`` and ``sample(random_actions=True)``.

:attr:`NativeVectorEnvRunner.fallback_reason` says why a runner uses the parent's loop
(``None`` when it does not).
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.callbacks.utils import make_callback
from ray.rllib.core.columns import Columns
from ray.rllib.env.env_runner import ENV_STEP_FAILURE
from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner
from ray.rllib.env.single_agent_episode import SingleAgentEpisode
from ray.rllib.utils import force_list
from ray.rllib.utils.metrics import RLMODULE_INFERENCE_TIMER, WEIGHTS_SEQ_NO
from ray.rllib.utils.spaces.space_utils import clip_action, unsquash_action

#: Callbacks RLlib makes per sub-env and step (or per reset): the fast loop cannot honour them.
PER_STEP_CALLBACKS = ("on_episode_created", "on_episode_start", "on_episode_step")


@dataclass
class Carry:
    """What one ``sample()`` call hands the next, per sub-env (``E`` = ``num_envs``).

    ``obs`` is the last observation the env returned (``(E, obs_dim)``) and ``infos`` its
    info dicts; ``pending[i]``: sub-env ``i``'s episode ended on the last step, so its next
    step is a reset step. Otherwise sub-env ``i`` has an ongoing episode ``ids[i]`` whose
    next chunk starts at global timestep ``t_started[i]``; ``has_lookback[i]``: that chunk
    keeps the previous step (``lookback_*`` rows, as ``SingleAgentEpisode.cut(1)`` does);
    without it the episode has just been reset (no step taken yet). ``reset_time``: the
    ``perf_counter`` of a reset of all sub-envs just before (their episodes' start, as the
    parent times them), else None.
    """

    obs: np.ndarray
    infos: list[dict[str, Any]]
    pending: np.ndarray
    ids: list[str]
    t_started: np.ndarray
    has_lookback: np.ndarray
    lookback_obs: np.ndarray
    lookback_infos: list[dict[str, Any]]
    lookback_actions: np.ndarray
    lookback_rewards: np.ndarray
    lookback_extras: dict[str, np.ndarray]
    reset_time: float | None = None


@dataclass
class Recording:
    """One stretch of env steps, stacked per sub-env (``E`` sub-envs, ``L`` steps).

    Indices along axis 1: ``obs[:, 0]`` is the lookback observation, ``obs[:, k + 1]`` the
    observation after step ``k`` (``obs[:, 1]`` the one before step 1); ``actions[:, k]``
    (likewise ``rewards``, ``extras``) is step ``k``'s (``k`` = 1..L), taken at
    ``obs[:, k]``, and index 0 the lookback step's. ``infos[j][i]`` goes with ``obs[i, j]``.
    ``reset[:, k - 1]``: step ``k`` reset that sub-env (not a transition);
    ``terminated``/``truncated``: step ``k``'s flags. ``stamps[k]``: ``perf_counter`` after
    step ``k``. ``failed``: the stretch ended with a failed env step (not recorded).
    ``carry``: the state the stretch started from.
    """

    obs: np.ndarray
    infos: list[list[dict[str, Any]]]
    actions: np.ndarray
    rewards: np.ndarray
    extras: dict[str, np.ndarray]
    reset: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    stamps: list[float]
    timesteps: int
    failed: bool
    carry: Carry


def _numpy(value: Any) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    return np.asarray(value)


class NativeVectorEnvRunner(SingleAgentEnvRunner):
    """``SingleAgentEnvRunner`` whose ``sample(num_timesteps=...)`` works on whole arrays
    of the vector env (see the module docstring for what it keeps, what differs and when it
    falls back to the parent's loop)."""

    def __init__(self, *, config: Any, **kwargs: Any) -> None:
        super().__init__(config=config, **kwargs)
        self.fallback_reason: str | None = self._why_not_fast()
        self._carry: Carry | None = None
        # Which loop owns the ongoing episodes ("fast", "parent" or None before sampling).
        self._loop_owner: str | None = None

    # ------------------------------------------------------------ support
    def _why_not_fast(self) -> str | None:
        """Why the fast loop cannot honour this runner's config (None: it can)."""
        cfg = self.config
        if self.env is None:
            return "no env on this runner"
        if self.module is None:
            return "no RLModule"
        if self.module.is_stateful():
            return "stateful RLModule"
        if cfg._env_to_module_connector is not None:
            return "custom env-to-module connector"
        if cfg._module_to_env_connector is not None:
            return "custom module-to-env connector"
        if not (
            cfg.add_default_connectors_to_env_to_module_pipeline
            and cfg.add_default_connectors_to_module_to_env_pipeline
        ):
            return "RLlib's default connectors are switched off"
        if not cfg.episodes_to_numpy:
            return "episodes_to_numpy=False"
        if cfg.episode_lookback_horizon != 1:
            return f"episode_lookback_horizon={cfg.episode_lookback_horizon} (not 1)"
        for name in PER_STEP_CALLBACKS:
            if getattr(cfg, f"callbacks_{name}", None):
                return f"{name} callback"
            for cls in force_list(cfg.callbacks_class):
                if getattr(cls, name, None) is not getattr(RLlibCallback, name):
                    return f"{name} callback in {cls.__name__}"
        if not isinstance(self.env.single_observation_space, gym.spaces.Box):
            return "observation space is not a Box"
        if not isinstance(self.env.single_action_space, gym.spaces.Box):
            return "action space is not a Box"
        mode = self.env.metadata.get("autoreset_mode", gym.vector.AutoresetMode.NEXT_STEP)
        if gym.vector.AutoresetMode(mode) != gym.vector.AutoresetMode.NEXT_STEP:
            return f"autoreset mode {mode} (not NEXT_STEP)"
        return None

    def make_env(self) -> None:
        super().make_env()
        self._carry = None  # a new env starts over (the parent sets _needs_initial_reset)

    # ------------------------------------------------------------ sampling
    def _sample(
        self,
        *,
        num_timesteps: int | None = None,
        num_episodes: int | None = None,
        explore: bool,
        random_actions: bool = False,
        force_reset: bool = False,
    ) -> list[SingleAgentEpisode]:
        if self.fallback_reason is not None or num_timesteps is None or random_actions:
            if self._loop_owner == "fast":
                force_reset = True  # the parent's episodes are stale
            self._loop_owner = "parent"
            return super()._sample(
                num_timesteps=num_timesteps,
                num_episodes=num_episodes,
                explore=explore,
                random_actions=random_actions,
                force_reset=force_reset,
            )
        if self._loop_owner != "fast":
            force_reset = True
        self._loop_owner = "fast"
        return self._sample_arrays(int(num_timesteps), bool(explore), bool(force_reset))

    def _sample_arrays(
        self, num_timesteps: int, explore: bool, force_reset: bool
    ) -> list[SingleAgentEpisode]:
        if force_reset or self._needs_initial_reset or self._carry is None:
            self._reset_carry()
        done: list[tuple[int, int, SingleAgentEpisode]] = []
        while True:
            rec = self._record(num_timesteps, explore)
            ended, ongoing = self._episodes(rec)
            done.extend(ended)
            if not rec.failed:
                break
            # As the parent: the env was recreated; reset it, drop the ongoing episodes,
            # keep those that ended, and count timesteps from the reset.
            self._reset_carry()
        done_episodes = [e for _, _, e in done]
        self._done_episodes_for_metrics.extend(done_episodes)
        for episode in ongoing:
            self._ongoing_episodes_for_metrics[episode.id_].append(episode)
        self._log_env_steps(metric=self._metrics_num_env_steps_sampled, num_steps=rec.timesteps)
        self._increase_sampled_metrics(rec.timesteps, len(done_episodes))
        return done_episodes + ongoing

    def _reset_carry(self) -> None:
        """Reset every sub-env (seeded on the first reset, as the parent) and start a new
        episode in each."""
        self._shared_data = {}
        self._ongoing_episodes_for_metrics.clear()
        obs, infos = self._try_env_reset(
            seed=self._seed if self._needs_initial_reset else None, options=None
        )
        self._needs_initial_reset = False
        n = self.num_envs
        obs = np.array(obs, copy=True)
        act_space = self.env.single_action_space
        self._carry = Carry(
            obs=obs,
            infos=list(infos),
            pending=np.zeros(n, dtype=bool),
            ids=[uuid.uuid4().hex for _ in range(n)],
            t_started=np.zeros(n, dtype=np.int64),
            has_lookback=np.zeros(n, dtype=bool),
            lookback_obs=np.zeros_like(obs),
            lookback_infos=[{} for _ in range(n)],
            lookback_actions=np.zeros((n, *act_space.shape), dtype=act_space.dtype),
            lookback_rewards=np.zeros(n, dtype=np.float64),
            lookback_extras={},
            reset_time=time.perf_counter(),
        )

    def _actions_for_env(self, actions: np.ndarray) -> np.ndarray:
        """The env's actions from the distribution's, as RLlib's NormalizeAndClipActions."""
        space = self.env.single_action_space
        if self.config.normalize_actions:
            return unsquash_action(actions, space)
        if self.config.clip_actions:
            return clip_action(actions, space)
        return actions

    def _act(self, obs: np.ndarray, explore: bool, ts: int) -> dict[str, np.ndarray]:
        """Module forward pass and action sampling on all sub-envs' observations (the
        default env-to-module connectors' batch, then RLlib's GetActions)."""
        batch = {Columns.OBS: torch.from_numpy(obs).to(self._device)}
        module = self.module
        with torch.no_grad():
            if explore:
                runners = self.config.num_env_runners or 1
                t = (self.num_env_steps_sampled_lifetime // runners + ts) * runners
                with self.metrics.log_time(RLMODULE_INFERENCE_TIMER):
                    out = dict(module.forward_exploration(batch, t=t))
            else:
                with self.metrics.log_time(RLMODULE_INFERENCE_TIMER):
                    out = dict(module.forward_inference(batch))
            if Columns.ACTIONS not in out:
                if explore:
                    dist_cls = module.get_exploration_action_dist_cls()
                else:
                    dist_cls = module.get_inference_action_dist_cls()
                dist = dist_cls.from_logits(out[Columns.ACTION_DIST_INPUTS])
                if not explore:
                    dist = dist.to_deterministic()
                actions = dist.sample()
                out[Columns.ACTIONS] = actions
                if Columns.ACTION_LOGP not in out:
                    out[Columns.ACTION_LOGP] = dist.logp(actions)
        result = {k: _numpy(v) for k, v in out.items()}
        for key, value in result.items():
            if value.ndim == 0 or value.shape[0] != self.num_envs:
                raise RuntimeError(
                    f"{type(self).__name__}: the RLModule's output {key!r} has shape "
                    f"{value.shape}, not one row per sub-env ({self.num_envs})"
                )
        return result

    def _record(self, num_timesteps: int, explore: bool) -> Recording:
        """Step all sub-envs until ``num_timesteps`` transitions (reset steps not counted)
        are recorded, or an env step fails."""
        c = self._carry
        assert c is not None
        n = self.num_envs
        obs_steps = [c.lookback_obs, c.obs]
        info_steps = [c.lookback_infos, c.infos]
        action_steps = [c.lookback_actions]
        reward_steps = [c.lookback_rewards]
        extra_steps: dict[str, list[np.ndarray]] = {}
        reset_steps: list[np.ndarray] = []
        terminated_steps: list[np.ndarray] = []
        truncated_steps: list[np.ndarray] = []
        stamps = [time.perf_counter()]
        pending = c.pending
        obs = c.obs
        ts = 0
        failed = False
        seq_no = np.full(n, self._weights_seq_no, dtype=np.int64)
        while ts < num_timesteps:
            out = self._act(obs, explore, ts)
            actions = out.pop(Columns.ACTIONS)
            to_env = out.pop(Columns.ACTIONS_FOR_ENV, None)
            if to_env is None:
                to_env = self._actions_for_env(actions)
            out[WEIGHTS_SEQ_NO] = seq_no
            results = self._try_env_step(to_env)
            if isinstance(results, str) and results == ENV_STEP_FAILURE:
                failed = True
                break
            obs, rewards, terminated, truncated, infos = results
            obs = np.array(obs, copy=True)
            terminated = np.array(terminated, dtype=bool)
            truncated = np.array(truncated, dtype=bool)
            obs_steps.append(obs)
            info_steps.append(list(infos))
            action_steps.append(actions)
            reward_steps.append(np.array(rewards, dtype=np.float64))
            for key, value in out.items():
                if key not in extra_steps:
                    first = c.lookback_extras.get(key)
                    if first is None:
                        first = np.zeros_like(value)
                    extra_steps[key] = [first]
                extra_steps[key].append(value)
            reset_steps.append(pending)
            terminated_steps.append(terminated)
            truncated_steps.append(truncated)
            stamps.append(time.perf_counter())
            ts += n - int(np.count_nonzero(pending))
            # A reset step never ends an episode (the parent ignores its flags).
            pending = (terminated | truncated) & ~pending
        empty = np.zeros((n, 0), dtype=bool)
        return Recording(
            obs=np.stack(obs_steps, axis=1),
            infos=info_steps,
            actions=np.stack(action_steps, axis=1),
            rewards=np.stack(reward_steps, axis=1),
            extras={k: np.stack(v, axis=1) for k, v in extra_steps.items()},
            reset=np.stack(reset_steps, axis=1) if reset_steps else empty,
            terminated=np.stack(terminated_steps, axis=1) if terminated_steps else empty,
            truncated=np.stack(truncated_steps, axis=1) if truncated_steps else empty,
            stamps=stamps,
            timesteps=ts,
            failed=failed,
            carry=c,
        )

    def _episodes(
        self, rec: Recording
    ) -> tuple[list[tuple[int, int, SingleAgentEpisode]], list[SingleAgentEpisode]]:
        """Cut a recording into episode chunks: ``(step, sub-env, episode)`` for each
        episode that ended (and its ``on_episode_end`` callback), and the ongoing chunks
        (those with at least one step; none after a failed step). Updates the carry."""
        c = rec.carry
        n = self.num_envs
        steps = rec.reset.shape[1]
        if steps == 0:
            return [], []
        done_mask = (rec.terminated | rec.truncated) & ~rec.reset
        env_of, step_of = np.nonzero(rec.reset | done_mask)
        bounds = np.searchsorted(env_of, np.arange(n + 1))
        ended: list[tuple[int, int, SingleAgentEpisode]] = []
        ongoing: list[SingleAgentEpisode] = []
        ids = list(c.ids)
        t_started = c.t_started.copy()
        for i in range(n):
            is_open = not c.pending[i]
            id_, t0 = c.ids[i], int(c.t_started[i])
            lookback = int(c.has_lookback[i])
            first = 1 - lookback  # index of the chunk's first stored observation
            start = c.reset_time or rec.stamps[1]
            for j in step_of[bounds[i] : bounds[i + 1]].tolist():
                if rec.reset[i, j]:  # step j + 1 started a new episode
                    is_open, id_, t0, lookback, first = True, uuid.uuid4().hex, 0, 0, j + 2
                    start = rec.stamps[j + 1]
                else:  # step j + 1 ended the episode
                    episode = self._chunk(rec, i, id_, t0, first, j + 2, lookback, start)
                    episode.is_terminated = bool(rec.terminated[i, j])
                    episode.is_truncated = bool(rec.truncated[i, j])
                    ended.append((j, i, episode))
                    is_open = False
            if is_open and not rec.failed:
                length = steps + 1 - first - lookback
                if length > 0:
                    episode = self._chunk(rec, i, id_, t0, first, steps + 1, lookback, start)
                    episode.validate()
                    ongoing.append(episode)
                    t0 += length
            ids[i], t_started[i] = id_, t0
        if rec.failed:
            return self._end_episodes(ended), []
        last = steps  # index of the last step's action, reward and outputs
        pending = done_mask[:, -1]
        self._carry = Carry(
            obs=rec.obs[:, -1].copy(),
            infos=rec.infos[-1],
            pending=pending,
            ids=ids,
            t_started=t_started,
            has_lookback=~pending & ~rec.reset[:, -1],
            lookback_obs=rec.obs[:, -2].copy(),
            lookback_infos=rec.infos[-2],
            lookback_actions=rec.actions[:, last].copy(),
            lookback_rewards=rec.rewards[:, last].copy(),
            lookback_extras={k: v[:, last].copy() for k, v in rec.extras.items()},
        )
        return self._end_episodes(ended), ongoing

    def _chunk(
        self,
        rec: Recording,
        i: int,
        id_: str,
        t_started: int,
        first: int,
        last_obs: int,
        lookback: int,
        start: float,
    ) -> SingleAgentEpisode:
        """Sub-env ``i``'s episode chunk with observations ``rec.obs[i, first:last_obs + 1]``
        (the first ``lookback`` of them in the lookback buffer)."""
        acts = slice(first, last_obs)
        episode = SingleAgentEpisode(
            id_=id_,
            observations=rec.obs[i, first : last_obs + 1],
            observation_space=self.env.single_observation_space,
            infos=[rec.infos[j][i] for j in range(first, last_obs + 1)],
            actions=rec.actions[i, acts],
            action_space=self.env.single_action_space,
            rewards=rec.rewards[i, acts],
            extra_model_outputs={k: v[i, acts] for k, v in rec.extras.items()},
            t_started=t_started,
            len_lookback_buffer=lookback,
        )
        episode._start_time = start
        episode._last_step_time = rec.stamps[last_obs - 1]
        return episode

    def _end_episodes(
        self, ended: list[tuple[int, int, SingleAgentEpisode]]
    ) -> list[tuple[int, int, SingleAgentEpisode]]:
        """``on_episode_end`` for each ended episode, in the parent's order (by step, then
        sub-env)."""
        ended.sort(key=lambda x: (x[0], x[1]))
        for _, i, episode in ended:
            make_callback(
                "on_episode_end",
                callbacks_objects=self._callbacks,
                callbacks_functions=self.config.callbacks_on_episode_end,
                kwargs={
                    "episode": episode,
                    "env_runner": self,
                    "metrics_logger": self.metrics,
                    "env": self.env.unwrapped,
                    "rl_module": self.module,
                    "env_index": i,
                    "prev_episode_chunks": self._ongoing_episodes_for_metrics[episode.id_],
                },
            )
        return ended
