"""Ray for ``train.py --framework rllib``: check a cluster address, join it or start a
local instance on the loopback interface, and stop it. ray is imported only inside
functions, so a missing ``rllib`` extra is a one-line error.
"""

from __future__ import annotations

import os
import socket
from typing import Any

from agents.evaluation.policy_base import UsageError
from agents.rllib.policy import INSTALL_HINT


def check_address(address: str) -> str:
    """``auto`` or a reachable ``HOST:PORT``; :class:`UsageError` for a malformed address,
    ``ConnectionError`` when nothing listens there (checked with a 5 s TCP connect, since
    Ray itself would retry for a long time)."""
    text = address.strip()
    if text == "auto":
        return text
    if text.startswith("ray://"):
        raise UsageError("Ray Client addresses (ray://) are not supported: use HOST:PORT or auto")
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"bad --address {address!r}: use auto or HOST:PORT (e.g. 10.0.0.1:6379)")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=5):
            pass
    except OSError as exc:
        raise ConnectionError(
            f"cannot reach a Ray cluster at {text}: {exc.strerror or exc} "
            "(start one with `ray start --head` on that machine)"
        ) from None
    return text


#: Ray's switch for multi-machine networking; "0" makes every node and driver of this
#: process tree use 127.0.0.1 (the local default and the tests need no other address).
LOOPBACK_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}


#: Environment of this job's Ray worker processes. One math thread per actor on shared
#: cores. A fixed string hash seed: RLlib's multi-agent env runners group agents through
#: Python sets of agent ids, whose order (and so which agent gets which draw of the
#: exploration noise) would otherwise change from process to process, and the same --seed
#: would not reproduce a team run's episodes.
WORKER_ENV = {
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMBA_NUM_THREADS": "1",
    "PYTHONHASHSEED": "0",
}


def use_loopback_only() -> None:
    """Keep a Ray started by this process on the loopback interface.

    Without it, Ray gives even a purely local instance the machine's network address.
    Ray reads the switch when it is imported, so this runs before ``import ray``; an
    explicit setting in the environment wins."""
    for key, value in LOOPBACK_ENV.items():
        os.environ.setdefault(key, value)


def start_ray(opts: dict[str, Any]) -> dict[str, Any]:
    """Join ``opts["address"]`` or start a local Ray; check there are CPUs for the env
    runners and learners. Returns a description of the cluster for config.json."""
    if not opts["address"]:
        use_loopback_only()
    try:
        import ray
    except ImportError:
        raise UsageError(f"--framework rllib needs RLlib: {INSTALL_HINT}") from None
    runners, learners = int(opts["num_env_runners"]), int(opts["num_learners"])
    need = runners + learners
    env_vars = dict(WORKER_ENV)
    try:
        if opts["address"]:
            ray.init(
                address=opts["address"],
                runtime_env={"env_vars": env_vars},
                log_to_driver=False,
                logging_level="ERROR",
            )
        else:
            # A local instance sized so the requested actors fit even on a small machine
            # (Ray time-shares the cores; actors are mostly waiting on each other in PPO).
            ray.init(
                num_cpus=max(os.cpu_count() or 1, need, 1),
                include_dashboard=False,
                runtime_env={"env_vars": env_vars},
                log_to_driver=False,
                logging_level="ERROR",
            )
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = opts["address"] or "a local instance"
        raise ConnectionError(f"cannot start or join Ray ({where}): {exc}") from None
    cpus = float(ray.cluster_resources().get("CPU", 0))
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    if need > cpus:
        stop_ray()
        raise RuntimeError(
            f"the Ray cluster has {cpus:g} CPUs but {runners} env runners + {learners} "
            "learners need one each; lower --num-env-runners/--num-learners or add nodes"
        )
    return {"address": opts["address"] or "local", "cpus": cpus, "nodes": len(nodes)}


def stop_ray() -> None:
    try:
        import ray

        if ray.is_initialized():
            ray.shutdown()
    except ImportError:
        pass
