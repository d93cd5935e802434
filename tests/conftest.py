"""Test-wide settings: headless pygame and matplotlib, before anything imports them."""

import os
import tempfile

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
# SB3 gives every learn() without a logger a folder of its own (tempdir/SB3-<time>); the
# tests' all go to one folder, removed when the session ends (subprocesses inherit it).
_SB3_LOGS = tempfile.TemporaryDirectory(prefix="steer-env-tests-sb3-")
os.environ.setdefault("SB3_LOGDIR", _SB3_LOGS.name)


# The slow tests, which `python -m pytest` leaves out (pyproject's addopts) and
# `python -m pytest -m slow` runs (.ci/run runs both).
# Whole modules first, then single tests by the start of their node id (file::name).
SLOW_MODULES = {
    "test_benchmarks.py",
    "test_benchmarks_torchrl.py",
    "test_benchmarl.py",
    "test_cli.py",
    "test_compare.py",
    "test_config_cli.py",
    "test_jit_cache.py",
    "test_render_cli.py",
    "test_rllib.py",
    "test_rllib_cli.py",
    "test_rllib_runner.py",
    "test_rllib_team.py",
    "test_rllib_training_benchmark.py",
    "test_team_cli.py",
    "test_torchrl.py",
    "test_train.py",
}
TRAINING_MODULES = {
    "test_benchmarl.py",
    "test_config_cli.py",
    "test_rllib.py",
    "test_rllib_runner.py",
    "test_rllib_team.py",
    "test_rllib_training_benchmark.py",
    "test_team_cli.py",
    "test_train.py",
}
SLOW_TESTS: tuple[str, ...] = (
    # about a second or more each on 2 cores (hypothesis searches, first compiles, frames)
    "test_agents.py::test_classic_pursuer_calibrated_rate",
    "test_arrays.py::test_integrate_entry_declines_read_only_outputs",
    "test_arrays.py::test_integrate_entry_matches_the_general_path",
    "test_arrays.py::test_integrate_in_place_shortcut_is_bit_identical",
    "test_arrays.py::test_rows_fast_path_matches_the_general_path",
    "test_arrays.py::test_seek_entry_matches_the_general_path",
    "test_arrays.py::test_seek_is_the_same_for_every_layout_and_for_lists",
    "test_behaviors.py::test_arrive_stops_on_the_target_without_overshoot_when_feasible",
    "test_behaviors.py::test_arrive_with_max_deceleration_handles_a_weak_max_force",
    "test_behaviors.py::test_flee_increases_the_distance_every_step",
    "test_behaviors.py::test_follow_path_loops_around_a_closed_path",
    "test_behaviors.py::test_hide_puts_an_obstacle_between_hunter_and_vehicle",
    "test_behaviors.py::test_obstacle_avoidance_gets_around_an_obstacle_without_touching_it",
    "test_behaviors.py::test_offset_pursuit_keeps_station_behind_a_moving_leader",
    "test_behaviors.py::test_unaligned_collision_avoidance_prevents_a_crossing_collision",
    "test_behaviors.py::test_wall_avoidance_keeps_vehicles_in_the_box",
    "test_core.py::test_integrate_stays_finite_and_within_max_speed",
    "test_core.py::test_length_matches_hypot_within_2_ulp_over_every_finite_input",
    "test_core.py::test_vortex_field_is_finite_at_the_centre",
    "test_core_oracle.py::test_behaviors_match_oracle",
    "test_core_oracle.py::test_vecmath_matches_oracle",
    "test_deprecated.py::test_old_gallery_module_warns_and_runs",
    "test_edges.py::test_any_accepted_configuration_and_action_simulates_cleanly",
    "test_edges.py::test_gymnasium_vector_wrappers",
    "test_edges.py::test_single_env_wrappers",
    "test_edges.py::test_vector_env_and_sb3_adapter_simulate_cleanly",
    "test_engine.py::test_a_batch_compiled_for_its_strategies_matches_the_general_stages",
    "test_engine.py::test_every_caller_of_the_strategy_stage_shares_one_compiled_version",
    "test_envs.py::test_make_with_module_prefix_in_fresh_process",
    "test_envs.py::test_rgb_array_frames_shape_not_blank_and_deterministic",
    "test_gallery.py::test_cli_creates_missing_output_folders",
    "test_grid.py::test_contacts_are_those_of_every_pair",
    "test_grid.py::test_the_observed_slots_are_the_nearest_in_the_game_ties_to_the_lower_index",
    "test_gallery.py::test_cli_user_mistakes_give_one_line_errors",
    "test_gallery.py::test_cli_writes_a_decodable_gif",
    "test_packaging.py::test_benchmark_help_names_each_option_by_its_own_name",
    "test_render_live.py::test_watched_episodes_of_a_random_scripted_agent_are_the_rendered_ones",
    "test_physics.py::test_vehicles_step_matches_integrate_and_broadcasts_a_single_force",
    "test_stats.py::test_paired_success_interval_keeps_its_coverage_at_n10",
    "test_stats.py::test_paired_t_interval_on_binary_data_undercovers_at_n10",
    "test_team_pursuit.py::test_scripted_teams_meet_the_calibration_targets",
    "test_team_pursuit.py::test_team_calibration_command",
    "test_training_run.py::test_iteration_log_line_and_finite_scalars",
    "test_vecmath.py::test_length_is_exact_and_finite",
    "test_vecmath.py::test_normalize_is_unit_or_zero",
    "test_vecmath.py::test_set_magnitude_is_finite_with_the_requested_length",
    "test_vecmath.py::test_truncate_is_finite_and_within_the_limit",
    "test_vecmath.py::test_truncate_keeps_short_vectors_and_direction",
    "test_vector_env.py::test_sb3_ppo_trains_on_the_adapter",
    "test_league.py::test_a_short_league_grows_the_pools_and_keeps_the_matrix_up_to_date",
    "test_league.py::test_the_evaders_final_response_without_warm_start",
    "test_league.py::test_init_model_starts_a_new_run_from_that_network",
    "test_warmup.py::test_warmup_fills_an_empty_cache_that_later_processes_use",
    "test_training_benchmark.py::test_search_scores_every_candidate_for_every_seed",
    "test_training_benchmark.py::test_time_to_threshold_trains_both_adapters_and_writes_the_curves",
    "test_cross_play_task.py::test_train_py_trains_a_role_of_the_task_named_by_env",
    "test_vector_infos.py::test_gymnasium_vector_infos_equal_the_single_envs",
    "test_vector_infos.py::test_pettingzoo_vector_infos_equal_the_parallel_envs",
)


def pytest_ignore_collect(collection_path, config):
    """Under ``-m "not slow"`` (the default) the slow modules are not even imported (torch,
    Ray, ...)."""
    if config.getoption("markexpr", "").replace(" ", "") == "notslow":
        return collection_path.name in SLOW_MODULES or None
    return None


def pytest_collection_modifyitems(config, items):
    import pytest

    for item in items:
        name = item.path.name
        node = f"{name}::{item.name}"
        if name in SLOW_MODULES or node.startswith(SLOW_TESTS):
            item.add_marker(pytest.mark.slow)
        if name in TRAINING_MODULES:
            item.add_marker(pytest.mark.training)
        if name.startswith("test_rllib"):
            item.add_marker(pytest.mark.rllib)
