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

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import steer_env

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
