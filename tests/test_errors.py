from __future__ import annotations

from toolrun.errors import ExitCode, Location, PlanError, Problem


def test_exit_codes_match_the_design() -> None:
    # design §: 0-5 and 130; 129 is SIGHUP's interrupt (issue 27 allows it, README table);
    # 6: a hook stopped the run (continue: false, issue 30)
    assert [int(c) for c in ExitCode] == [0, 1, 2, 3, 4, 5, 6, 129, 130]


def test_a_hook_stop_is_below_an_interrupt_and_above_a_denial() -> None:
    assert ExitCode.combine([ExitCode.HOOK_STOPPED, ExitCode.DENIED]) is ExitCode.HOOK_STOPPED
    assert ExitCode.combine([ExitCode.HOOK_STOPPED, ExitCode.FAILED]) is ExitCode.HOOK_STOPPED
    assert ExitCode.combine([ExitCode.HOOK_STOPPED, ExitCode.INTERRUPTED]) is (
        ExitCode.INTERRUPTED
    )


def test_a_hangup_is_an_interrupt_that_wins_over_the_rest() -> None:
    assert ExitCode.combine([ExitCode.INTERRUPTED, ExitCode.HANGUP]) is ExitCode.HANGUP
    assert ExitCode.combine([ExitCode.DENIED, ExitCode.HANGUP]) is ExitCode.HANGUP


def test_combine_prefers_interrupt_then_deny_then_ask_then_failure() -> None:
    assert ExitCode.combine([ExitCode.FAILED, ExitCode.ASK]) is ExitCode.ASK
    assert ExitCode.combine([ExitCode.ASK, ExitCode.DENIED, ExitCode.FAILED]) is ExitCode.DENIED
    assert ExitCode.combine([ExitCode.DENIED, ExitCode.INTERRUPTED]) is ExitCode.INTERRUPTED
    assert ExitCode.combine([ExitCode.OK, ExitCode.FAILED]) is ExitCode.FAILED
    assert ExitCode.combine([]) is ExitCode.OK


def test_a_problem_reads_file_line_col_path_message() -> None:
    problem = Problem(Location("p.yaml", 4, 9), "calls[1].tool", "unknown tool 'Reed'")
    assert str(problem) == "p.yaml:4:9: calls[1].tool: unknown tool 'Reed'"
    assert str(Problem(None, "", "x.yaml: no such file")) == "x.yaml: no such file"


def test_plan_error_lists_every_problem_and_exits_3() -> None:
    error = PlanError([Problem(None, "a", "one"), Problem(None, "b", "two")])
    assert str(error) == "a: one\nb: two"
    assert error.exit_code is ExitCode.INVALID
