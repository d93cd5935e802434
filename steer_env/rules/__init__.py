"""Task rules: what makes a task a task, one package per kind of task.

The compiled engine (:mod:`steer_env.engine`) moves vehicles and runs their scripted
strategies; it knows nothing of captures, pens or rewards. A *rules* package says the rest,
in stages the engine's step calls in order after the motion:

1. **start**: where the vehicles of a new episode are placed (``reset_env``);
2. **rules**: who leaves the game, the reward of each learned agent as named terms, and
   when the episode ends (``settle``);
3. **observation**: what each learned agent sees, written from the package's
   :class:`~steer_env.engine.features.FeatureTable` (``observe_rows``).

A rules package is two modules:

* ``<rules>/__init__.py``, plain Python (importing it needs no compiler): the team names,
  the :class:`World` dataclass of the rules' parameters with the record it becomes
  (``WORLD``), the result records (``AGENT_RESULT`` per learned agent, ``ENV_RESULT`` per
  environment), the reward terms, the feature table;
* ``<rules>/compiled.py`` (imported by ``load_compiled()`` on first use): the compiled
  stages and the entry points a :class:`~steer_env.engine.batch.Batch` calls (``reset``,
  ``observe``, ``step``, ``decode_observations``), each built from the engine's shared
  stages (:func:`steer_env.engine.step.scripted_forces`, :func:`~steer_env.engine.step.move`)
  and the package's own.

Each rules package compiles on its own when a batch of its task first steps, so a task that
is not played costs neither compile time nor run time, and its compiled cache is stamped by
the core, the engine and its own sources only (:mod:`steer_env.core.jit`).

A task's world object (``task.world(config)``) names its rules (``world.rules``): that is
how a batch finds them.
"""
