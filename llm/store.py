"""The response store: one SQLite row per request, so no answer is paid for twice.

Rows are keyed by a hash of everything that decides the reply (model, messages, sampling
parameters, sample index). The file runs in WAL mode and every answer is committed on its
own as soon as it arrives, so a campaign killed at any moment keeps every stored answer and
the next run resumes by finding them. Secrets never reach it: parameters come from
`LLMConfig.public()` (no key, redacted URL) and error texts are scrubbed.
"""
from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, fields
from pathlib import Path

SCHEMA_VERSION = 1
STORE_ENV = "ROOFCAST_LLM_STORE"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS requests (
    request_hash      TEXT PRIMARY KEY,
    prompt_hash       TEXT NOT NULL,
    scenario          TEXT NOT NULL,
    model             TEXT NOT NULL,
    base_url          TEXT,
    params            TEXT NOT NULL,
    kernel_id         TEXT NOT NULL,
    sample            INTEGER NOT NULL DEFAULT 0,
    answer            TEXT,
    confidence        REAL,
    reason            TEXT,
    raw_text          TEXT,
    finish_reason     TEXT,
    prompt_tokens     INTEGER,
    completion_tokens INTEGER,
    latency_s         REAL,
    cost_usd          REAL,
    error             TEXT,
    created_at        REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS requests_model_scenario ON requests (model, scenario);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class StoreError(RuntimeError):
    """The store file cannot be opened or written; the message is one line."""


def default_store_path() -> Path:
    env = os.environ.get(STORE_ENV)
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "roofcast" / "llm.sqlite"


@dataclass
class StoredRequest:
    """One request and what came back (answer None when it failed with `error`)."""

    request_hash: str
    prompt_hash: str
    scenario: str
    model: str
    base_url: str | None
    params: str  # JSON
    kernel_id: str
    sample: int = 0
    answer: str | None = None
    confidence: float | None = None
    reason: str | None = None
    raw_text: str | None = None
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float | None = None
    cost_usd: float | None = None
    error: str | None = None
    created_at: float = 0.0

    @property
    def params_dict(self) -> dict:
        return json.loads(self.params)


_COLUMNS = [f.name for f in fields(StoredRequest)]


class Store:
    """Thread-safe access to one store file (one connection, serialised writes)."""

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path).expanduser() if path else default_store_path()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(
                self.path, check_same_thread=False, isolation_level=None, timeout=30
            )
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.executescript(_SCHEMA)
            self._conn.execute(
                "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)",
                (str(SCHEMA_VERSION),),
            )
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"response store {self.path}: {exc}") from None
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get(self, request_hash: str) -> StoredRequest | None:
        with self._lock:
            cur = self._conn.execute(
                f"SELECT {', '.join(_COLUMNS)} FROM requests WHERE request_hash = ?",
                (request_hash,),
            )
            row = cur.fetchone()
        return StoredRequest(*row) if row else None

    def put(self, record: StoredRequest) -> None:
        """Insert (or replace a failed attempt of) one request; committed at once."""
        if not record.created_at:
            record.created_at = time.time()
        values = asdict(record)
        placeholders = ", ".join("?" for _ in _COLUMNS)
        try:
            with self._lock:
                self._conn.execute(
                    f"INSERT OR REPLACE INTO requests ({', '.join(_COLUMNS)}) "
                    f"VALUES ({placeholders})",
                    [values[c] for c in _COLUMNS],
                )
        except sqlite3.Error as exc:
            raise StoreError(f"response store {self.path}: {exc}") from None

    def count(self, **where: str) -> int:
        clause, args = _where(where)
        with self._lock:
            return self._conn.execute(f"SELECT COUNT(*) FROM requests{clause}", args).fetchone()[0]

    def rows(self, **where: str) -> Iterator[StoredRequest]:
        clause, args = _where(where)
        with self._lock:
            data = self._conn.execute(
                f"SELECT {', '.join(_COLUMNS)} FROM requests{clause} ORDER BY created_at", args
            ).fetchall()
        for row in data:
            yield StoredRequest(*row)

    def models(self) -> list[str]:
        with self._lock:
            return [r[0] for r in self._conn.execute("SELECT DISTINCT model FROM requests")]


def _where(where: dict[str, str]) -> tuple[str, list[str]]:
    allowed = {k: v for k, v in where.items() if k in _COLUMNS and v is not None}
    if not allowed:
        return "", []
    return " WHERE " + " AND ".join(f"{k} = ?" for k in allowed), list(allowed.values())
