"""passk's version: the installed distribution's, else the checkout's ``pyproject.toml``.

Read on first use (``passk.__version__``, ``passk --version``), so that importing passk
does not load :mod:`importlib.metadata`.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["DISTRIBUTION", "version"]

#: The distribution's name on the package registry (the import name is ``passk``).
DISTRIBUTION = "passk-reliability"


def version() -> str:
    """passk's version: the installed distribution's (:func:`importlib.metadata.version`);
    in a checkout that was never installed, the version its ``pyproject.toml`` declares,
    marked ``+checkout``; ``0+unknown`` when neither says.

    Examples
    --------
    >>> v = version()
    >>> v[0].isdigit()
    True
    """
    from importlib import metadata

    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return _checkout_version(Path(__file__).resolve().parent.parent / "pyproject.toml")


def _checkout_version(pyproject: Path) -> str:
    """The version a checkout's ``pyproject.toml`` declares for this distribution, with the
    local label ``+checkout`` (not installed, so not a released build); ``0+unknown`` when
    the file is missing, unreadable or another project's."""
    import tomllib

    try:
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return "0+unknown"
    if not isinstance(project, dict):
        return "0+unknown"
    declared = project.get("version")
    if project.get("name") != DISTRIBUTION or not isinstance(declared, str) or not declared:
        return "0+unknown"
    return f"{declared}+checkout"
