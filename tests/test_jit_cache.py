"""The on-disk kernel cache cannot go stale (steer_env/core/jit.py), tested for real.

A copy of the package runs a kernel in fresh processes sharing one ``NUMBA_CACHE_DIR``:
:func:`steer_env.core.combine.dither_candidate` reads ``FORCE_EPS``, a constant defined in
another module (``core/behaviors.py``). numba's own cache looks only at the defining file,
so editing the constant would keep running the old machine code; the stamp of
:class:`~steer_env.core.jit.SteerCacheLocator` (a hash of the core sources, and of the
engine sources too for engine code) must recompile instead. The edit keeps the file's
size and mtime, so only the contents can tell.
"""

from __future__ import annotations

import collections
import gc
import json
import os
import shutil
import subprocess
import sys
import types
import weakref
from pathlib import Path

import numba
import numpy as np
from numba.core.caching import NullCache

import steer_env
from steer_env.core.jit import SteerCacheLocator, bind, bound_functions, specialise

SCRIPT = """
import json, sys
sys.path.insert(0, sys.argv[1])
import steer_env
assert steer_env.__file__.startswith(sys.argv[1]), steer_env.__file__
from steer_env.core import combine
sx, sy, wins = combine.dither_candidate(1.0, 0.0, 1.0, 1.0, 0.0)
stats = combine.dither_candidate.stats
print(json.dumps({"wins": bool(wins), "hits": sum(stats.cache_hits.values()),
                  "misses": sum(stats.cache_misses.values())}))
"""


