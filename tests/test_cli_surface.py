"""The CLI a person meets: output paths, short flags, usage lines, --version, narrow output.

All in-process (CliRunner): each check is about argument handling, not about analysis, so no
interpreter is started per case.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from roofcast.cli.main import analyze_app, app

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "data" / "analyzer" / "cli"
EVAL = REPO / "tests" / "data" / "eval"
#: Letters kept for the preprocessor options beside -D (another change adds them).
RESERVED = {"-D": "--define", "-U": "--undefine", "-I": "--include-dir"}


def _commands(command, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], object]]:
    """Every leaf command of the tree with its path (`("llm", "run")`), groups included."""
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from _commands(sub, (*path, name))


def _options(command) -> Iterator[object]:
    return (p for p in command.params if p.param_type_name == "option")


def _one_line_exit_2(result, *needles: str) -> str:
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("roofcast: error: "), lines[0]
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


# --------------------------------------------------------------------------- output paths


def _writers(tmp: Path) -> dict[str, tuple[list[str], str]]:
    """verb -> (its arguments before the output option, the option that names the file).
    The inputs exist, so the only thing wrong in each run is the output path."""
    manifest = tmp / "rows.csv"
    manifest.write_text("target\n")
    fixtures, m, s = str(FIXTURES), str(manifest), str(tmp)
    return {
        "analyze": (["analyze", fixtures, "--format", "json"], "-o"),
        "analyze table": (["analyze", fixtures], "--output"),
        "matrix": (["matrix", fixtures, "-g", "a100", "-f", "csv"], "-o"),
        "plot": (["plot", fixtures, "-g", "a100"], "-o"),
        "profile": (["profile", "--import", m], "-o"),
        "evaluate": (["evaluate", "-m", m, "-s", s, "-g", "rtx3080"], "-o"),
        "train": (["train", "-m", m, "-s", s], "-o"),
        "llm run": (["llm", "run", "-m", m, "-s", s], "-o"),
        "llm run --store": (["llm", "run", "-m", m, "-s", s], "--store"),
        "llm compare --store": (["llm", "compare", "-m", m, "-s", s], "--store"),
        "llm export-finetune": (["llm", "export-finetune", "-m", m, "-s", s], "-o"),
        "llm store": (["llm", "store"], "--store"),
        "evaluate --store": (
            ["evaluate", "-m", m, "-s", s, "-g", "rtx3080", "-p", "llm"],
            "--store",
        ),
        "baseline update": (["baseline", "update", fixtures, "-g", "a100"], "--baseline"),
    }


def _suffix(verb: str) -> str:
    return ".png" if verb == "plot" else ".json"


@pytest.mark.parametrize(
    "verb",
    [
        "analyze",
        "analyze table",
        "matrix",
        "plot",
        "profile",
        "evaluate",
        "train",
        "llm run",
        "llm run --store",
        "llm compare --store",
        "llm export-finetune",
        "llm store",
        "evaluate --store",
        "baseline update",
    ],
)
def test_every_file_output_rejects_a_folder_and_a_missing_folder(tmp_path, verb):
    args, option = _writers(tmp_path)[verb]
    folder = tmp_path / ("out" + _suffix(verb))  # a folder whose name looks like a file's
    folder.mkdir()
    before = sorted(tmp_path.rglob("*"))
    result = CliRunner().invoke(app, [*args, option, str(folder)])
    _one_line_exit_2(result, str(folder), "is a folder")
    missing = tmp_path / "no" / "such" / ("x" + _suffix(verb))
    result = CliRunner().invoke(app, [*args, option, str(missing)])
    _one_line_exit_2(result, str(missing), "no such folder")
    assert sorted(tmp_path.rglob("*")) == before  # nothing created, not even the folders


def test_the_table_goes_to_the_output_file(tmp_path):
    out = tmp_path / "table.txt"
    result = CliRunner().invoke(app, ["analyze", str(FIXTURES), "-p", "roofline", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    text = out.read_text()
    assert "┃ kernel" in text  # a file gets the wide table
    assert all(name in text for name in ("copy_f32", "row_sum", "gs_scale", "dp_poly"))


def test_evaluate_report_is_a_folder_and_must_not_be_a_file(tmp_path):
    afile = tmp_path / "report"
    afile.write_text("")
    args = [
        "evaluate",
        "-m",
        str(EVAL / "manifest.csv"),
        "-s",
        str(EVAL / "sources"),
        "-g",
        "rtx3080",
        "-q",
        "-p",
        "roofline",
    ]
    _one_line_exit_2(CliRunner().invoke(app, [*args, "--report", str(afile)]), "is a file")
    _one_line_exit_2(
        CliRunner().invoke(app, [*args, "--report", str(tmp_path / "a" / "b")]), "no such folder"
    )


def test_evaluate_writes_json_to_output(tmp_path):
    out = tmp_path / "eval.json"
    result = CliRunner().invoke(
        app,
        [
            "evaluate",
            "-m",
            str(EVAL / "manifest.csv"),
            "-s",
            str(EVAL / "sources"),
            "-g",
            "rtx3080",
            "-q",
            "-p",
            "roofline",
            "-f",
            "json",
            "-o",
            str(out),
            "-n",
            "3",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["predictor"] == "roofline" and data["rows"] == 3


def test_evaluate_old_dash_o_option_says_what_it_is_now(tmp_path):
    result = CliRunner().invoke(
        app,
        [
            "evaluate",
            "-m",
            str(EVAL / "manifest.csv"),
            "-s",
            str(EVAL / "sources"),
            "-g",
            "rtx3080",
            "-o",
            "model=gpt-4.1",
        ],
    )
    _one_line_exit_2(result, "-O/--option")
    assert not (Path.cwd() / "model=gpt-4.1").exists()


# --------------------------------------------------------------------------- short flags


def test_every_short_flag_means_one_long_option_in_every_verb():
    """Walk the whole command tree: `-o` must not be --output in one verb and something else
    in another (it was --option in evaluate; -n and -j had two meanings too)."""
    meanings: dict[str, set[str]] = defaultdict(set)
    where: dict[str, list[str]] = defaultdict(list)
    for path, command in _commands(typer.main.get_command(app)):
        for option in _options(command):
            names = [*option.opts, *option.secondary_opts]
            longs = [n for n in names if n.startswith("--")]
            for short in (n for n in names if not n.startswith("--")):
                meanings[short].add(longs[0] if longs else "?")
                where[short].append(" ".join(path) or "roofcast")
    clashes = {s: sorted(m) for s, m in meanings.items() if len(m) > 1}
    assert not clashes, {s: (m, where[s]) for s, m in clashes.items()}
    for short, long in RESERVED.items():
        assert meanings.get(short, {long}) == {long}, (short, meanings[short])
    # the letters this change unified are where a person expects them
    for short, long in {
        "-o": "--output",
        "-n": "--limit",
        "-j": "--jobs",
        "-g": "--gpu",
        "-p": "--predictor",
        "-m": "--manifest",
        "-s": "--sources",
    }.items():
        assert meanings[short] == {long}, (short, meanings[short])


def test_the_short_flag_walk_sees_nested_verbs():
    paths = {" ".join(p) for p, _ in _commands(typer.main.get_command(app))}
    assert {"analyze", "evaluate", "llm run", "llm export-finetune", "baseline update"} <= paths


def test_evaluate_shares_store_and_replay_with_llm_run():
    root = typer.main.get_command(app)
    found = {}
    for path in (("evaluate",), ("llm", "run"), ("llm", "compare")):
        command = root
        for name in path:
            command = command.commands[name]
        found[path] = {
            o.opts[0]: (o.help, o.is_flag)
            for o in _options(command)
            if o.opts[0] in ("--store", "--replay")
        }
    assert len(found[("evaluate",)]) == 2
    assert found[("evaluate",)] == found[("llm", "run")] == found[("llm", "compare")]


def test_evaluate_replay_sends_nothing_and_needs_no_key(tmp_path, monkeypatch):
    """--replay scores from the store: no key, no endpoint; an empty store leaves every
    kernel unanswered (unknown), it does not fail."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    store = tmp_path / "answers.sqlite"
    args = [
        "evaluate",
        "-m",
        str(EVAL / "manifest.csv"),
        "-s",
        str(EVAL / "sources"),
        "-g",
        "rtx3080",
        "-q",
        "-p",
        "llm",
        "--model",
        "gpt-4.1",
        "--scenario",
        "zero-shot",
        "--store",
        str(store),
        "-f",
        "json",
    ]
    result = CliRunner().invoke(app, [*args, "--replay"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["predictor"] == "llm" and data["n"] > 0
    assert data["accuracy"] == 0  # nothing stored: every matched kernel is unknown, a miss
    assert store.is_file()
    live = CliRunner().invoke(app, args)  # without --replay the missing key is the error
    assert live.exit_code != 0 and "OPENAI_API_KEY" in live.stderr


def test_store_and_replay_are_for_the_llm_predictor():
    result = CliRunner().invoke(
        app,
        [
            "evaluate",
            "-m",
            str(EVAL / "manifest.csv"),
            "-s",
            str(EVAL / "sources"),
            "-g",
            "rtx3080",
            "-p",
            "roofline",
            "--replay",
        ],
    )
    _one_line_exit_2(result, "--predictor llm")


# --------------------------------------------------------------------------- usage, version


def test_analyze_script_usage_names_itself_once():
    result = CliRunner().invoke(analyze_app, ["--no-such-flag"], prog_name="analyze")
    assert result.exit_code == 2
    assert re.search(r"Usage: analyze \[OPTIONS\] \S*PATHS", result.stderr), result.stderr
    assert "Try 'analyze --help'" in result.stderr
    assert "analyze analyze" not in result.stderr
    sub = CliRunner().invoke(app, ["analyze", "--no-such-flag"], prog_name="roofcast")
    assert "Usage: roofcast analyze [OPTIONS]" in sub.stderr
    assert "Try 'roofcast analyze --help'" in sub.stderr


def test_analyze_script_runs_the_analysis():
    result = CliRunner().invoke(
        analyze_app, [str(FIXTURES), "-f", "json", "-p", "roofline"], prog_name="analyze"
    )
    assert result.exit_code == 0, result.output
    assert [k["name"] for k in json.loads(result.stdout)["kernels"]][:2] == ["copy_f32", "row_sum"]


@pytest.mark.parametrize("which", ["roofcast", "analyze"])
def test_version_comes_from_the_package_metadata(which):
    target = app if which == "roofcast" else analyze_app
    result = CliRunner().invoke(target, ["--version"], prog_name=which)
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == f"roofcast {version('roofcast')}"


# --------------------------------------------------------------------------- narrow output


def _reasons() -> dict[str, str]:
    result = CliRunner().invoke(app, ["analyze", str(FIXTURES), "-f", "json"])
    assert result.exit_code == 0, result.output
    return {k["name"]: k["reason"] for k in json.loads(result.stdout)["kernels"]}


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_piped_table_at_80_columns_keeps_whole_reasons():
    """Not a terminal, 80 columns: each kernel's name, verdict and whole reason are there
    (the wide table cut the reason to `learned: I`)."""
    reasons = _reasons()
    result = CliRunner(env={"COLUMNS": "80", "NO_COLOR": "1"}).invoke(
        app, ["analyze", str(FIXTURES)]
    )
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert max(len(line) for line in out.splitlines()) <= 80
    for name, reason in reasons.items():
        assert name in out
        assert _flat(reason.split("; symbolic")[0]) in _flat(out), (name, reason)
    assert out.count("bandwidth") + out.count("compute") >= len(reasons)


def test_verbose_adds_the_defaults_that_were_applied():
    env = {"COLUMNS": "80", "NO_COLOR": "1"}
    plain = CliRunner(env=env).invoke(app, ["analyze", str(FIXTURES), "-k", "row_sum"])
    verbose = CliRunner(env=env).invoke(app, ["analyze", str(FIXTURES), "-k", "row_sum", "-v"])
    assert "defaults: n=1024" in verbose.stdout and "defaults:" not in plain.stdout


def test_wide_terminal_keeps_the_table():
    result = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(
        app, ["analyze", str(FIXTURES)]
    )
    assert result.exit_code == 0
    assert "┃ kernel" in result.stdout and "reason" in result.stdout
