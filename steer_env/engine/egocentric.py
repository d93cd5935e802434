"""The egocentric observation every task's learned agents share: the agent itself (its
velocity, the walls, the elapsed time), then slots for the nearest vehicles of its own team
and of the others, nearest first; and, last in every task's table, slots for the nearest
obstacles (:data:`OBSTACLES`).

These are the feature groups a rules package puts at the head of its
:class:`~steer_env.engine.features.FeatureTable` (naming the slot groups as it likes: the
pursuit rules' ``teammate`` / ``opponent``, the herding rules' ``dog`` / ``sheep``), and
the positions the engine's writer
(:func:`steer_env.engine.step.observe_egocentric`) and the decoders read as constants. The
slot counts are the world record's ``observed_teammates`` and ``observed_opponents``.

Pure Python: importing it needs no compiler.
"""

from __future__ import annotations

from steer_env.engine.features import Feature, FeatureGroup

#: The agent itself: its velocity, the offsets to the nearest point of each wall (all in
#: its frame) and the elapsed time.
SELF = FeatureGroup(
    "self",
    (
        Feature("velocity_forward", "own velocity, forward / max speed"),
        Feature("velocity_side", "own velocity, side / max speed"),
        Feature("west_wall_forward", "west wall offset, forward / arena_size"),
        Feature("west_wall_side", "west wall offset, side / arena_size"),
        Feature("east_wall_forward", "east wall offset, forward / arena_size"),
        Feature("east_wall_side", "east wall offset, side / arena_size"),
        Feature("south_wall_forward", "south wall offset, forward / arena_size"),
        Feature("south_wall_side", "south wall offset, side / arena_size"),
        Feature("north_wall_forward", "north wall offset, forward / arena_size"),
        Feature("north_wall_side", "north wall offset, side / arena_size"),
        Feature("time", "elapsed time: 2 * step / time_limit - 1"),
    ),
    rows=(
        (2, "own velocity (forward, side) / max speed"),
        (2, "offset to the nearest point of the west wall / arena_size"),
        (2, "... east wall"),
        (2, "... south wall"),
        (2, "... north wall"),
        (1, "elapsed time: 2 * step / time_limit - 1"),
    ),
)

#: One observed vehicle's slot.
OTHER = (
    Feature("position_forward", "relative position, forward / arena diagonal"),
    Feature("position_side", "relative position, side / arena diagonal"),
    Feature("velocity_forward", "relative velocity, forward / (sum of max speeds)"),
    Feature("velocity_side", "relative velocity, side / (sum of max speeds)"),
    Feature("present", "1 if the slot holds a vehicle, 0 if it is padding", 0.0, 1.0),
)


def other_rows(who: str, article: str) -> tuple[tuple[int, str], ...]:
    """The docstring rows of a slot group of ``who`` (``"opponent"``, ``"an"``)."""
    return (
        (2, f"{who} k position relative to the agent / arena diagonal"),
        (2, f"{who} k velocity relative to the agent / (sum of max speeds)"),
        (1, f"1 if slot k holds {article} {who}, 0 if it is padding"),
    )


#: One observed obstacle's slot (the obstacles nearest to the agent's body first).
OBSTACLE = (
    Feature("offset_forward", "offset to the obstacle's nearest point, forward / arena diagonal"),
    Feature("offset_side", "offset to the obstacle's nearest point, side / arena diagonal"),
    Feature("radius", "obstacle radius / arena_size", 0.0, 1.0),
    Feature("present", "1 if the slot holds an obstacle, 0 if it is padding", 0.0, 1.0),
)

#: The ``observed_obstacles`` obstacles whose surface is nearest to the agent, nearest
#: first, empty slots all zero: the last group of every task's feature table (so a world
#: without obstacles observes what it did before obstacles existed).
OBSTACLES = FeatureGroup(
    "obstacle",
    OBSTACLE,
    "observed_obstacles",
    (
        (2, "offset to obstacle k's nearest edge point / arena diagonal"),
        (1, "obstacle k's radius / arena_size"),
        (1, "1 if slot k holds an obstacle, 0 if it is padding"),
    ),
)


def _slot_index(name: str) -> int:
    return [f.name for f in OTHER].index(name)


# Positions the compiled writer and decoders use (constants there).
SELF_WIDTH = SELF.width
OTHER_WIDTH = len(OTHER)
VELOCITY_FORWARD = SELF.index("velocity_forward")
VELOCITY_SIDE = SELF.index("velocity_side")
WEST_WALL = SELF.index("west_wall_forward")
EAST_WALL = SELF.index("east_wall_forward")
SOUTH_WALL = SELF.index("south_wall_forward")
NORTH_WALL = SELF.index("north_wall_forward")
TIME = SELF.index("time")
OTHER_POSITION = _slot_index("position_forward")
OTHER_VELOCITY = _slot_index("velocity_forward")
OTHER_PRESENT = _slot_index("present")
OBSTACLE_WIDTH = OBSTACLES.width
OBSTACLE_OFFSET = OBSTACLES.index("offset_forward")
OBSTACLE_RADIUS = OBSTACLES.index("radius")
OBSTACLE_PRESENT = OBSTACLES.index("present")
for _wall in (WEST_WALL, EAST_WALL, SOUTH_WALL, NORTH_WALL):
    # The writer puts each wall's (forward, side) pair side by side.
    assert SELF.features[_wall + 1].name.endswith("_side")
