"""The hook through the real `pre-commit`, as a user's repository would run it.

The hook repository is a snapshot of this checkout's working tree (tracked and untracked,
not ignored) committed into a temporary git repository, so the test sees uncommitted work.
pre-commit builds its own virtualenv and pip-installs roofcast into it once per session
(about 20 s with a warm pip cache).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_workflow_cli import POLY_BANDWIDTH, POLY_COMPUTE

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _git_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT"))}
    # pre-commit pip-installs roofcast and its dependencies into its own virtualenv: with the
    # user's pip cache (not the temporary HOME's empty one) that unpacks wheels already
    # downloaded, and byte-compiling them (thousands of files the hook never imports) is left out
    cache_home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    env.setdefault("PIP_CACHE_DIR", str(cache_home / "pip"))
    env.setdefault("PIP_COMPILE", "0")
    env.update(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.com", GIT_CONFIG_NOSYSTEM="1",
               HOME=str(home), PRE_COMMIT_HOME=str(home / "pre-commit-cache"))
    # the venv's own tools (pre-commit, roofcast) first, as an activated venv would have them
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


def _sh(args: list[str], cwd: Path, env: dict, check: bool = True):
    res = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    if check and res.returncode != 0:
        raise AssertionError(f"{args} failed ({res.returncode}):\n{res.stdout}\n{res.stderr}")
    return res


def _snapshot(dest: Path, env: dict) -> str:
    """Copy the checkout's working tree into a fresh git repo; return its commit."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout
    for rel in filter(None, listed.split("\0")):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    if not (dest / "README.md").exists():  # pyproject's readme; the lead writes the real one
        (dest / "README.md").write_text("# roofcast\n")
    _sh(["git", "init", "-q", "-b", "main"], dest, env)
    _sh(["git", "add", "-A"], dest, env)
    _sh(["git", "commit", "-q", "-m", "snapshot"], dest, env)
    return _sh(["git", "rev-parse", "HEAD"], dest, env).stdout.strip()


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    env = _git_env(home)
    repo = tmp_path_factory.mktemp("hookrepo")
    return repo, _snapshot(repo, env), env


def _user_repo(tmp_path: Path, hook_repo, args: list[str]) -> Path:
    repo, rev, env = hook_repo
    user = tmp_path / "user"
    (user / "src").mkdir(parents=True)
    (user / "src" / "poly.cu").write_text(POLY_COMPUTE)
    (user / "README.txt").write_text("not a kernel\n")
    (user / ".pre-commit-config.yaml").write_text(
        "repos:\n"
        f"  - repo: {repo}\n"
        f"    rev: {rev}\n"
        "    hooks:\n"
        "      - id: roofcast\n"
        f"        args: [{', '.join(args)}]\n")
    _sh(["git", "init", "-q", "-b", "main"], user, env)
    return user


def test_commit_passes_then_a_bandwidth_regression_is_refused(tmp_path, hook_repo):
    env = hook_repo[2]
    user = _user_repo(tmp_path, hook_repo, ["--gpu", "rtx3080", "--fail-on", "change"])
    _sh(["roofcast", "baseline", "update", "src", "--gpu", "rtx3080"], user, env)
    _sh(["pre-commit", "install"], user, env)
    _sh(["git", "add", "-A"], user, env)
    ok = _sh(["git", "commit", "-m", "kernel + baseline"], user, env, check=False)
    shown = ok.stdout + ok.stderr  # git shows hook output on stderr
    print(shown)
    assert ok.returncode == 0, shown
    assert re.search(r"roofcast kernel roofline verdicts\.+Passed", shown)

    (user / "src" / "poly.cu").write_text(POLY_BANDWIDTH)
    _sh(["git", "add", "src/poly.cu"], user, env)
    bad = _sh(["git", "commit", "-m", "fewer iterations"], user, env, check=False)
    shown = bad.stdout + bad.stderr
    print(shown)
    assert bad.returncode != 0
    assert re.search(r"roofcast kernel roofline verdicts\.+Failed", shown)
    assert "src/poly.cu:1: poly [rtx3080] compute-bound -> bandwidth-bound (" in shown
    assert "1 of 1 kernel verdicts changed against .roofcast-baseline.json" in shown
    assert "README.txt" not in shown  # only kernel files reach the hook
    assert _sh(["git", "log", "--oneline"], user, env).stdout.count("\n") == 1  # not committed


def test_fail_on_bandwidth_lists_the_verdicts(tmp_path, hook_repo):
    env = hook_repo[2]
    user = _user_repo(tmp_path, hook_repo, ["--gpu", "rtx3080", "--gpu", "a100",
                                            "--fail-on", "bandwidth"])
    (user / "src" / "poly.cuh").write_text(POLY_BANDWIDTH.replace("poly(", "poly_h("))
    _sh(["git", "add", "-A"], user, env)
    res = _sh(["pre-commit", "run"], user, env, check=False)
    print(res.stdout, res.stderr)
    assert res.returncode == 1
    lines = [ln for ln in res.stdout.splitlines() if " [rtx3080] " in ln or " [a100] " in ln]
    # .cu and .cuh both reached the hook: 2 kernels x 2 GPUs, one line each
    assert len(lines) == 4
    assert any(line.startswith("src/poly.cuh:1: poly_h [a100] bandwidth-bound") for line in lines)
    assert any(line.startswith("src/poly.cu:1: poly [rtx3080] compute-bound") for line in lines)
