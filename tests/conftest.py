"""Shared test setup: Hypothesis profiles, and the fixtures more than one test file uses.

`ci` (the default) is derandomized with a small budget so that a run is reproducible and the
property files stay short on a small machine; `long` (`--hypothesis-profile=long`) draws many
random examples for a search before a release. Tests size their own budgets as fractions
of the profile's `max_examples` (see `budget`), so one switch scales them all.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings

_COMMON = {
    "deadline": None,  # the first analysis imports and warms caches: a timing, not a bug
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
    "print_blob": True,
}
settings.register_profile("ci", max_examples=20, derandomize=True, database=None, **_COMMON)
settings.register_profile("long", max_examples=1000, **_COMMON)
settings.load_profile("ci")  # `--hypothesis-profile` is applied after this, and wins


@pytest.fixture(scope="session")
def local_server(tmp_path_factory: pytest.TempPathFactory):
    """`roofcast llm serve` with the SmolLM2-135M test model, in a child process, for the
    tests marked `llm`; skipped, with the reason, where xllamacpp or the model is missing."""
    from roofcast.llm.serve import LocalServer, ServeError, locate_model, server_available

    why = server_available()
    if why:
        pytest.skip(why)
    try:
        locate_model("smollm2")
    except ServeError as exc:
        pytest.skip(str(exc))
    log = tmp_path_factory.mktemp("server") / "server.log"
    with LocalServer(ctx=2048, log=log) as server:
        yield server
