"""A ladder served in process (Starlette's TestClient), for the API and page tests: its
accounts, its app and what its handlers share, and the requests they send. Import it after
``pytest.importorskip("starlette")``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from starlette.testclient import TestClient

from arena.serve.app import Ladderside, create_app
from arena.serve.ladder import load_ladder
from arena.serve.server import import_bundled
from tests.serve.ladder_fixtures import add_user, ladder_file, safe_sandbox


def ladder_app(folder: Path, users: dict[str, bool], **file_options: Any) -> tuple[Any, dict[str, str], Ladderside]:
    """(app, API token by user name, side) of a fixture ladder in ``folder``; ``users`` maps each
    name to whether it is an organiser. Close the side when done."""
    data = folder / "data"
    tokens = {name: add_user(data, name, organiser=organiser) for name, organiser in users.items()}
    ladder = load_ladder(ladder_file(folder, **file_options))
    import_bundled(ladder, data)
    side = Ladderside(ladder, data, safe_sandbox())
    return create_app(side), tokens, side


def client(app: Any) -> TestClient:
    return TestClient(app, raise_server_exceptions=False)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def upload(c: TestClient, token: str | None, data: bytes, filename: str = "bot.py", name: str | None = None) -> Any:
    return c.post(
        "/api/bots",
        headers=bearer(token) if token else {},
        files={"file": (filename, data)},
        data={"name": name} if name else {},
    )