def _run(root: Path, cache: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env["NUMBA_CACHE_DIR"] = str(cache)
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(root)],
        env=env,
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_editing_a_constant_in_another_core_module_recompiles(tmp_path):
    src = Path(steer_env.__file__).parent
    root = tmp_path / "pkg"
    shutil.copytree(src, root / "steer_env", ignore=shutil.ignore_patterns("__pycache__"))
    cache = tmp_path / "numba_cache"

    first = _run(root, cache)
    assert first == {"wins": True, "hits": 0, "misses": 1}

    # Same sources: the machine code comes from the cache.
    second = _run(root, cache)
    assert second == {"wins": True, "hits": 1, "misses": 0}

    # Raise FORCE_EPS (a different module from the kernel) without changing size or mtime.
    behaviors_py = root / "steer_env" / "core" / "behaviors.py"
    text = behaviors_py.read_text()
    assert "FORCE_EPS = 1e-12\n" in text
    st = behaviors_py.stat()
    behaviors_py.write_text(text.replace("FORCE_EPS = 1e-12\n", "FORCE_EPS = 9e+99\n"))
    os.utime(behaviors_py, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert behaviors_py.stat().st_size == st.st_size

    third = _run(root, cache)
    assert third == {"wins": False, "hits": 0, "misses": 1}
    # And the recompiled code is cached in turn.
    assert _run(root, cache) == {"wins": False, "hits": 1, "misses": 0}

    # An engine edit leaves the library's machine code valid: still a cache hit.
    step_py = root / "steer_env" / "engine" / "step.py"
    step_py.write_text(step_py.read_text() + "\n# an edit\n")
    assert _run(root, cache) == {"wins": False, "hits": 1, "misses": 0}


STAMP_SCRIPT = """
import json, sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from steer_env.core import jit
root = Path(sys.argv[1]) / "steer_env"
locate = lambda f: jit.SteerCacheLocator(jit.source_stamp, str(root / f), "").get_source_stamp()
print(json.dumps({
    "core": locate("core/physics.py"),
    "engine": locate("engine/step.py"),
    "pursuit_evasion": locate("rules/pursuit_evasion/compiled.py"),
    "other_rules": locate("rules/other_rules/compiled.py"),
}))
"""


def _stamps(root: Path) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", STAMP_SCRIPT, str(root)],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_engine_code_is_stamped_by_core_and_engine_sources_the_library_by_core(tmp_path):
    src = Path(steer_env.__file__).parent
    root = tmp_path / "pkg"
    shutil.copytree(src, root / "steer_env", ignore=shutil.ignore_patterns("__pycache__"))
    before = _stamps(root)
    engine_py = root / "steer_env" / "engine" / "layout.py"
    engine_py.write_text(engine_py.read_text() + "\n# an engine edit\n")
    after_engine = _stamps(root)
    assert after_engine["core"] == before["core"]
    assert after_engine["engine"] != before["engine"]
    core_py = root / "steer_env" / "core" / "options.py"
    core_py.write_text(core_py.read_text() + "\n# a core edit\n")
    after_core = _stamps(root)
    assert after_core["core"] != after_engine["core"]
    assert after_core["engine"] != after_engine["engine"]


def test_each_rules_package_is_stamped_by_core_engine_and_its_own_sources(tmp_path):
    """A task's compiled rules read the core, the engine and their own package: an edit of
    any of those recompiles them, an edit of another task's rules does not."""
    src = Path(steer_env.__file__).parent
    root = tmp_path / "pkg"
    shutil.copytree(src, root / "steer_env", ignore=shutil.ignore_patterns("__pycache__"))
    other = root / "steer_env" / "rules" / "other_rules"
    other.mkdir()
    (other / "__init__.py").write_text("# another task's rules\n")
    (other / "compiled.py").write_text("X = 1\n")
    before = _stamps(root)
    assert len(set(before.values())) == 4

    (other / "compiled.py").write_text("X = 2\n")
    after_other = _stamps(root)
    assert after_other["pursuit_evasion"] == before["pursuit_evasion"]
    assert after_other["engine"] == before["engine"]
    assert after_other["other_rules"] != before["other_rules"]

    rules_py = root / "steer_env" / "rules" / "pursuit_evasion" / "__init__.py"
    rules_py.write_text(rules_py.read_text() + "\n# a rules edit\n")
    after_rules = _stamps(root)
    assert after_rules["pursuit_evasion"] != after_other["pursuit_evasion"]
    assert after_rules["other_rules"] == after_other["other_rules"]
    assert after_rules["engine"] == after_other["engine"]

    engine_py = root / "steer_env" / "engine" / "features.py"
    engine_py.write_text(engine_py.read_text() + "\n# an engine edit\n")
    after_engine = _stamps(root)
    assert after_engine["pursuit_evasion"] != after_rules["pursuit_evasion"]
    assert after_engine["other_rules"] != after_rules["other_rules"]


# --------------------------------------------------------------------------- specialisation
# A module-level constant that compiled code branches on, and the functions that read it:
# what steer_env.core.jit.specialise compiles again with other values.
CHOICES = (1, 2)


@numba.njit
def _heavy(x):
    return x + 10.0


@numba.njit
def _pick(k, x):
    if 3 in CHOICES and k == 3:
        return _heavy(x)
    if 1 in CHOICES and k == 1:
        return x + 1.0
    return x


@numba.njit
def _outer(k, x):
    return _pick(k, x) * 2.0


@numba.njit
def _unrelated(x):
    return x * 3.0


def test_a_specialised_copy_prunes_the_branches_its_constants_exclude():
    module = sys.modules[__name__]
    # Values equal to the module's, or a function that reads none of them: the original.
    assert specialise(_outer, module, {"CHOICES": (1, 2)}) is _outer
    assert specialise(_unrelated, module, {"CHOICES": (1,)}) is _unrelated
    only_one = specialise(_outer, module, {"CHOICES": (1,)})
    assert only_one is not _outer
    assert specialise(_outer, module, {"CHOICES": (1,)}) is only_one  # made once
    assert only_one(1, 5.0) == 12.0 and only_one(3, 5.0) == 10.0
    # The branch on 3 was pruned before typing: _heavy was never compiled.
    assert _heavy.signatures == []
    # The callee that reads the constant is a copy too; the module's functions are as they
    # were, and a third value has its own copy.
    assert only_one.py_func.__globals__["_pick"] is not _pick
    with_three = specialise(_outer, module, {"CHOICES": (1, 3)})
    assert with_three(3, 5.0) == 30.0 and len(_heavy.signatures) == 1
    assert _outer(3, 5.0) == 10.0 and _outer(1, 5.0) == 12.0


# A second module that shares the constant (as a rules module imports the stages').
_OTHER = types.ModuleType("_jit_other")
exec(
    "import numba\nCHOICES = (1, 2)\n"
    "@numba.njit\ndef reads(k, x):\n    return x + 100.0 if 3 in CHOICES and k == 3 else x\n",
    vars(_OTHER),
)
_other_reads = _OTHER.reads


@numba.njit
def _both(k, x):
    return _pick(k, x) + _other_reads(k, x)


def test_a_specialised_copy_sees_the_constants_of_each_module_it_is_given():
    module = sys.modules[__name__]
    assert _both(3, 5.0) == 10.0
    # Only this module's constant: the other module's function keeps its own.
    assert specialise(_both, module, {"CHOICES": (1, 3)})(3, 5.0) == 15.0 + 5.0
    both = specialise(_both, (module, _OTHER), {"CHOICES": (1, 3)})
    assert both(3, 5.0) == 15.0 + 105.0
    assert _both(3, 5.0) == 10.0 and _OTHER.CHOICES == (1, 2)


SPECIALISED_SCRIPT = """
import hashlib, json, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
import steer_env
assert steer_env.__file__.startswith(sys.argv[1]), steer_env.__file__
from steer_env.engine.batch import Batch, VehicleSpec
from steer_env.engine.strategy import Behavior, Strategy
from steer_env.rules.pursuit_evasion import World
world = World(dt=0.1, arena_size=25.0, capture_radius=0.5, time_limit=100,
              end_on_first_capture=False, shaping=False, shaping_scale=1.0, shaping_gamma=1.0,
              observed_teammates=0, observed_opponents=1, start_margin=0.5,
              min_start_distance=1.0)
results = []
for kind in sys.argv[2].split(","):
    strategy = Strategy([Behavior(kind, 1.0)])
    batch = Batch([VehicleSpec("pursuer", strategy, 1, 3, 2, 0.3),
                   VehicleSpec("evader", strategy, 1, 3, 2, 0.3)], world, 4, specialise=True)
    batch.state.position[:] = np.linspace(-5.0, 5.0, 16).reshape(4, 2, 2)
    batch.state.velocity[:] = np.linspace(1.0, -1.0, 16).reshape(4, 2, 2)
    force = batch.scripted_forces()
    stats = batch._entry("forces_of").stats
    results.append({"force": hashlib.sha256(force.tobytes()).hexdigest(),
                    "hits": sum(stats.cache_hits.values()),
                    "misses": sum(stats.cache_misses.values())})
print(json.dumps(results if len(results) > 1 else results[0]))
"""


def _specialised(root: Path, cache: Path, kind: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env["NUMBA_CACHE_DIR"] = str(cache)
    out = subprocess.run(
        [sys.executable, "-c", SPECIALISED_SCRIPT, str(root), kind],
        env=env, cwd=root, capture_output=True, text=True, timeout=600, check=True,
    )  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_each_specialisation_has_its_own_cache_that_an_engine_edit_invalidates(tmp_path):
    """A batch's stages compiled for its strategies (Batch(..., specialise=True)) are cached
    per set of behaviours, beside the general stages, and stamped like them: an edit of the
    engine file they are compiled from recompiles them, even one that keeps its size and
    mtime."""
    src = Path(steer_env.__file__).parent
    root = tmp_path / "pkg"
    shutil.copytree(src, root / "steer_env", ignore=shutil.ignore_patterns("__pycache__"))
    cache = tmp_path / "numba_cache"

    seek = _specialised(root, cache, "seek")
    assert (seek["hits"], seek["misses"]) == (0, 1)
    assert _specialised(root, cache, "seek") == {**seek, "hits": 1, "misses": 0}
    flee = _specialised(root, cache, "flee")  # its own machine code, not seek's
    assert (flee["hits"], flee["misses"]) == (0, 1) and flee["force"] != seek["force"]
    assert _specialised(root, cache, "seek") == {**seek, "hits": 1, "misses": 0}
    tagged = sorted(p.name for p in cache.rglob("step.forces_of__*.nbi"))
    assert len(tagged) == 2 and all(name.count("-") == 1 for name in tagged), tagged

    # Swap seek's target coordinates in the engine: same size, same mtime, new forces.
    step_py = root / "steer_env" / "engine" / "step.py"
    text = step_py.read_text()
    old = "return cb.seek(px, py, vx, vy, tx, ty, ms)"
    assert text.count(old) == 1
    st = step_py.stat()
    step_py.write_text(text.replace(old, "return cb.seek(px, py, vx, vy, ty, tx, ms)"))
    os.utime(step_py, ns=(st.st_atime_ns, st.st_mtime_ns))
    edited = _specialised(root, cache, "seek")
    assert (edited["hits"], edited["misses"]) == (0, 1) and edited["force"] != seek["force"]


def test_specialisations_cached_by_different_processes_run_their_own_code_together(tmp_path):
    """Two specialisations compiled and cached by two processes, then loaded together by a
    third, each run their own machine code: numba links a call by the callee's symbol
    name, so copies of one function must never share a name (each process numbers its
    compiled functions from the same start, so without the tag in their names the second
    copy loaded would call the first one's code)."""
    cache = tmp_path / "numba_cache"
    root = Path(steer_env.__file__).parent.parent
    seek = _specialised(root, cache, "seek")
    flee = _specialised(root, cache, "flee")
    assert seek["misses"] == flee["misses"] == 1 and seek["force"] != flee["force"]
    both = _specialised(root, cache, "seek,flee")
    assert [r["force"] for r in both] == [seek["force"], flee["force"]]
    assert [(r["hits"], r["misses"]) for r in both] == [(1, 0), (1, 0)]


# --------------------------------------------------------------------------- bound calls
Pair = collections.namedtuple("Pair", ["total", "step"])


@numba.njit(nogil=True)
def _accumulate(pair, scale, count):
    for i in range(pair.total.shape[0]):
        pair.total[i] += pair.step[i] * scale
    count[0] += 1


def test_a_bound_call_runs_on_its_arrays_and_keeps_them_alive_until_it_goes():
    """bind(f, args)() is f(*args) on the same arrays (changes in place either way are
    seen), holds them while it exists and lets them go with it."""
    total, step, count = np.zeros(3), np.array([1.0, 2.0, 3.0]), np.zeros(1, dtype=np.int64)
    bound = bind(_accumulate, (Pair(total, step), 2.0, count))
    assert count[0] == 0  # binding does not call
    bound()
    bound()
    np.testing.assert_array_equal(total, [4.0, 8.0, 12.0])
    step[:] = -1.0
    total[0] = 100.0
    bound()
    np.testing.assert_array_equal(total, [98.0, 6.0, 10.0])
    assert count[0] == 3

    alive = weakref.ref(total)
    del total, step
    gc.collect()
    assert alive() is not None  # the bound call holds it
    bound()
    np.testing.assert_array_equal(alive(), [96.0, 4.0, 8.0])
    del bound
    gc.collect()
    assert alive() is None


def test_a_bound_call_is_cached_apart_and_stamped_by_the_function_it_calls():
    """A bound call's machine code contains the function it calls: its cache must go stale
    when that function's sources change (a task's rules, say), not only its own file's.
    Its compiled parts are the function's own, so no other caller's argument types are in
    their caches' indexes (an index that named a type of a module another process cannot
    import would fail every later load); a function outside the package is not cached."""
    from steer_env.engine import step as engine_step
    from steer_env.rules.pursuit_evasion import compiled as rules_step

    def stamp_of(function):
        py = function.py_func
        return SteerCacheLocator.from_function(py, py.__code__.co_filename).get_source_stamp()

    hold, run = bound_functions(rules_step.step)
    assert stamp_of(hold) == stamp_of(run) == stamp_of(rules_step.step)
    assert stamp_of(run) != stamp_of(engine_step.forces_of)
    assert bound_functions(rules_step.step) == (hold, run)
    other_hold, other_run = bound_functions(engine_step.forces_of)
    assert stamp_of(other_run) == stamp_of(engine_step.forces_of) != stamp_of(run)
    assert other_hold.py_func.__qualname__ != hold.py_func.__qualname__
    assert other_run.py_func.__qualname__ != run.py_func.__qualname__
    assert all(isinstance(f._cache, NullCache) for f in bound_functions(_accumulate))
    assert not any(isinstance(f._cache, NullCache) for f in (hold, run))
