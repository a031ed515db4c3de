"""Where lineup-jupyter keeps data between kernels, and how it opens its SQLite files.

One data directory per user: the constructor argument if given, else ``$LINEUP_JUPYTER_HOME``,
else the platform's per-user data directory (``$XDG_DATA_HOME/lineup-jupyter``, by default
``~/.local/share/lineup-jupyter`` on Linux). Several kernels share it, so every database is
opened in WAL mode with a busy timeout: writers wait for each other instead of failing.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path

__all__ = ["BUSY_TIMEOUT_MS", "ENV_HOME", "connect", "data_dir"]

ENV_HOME = "LINEUP_JUPYTER_HOME"
BUSY_TIMEOUT_MS = 10_000  # two kernels writing at once wait this long for each other
_APP = "lineup-jupyter"


def data_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The data directory (not created here): argument, then environment, then platform."""
    if explicit is not None:
        return Path(explicit).expanduser()
    from_env = os.environ.get(ENV_HOME)
    if from_env:
        return Path(from_env).expanduser()
    home = Path.home()
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA", home / "AppData" / "Local")) / _APP
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / _APP
    return Path(os.environ.get("XDG_DATA_HOME") or home / ".local" / "share") / _APP


def connect(path: Path) -> sqlite3.Connection:
    """Open (creating its folder) a database that other kernels may be writing at once.

    Autocommit mode: callers open their own ``BEGIN IMMEDIATE`` transactions, so a
    read-then-write (the audit chain's previous hash) cannot interleave with another writer.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(
        path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
    )
    connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA synchronous = NORMAL")  # WAL: durable at checkpoints, never corrupt
    return connection
