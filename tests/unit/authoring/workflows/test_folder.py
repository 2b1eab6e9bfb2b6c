"""A decomposed plan's folder on disk, checked as a whole, and loaded for a runner."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from finesse.authoring.workflows.folder import (
    FolderReport,
    load_execution_graph,
    validate_workflow_folder,
)
from finesse.authoring.workflows.model import GraphError
from finesse.errors import UsageError
from tests.unit.authoring.workflows.plans import PLAN_DIR, write_folder


def errors(folder: Path) -> list[str]:
    return validate_workflow_folder(folder).errors


def test_the_folder_finesse_new_writes_passes(tmp_path: Path) -> None:
    folder = write_folder(tmp_path)
    report = validate_workflow_folder(folder)
    assert isinstance(report, FolderReport)
    assert (report.errors, [(w.name, w.wave, w.prompt, w.report.passed)
                            for w in report.workflows]) == ([], [
        ("auth-endpoints", 1, "wave-1/auth-endpoints/prompt.md", True),
        ("todo-store", 1, "wave-1/todo-store/prompt.md", True),
        ("todo-routes", 2, "wave-2/todo-routes/prompt.md", True)])


def test_load_execution_graph_gives_each_loop_its_files_and_cap(tmp_path: Path) -> None:
    folder = write_folder(tmp_path)
    loaded = load_execution_graph(folder)
    assert loaded.task == ("Build a todo API with JWT auth, a store for todos, and the HTTP "
                           "routes on top.")
    assert [[(w.name, w.max_iterations, w.depends_on) for w in wave] for wave in loaded.waves] \
        == [[("auth-endpoints", 8, ()), ("todo-store", 6, ())],
            [("todo-routes", 8, ("auth-endpoints", "todo-store"))]]
    routes = loaded.waves[1][0]
    assert (routes.prompt, routes.promise, routes.plan) == (
        folder / "wave-2/todo-routes/prompt.md", folder / "wave-2/todo-routes/promise.txt",
        folder / "wave-2/todo-routes/plan.md")
    assert routes.command == (
        f"/finesse:finesse-execute --prompt-file {PLAN_DIR}/wave-2/todo-routes/prompt.md "
        f"--completion-promise-file {PLAN_DIR}/wave-2/todo-routes/promise.txt "
        "--max-iterations 8")


def test_load_execution_graph_refuses_a_folder_with_problems(tmp_path: Path) -> None:
    folder = write_folder(tmp_path)
    (folder / "wave-1" / "todo-store" / "plan.md").unlink()
    with pytest.raises(GraphError, match=r"wave-1/todo-store/ has no plan\.md"):
        load_execution_graph(folder)


def test_a_folder_with_many_problems_is_refused_in_a_short_line(tmp_path: Path) -> None:
    """`ralph run --graph` and `ralph ci` print the refusal as one line: a hand-made folder
    with hundreds of sub-workflows not in the graph made one of 80 KB. The first few are
    named, and `finesse validate` (one line each) lists them all."""
    folder = write_folder(tmp_path)
    for number in range(40):
        shutil.copytree(folder / "wave-1" / "todo-store", folder / "wave-1" / f"extra-{number}")
    problems = errors(folder)
    assert len(problems) == 40
    with pytest.raises(GraphError) as refused:
        load_execution_graph(folder)
    assert str(refused.value) == (
        f"{folder}: " + "; ".join(problems[:3]) + f"; and 37 more: `finesse validate "
        f"{folder}` lists them all")


def test_flat_files_beside_the_nested_layout_are_never_mixed(tmp_path: Path) -> None:
    folder = write_folder(tmp_path)
    (folder / "extra.md").write_text("You are iterating on x.\n")
    (folder / "extra-promise.txt").write_text("DONE\n")
    assert errors(folder) == [
        "holds flat-format plan files (extra-promise.txt, extra.md) beside the nested layout: "
        "the two are never mixed; keep wave-N/<task>/ here and put a single plan's files in "
        "finesse-plans/ itself"]


def test_the_graph_and_the_disk_must_list_the_same_sub_workflows(tmp_path: Path) -> None:
    folder = write_folder(tmp_path)
    shutil.move(folder / "wave-1" / "todo-store", folder / "wave-2" / "todo-store")
    shutil.copytree(folder / "wave-1" / "auth-endpoints", folder / "wave-1" / "stray")
    shutil.rmtree(folder / "wave-2" / "todo-routes")
    assert errors(folder) == [
        "`todo-store` is in wave 1 of execution-graph.md, but its folder is "
        "wave-2/todo-store/",
        "`todo-routes` is in wave 2 of execution-graph.md, but there is no wave-2/todo-routes/",
        "wave-1/stray/prompt.md is not in execution-graph.md: add it to a wave or remove it"]


def test_a_sub_workflow_that_fails_an_attribute_or_is_not_prompt_only_is_named(
        tmp_path: Path) -> None:
    folder = write_folder(tmp_path)
    prompt = folder / "wave-1" / "todo-store" / "prompt.md"
    # Every guardrail turned into leave to do what it forbade ("Please do not" used to serve
    # here, but it is a guardrail too).
    prompt.write_text(prompt.read_text().replace("Do NOT", "It is fine to"))
    routes = folder / "wave-2" / "todo-routes" / "prompt.md"
    routes.write_text("# Plan: todo routes\n\n" + routes.read_text())
    assert errors(folder) == [
        "wave-1/todo-store/prompt.md: fails 1 of 10 attributes: guardrails",
        "wave-2/todo-routes/prompt.md: not prompt-only: the file starts with a heading: start "
        "the file with the cold-start paragraph (\"You are iterating on ...\"); metadata "
        "belongs in <name>-plan.md"]


def test_a_folder_moved_away_from_its_commands_is_named(tmp_path: Path) -> None:
    folder = write_folder(tmp_path)
    moved = tmp_path / "elsewhere"
    shutil.move(folder, moved)
    assert errors(moved) == [
        f"execution-graph.md: its commands name the plan folder {PLAN_DIR}, but this folder "
        f"is {moved}: they would not find the prompts"]


def test_a_missing_or_unreadable_graph_is_an_error_not_a_crash(tmp_path: Path) -> None:
    folder = write_folder(tmp_path)
    graph = folder / "execution-graph.md"
    graph.write_bytes(b"\xff\xfe not text")
    assert errors(folder)[0] == (
        f"execution graph {graph}: not UTF-8 text; save it as UTF-8")
    graph.unlink()
    os.mkfifo(graph)  # a FIFO is refused before anything blocks on it
    assert errors(folder)[0] == (
        f"execution graph {graph}: not a regular file (a FIFO, device or socket); give a "
        "plain file")
    graph.unlink()
    assert errors(folder)[0] == (
        "no execution-graph.md: write it with the overview, the wave tables, the dependency "
        "rationale and the commands")


def test_a_file_name_that_is_not_utf8_is_shown_quoted(tmp_path: Path) -> None:
    folder = write_folder(tmp_path)
    odd = os.fsdecode(b"task-\xff")
    (folder / "wave-1" / odd).mkdir()
    report = validate_workflow_folder(folder)
    assert report.errors[:3] == [
        "'wave-1/task-\\udcff'/ has no prompt.md", "'wave-1/task-\\udcff'/ has no promise.txt",
        "'wave-1/task-\\udcff'/ has no plan.md"]


def test_a_directory_that_is_no_plan_folder_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"no execution-graph\.md and no wave-N/ folders; "
                                         r"give a prompt file or a decomposed plan's folder"):
        validate_workflow_folder(tmp_path)
    with pytest.raises(UsageError, match="not a directory"):
        validate_workflow_folder(tmp_path / "notes.md")
