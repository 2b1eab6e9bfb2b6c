"""`finesse budget` through the `finesse` group: output, exit codes, the config file."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from finesse.cli.finesse import cli
from tests.unit.authoring.test_budget import seed_disclaimer

# ---- the command, through the `finesse` group ----



def run(runner: CliRunner, args: list[str]) -> Result:
    return runner.invoke(cli, args, prog_name="finesse")


@pytest.fixture
def project(git_repo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (git_repo / "src").mkdir()
    (git_repo / "src" / "a.py").write_text("line\n" * 120)
    (git_repo / "src" / "b.py").write_text("line\n" * 380)
    monkeypatch.chdir(git_repo)
    return git_repo


def test_cli_json_whole_object(runner: CliRunner, project: Path) -> None:
    # implementation: 120 + 380 = 500 lines -> 5,000 tokens x 2.0 = 10,000
    # exploration: large -> 50,000 x 1.5 = 75,000
    # peak = 5,000 + 2 x 5,000 + 85,000 + 20,000 = 120,000 -> 60.0 % -> high
    # 12 iterations, high -> "$20-50"
    result = run(runner, ["budget", "--phase", "implementation:src/a.py,src/b.py",
                          "--phase", "exploration:large", "--iterations", "12",
                          "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {
        "peak_tokens": 120_000,
        "peak_percent": 60.0,
        "pressure": "high",
        "action": "recommend decomposition",
        "cost_range": "$20-50",
        "iterations": 12,
        "context_window": 200_000,
        "lines_read": 5_500,
        "size": "medium",
        "breakdown": {"base": 5_000, "phases": 10_000, "files": 85_000, "reasoning": 20_000},
        "phases": [
            {"type": "implementation", "weight": 2.0, "lines": 500, "file_tokens": 5_000,
             "weighted_tokens": 10_000, "files": [
                 {"source": "src/a.py", "counted": True, "lines": 120},
                 {"source": "src/b.py", "counted": True, "lines": 380}]},
            {"type": "exploration", "weight": 1.5, "lines": 5_000, "file_tokens": 50_000,
             "weighted_tokens": 75_000, "files": [
                 {"source": "large", "counted": False, "lines": 5_000}]},
        ],
        "disclaimer": seed_disclaimer("200k"),
    }


def test_cli_text_output(runner: CliRunner, project: Path) -> None:
    # verification:src/a.py: 120 lines -> 1,200 x 0.5 = 600
    # peak = 5,000 + 5,000 + 600 + 20,000 = 30,600 -> 15.3 % -> low; 3 iterations -> "under $5"
    result = run(runner, ["budget", "--phase", "verification:src/a.py",
                          "--iterations", "3"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "Peak context: 30,600 tokens, 15.3% of the window (low pressure): proceed as planned.",
        "Cost for 3 iterations: under $5.",
        "  prompt base      5,000",
        "  phases           5,000  (1 x 5,000)",
        "  files              600  (120 lines, small)",
        "  reasoning       20,000",
        "    verification (x0.5): 120 lines -> 600 tokens",
        seed_disclaimer("200k"),
    ]


def _peak_and_window(output: str) -> tuple[int, float, int, str]:
    data = json.loads(output)
    return data["peak_tokens"], data["peak_percent"], data["context_window"], data["pressure"]


def test_cli_window_from_config_file(runner: CliRunner, project: Path) -> None:
    # verification:small -> 31,000 tokens; the config's 100,000 window makes it 31 % -> moderate
    (project / ".finesse").mkdir()
    (project / ".finesse" / "config.json").write_text('{"context_window": 100000}')
    args = ["budget", "--phase", "verification:small", "--iterations", "6", "--json"]
    result = run(runner, args)
    assert result.exit_code == 0, result.output
    assert _peak_and_window(result.stdout) == (31_000, 31.0, 100_000, "moderate")
    assert json.loads(result.stdout)["disclaimer"] == seed_disclaimer("100k")
    # --window wins over the config: 31,000 / 1,000,000 = 3.1 % -> low
    result = run(runner, [*args, "--window", "1000000"])
    assert _peak_and_window(result.stdout) == (31_000, 3.1, 1_000_000, "low")


def test_cli_config_found_from_a_subdirectory(runner: CliRunner, project: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    (project / ".finesse").mkdir()
    (project / ".finesse" / "config.json").write_text('{"context_window": 62000}')
    monkeypatch.chdir(project / "src")
    # implementation:a.py -> 120 lines x 10 x 2.0 = 2,400; 5,000 + 5,000 + 2,400 + 20,000
    # = 32,400 / 62,000 = 52.3 % -> moderate
    result = run(runner, ["budget", "--phase", "implementation:a.py",
                          "--iterations", "6", "--json"])
    assert _peak_and_window(result.stdout) == (32_400, 52.3, 62_000, "moderate")


def test_cli_spec_file(runner: CliRunner, project: Path) -> None:
    # same plan as test_cli_json_whole_object, with a 150,000 window from the spec:
    # 120,000 / 150,000 = 80.0 % -> high
    (project / ".finesse").mkdir()
    (project / ".finesse" / "config.json").write_text('{"context_window": 100000}')
    (project / "plan.json").write_text(json.dumps({
        "phases": [{"type": "implementation", "files": ["src/a.py", "src/b.py"]},
                   {"type": "exploration", "files": ["large"]}],
        "iterations": 12, "context_window": 150_000,
    }))
    result = run(runner, ["budget", "--spec", "plan.json", "--json"])
    assert result.exit_code == 0, result.output
    assert _peak_and_window(result.stdout) == (120_000, 80.0, 150_000, "high")
    # --iterations and --window on the command line win over the spec
    result = run(runner, ["budget", "--spec", "plan.json", "--iterations", "22",
                          "--window", "200000", "--json"])
    data = json.loads(result.stdout)
    assert (data["iterations"], data["context_window"], data["cost_range"]) == (
        22, 200_000, "$50-100+")


@pytest.mark.parametrize(("args", "message"), [
    (["--phase", "implementatoin:src/a.py", "--iterations", "5"],
     "finesse budget: unknown phase type 'implementatoin': use implementation, verification "
     "or exploration; type --phase \"implementation:src/a.py,src/b.py\" or "
     "--phase \"exploration:large\""),
    (["--phase", "implementation:src/missing.py", "--iterations", "5"],
     "finesse budget: no file src/missing.py; give a file that exists, or small / medium / "
     "large for one not read yet"),
    (["--phase", "implementation:src", "--iterations", "5"],
     "finesse budget: src is a directory: name its files instead, or give a file that exists, "
     "or small / medium / large for one not read yet"),
    (["--phase", "exploration:large"],
     "finesse budget: give --iterations N, the loop's iteration cap: finesse budget --phase "
     "\"implementation:src/a.py\" --iterations 12"),
    (["--iterations", "5"],
     "finesse budget: give the plan's phases, e.g. finesse budget --phase "
     "\"implementation:src/a.py\" --iterations 12, or --spec FILE.json"),
    (["--phase", "exploration:large", "--iterations", "twelve"],
     "finesse budget: --iterations takes a whole number of 1 or more, like --iterations 12; "
     "not 'twelve'"),
    (["--phase", "exploration:large", "--iterations", "0"],
     "finesse budget: --iterations takes a whole number of 1 or more, like --iterations 12; "
     "not '0'"),
    (["--phase", "exploration:large", "--iterations", "5", "--window", "-1"],
     "finesse budget: --window takes a whole number of 1 or more, like --window 200000; not '-1'"),
    (["--spec", "plan.json", "--phase", "exploration:large"],
     "finesse budget: give --spec FILE or --phase options, not both"),
    (["--spec", "nope.json"],
     "finesse budget: the spec nope.json: no such file; give a JSON file with phases and "
     "iterations"),
])
def test_cli_bad_input_is_one_line_and_exit_2(runner: CliRunner, project: Path,
                                              args: list[str], message: str) -> None:
    result = run(runner, ["budget", *args])
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", message + "\n")


def test_cli_bad_config_is_reported_not_replaced(runner: CliRunner, project: Path) -> None:
    config = project / ".finesse" / "config.json"
    config.parent.mkdir()
    config.write_text('{"context_window": "big"}')
    result = run(runner, ["budget", "--phase", "exploration", "--iterations", "3"])
    assert result.exit_code == 1
    assert result.stderr == (
        f"finesse budget: {config} is invalid (context_window: Input should be a valid "
        "integer, unable to parse string as an integer); fix it, or delete it to use the "
        "defaults\n"
    )
    assert config.read_text() == '{"context_window": "big"}'
