"""``tablanette web``: serve the ladder pages and the JSON API."""

from __future__ import annotations

from typing import Annotated

import typer

from .common import arena_settings, console


def web(
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="HTTP port.")] = 8080,
) -> None:
    """Serve the web ladder: ladders, tournaments, bot pages, replays, and the JSON API."""
    import uvicorn

    from store.client import connect, connect_async, redacted
    from web.app import create_app

    settings = arena_settings()
    app = create_app(connect(settings.redis_url), settings.prefix, live_redis=connect_async(settings.redis_url))
    console.print(
        f"web ladder on http://{host}:{port}/ (redis {redacted(settings.redis_url)}, prefix {settings.prefix!r}); "
        f"API at http://{host}:{port}/api",
        highlight=False,
    )
    uvicorn.run(app, host=host, port=port, log_level="warning")
