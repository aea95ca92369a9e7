"""Offline headless Chromium for the browser tests: launch flags, and a page watcher."""

from __future__ import annotations

import contextlib
import functools
import http.server
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import urlparse

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


def is_local(url: str) -> bool:
    """Whether a request stays on this machine (127.0.0.1, or an inline data/blob URL)."""
    parsed = urlparse(url)
    if parsed.scheme in ("data", "blob", "about"):
        return True
    return parsed.scheme in ("http", "https", "ws", "wss") and parsed.hostname == "127.0.0.1"


@dataclass
class PageWatch:
    """What a page did that a test should object to."""

    outside: list[str] = field(default_factory=list)  # requests off this machine (aborted)
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)


def watch(context, page) -> PageWatch:
    """Abort and record every request off 127.0.0.1; record console and page errors."""
    seen = PageWatch()

    def route(r):
        if is_local(r.request.url):
            r.continue_()
        else:
            seen.outside.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    page.on("console", lambda msg: seen.console_errors.append(f"{msg.text} @ {msg.location}")
            if msg.type == "error" else None)
    page.on("pageerror", lambda exc: seen.page_errors.append(str(exc)))
    page.on("request", lambda req: None if is_local(req.url) else seen.outside.append(req.url))
    page.on("websocket", lambda ws: None if is_local(ws.url) else seen.outside.append(ws.url))
    return seen


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


@contextlib.contextmanager
def serve_directory(directory) -> Iterator[str]:
    """Serve ``directory`` on a free localhost port for as long as the block runs; yields
    its base URL."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def close_lab_page(context, page) -> None:
    """Leave a JupyterLab page: shut its notebook's kernel down (best effort: the page may
    already be gone), then close the browser context."""
    with contextlib.suppress(Exception):  # best effort on the way out
        page.evaluate("() => window.jupyterapp.shell.currentWidget"
                      ".sessionContext.shutdown()")
    context.close()
