"""The reference pages' directives: what ``passk`` prints for ``--help``, drawn from the parser.

``{passk-help} gate`` renders ``passk gate --help`` as the command prints it (the
parser is :func:`passk.cli.commands.build_parser`, the one the command runs), so the
book's command reference cannot fall behind an option; with no argument it renders
``passk --help``. The width is fixed (76 columns, what the page shows without
scrolling) so that the page does not depend on the terminal that built it. An unknown
command is a build warning (so ``-W`` fails), naming the commands there are.
"""

from __future__ import annotations

import argparse
import os
import re

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

WIDTH = "76"


def commands() -> dict[str, argparse.ArgumentParser]:
    """Every ``passk`` subcommand's parser, by name, in the order ``passk --help`` lists."""
    from passk.cli.commands import build_parser

    parser = build_parser()
    # argparse keeps its subcommands in a private action: no public accessor exists
    sub = next(a for a in parser._actions  # noqa: SLF001
               if isinstance(a, argparse._SubParsersAction))  # noqa: SLF001
    return {"": parser, **dict(sub.choices.items())}


def help_text(name: str) -> str:
    """``passk NAME --help`` at :data:`WIDTH` columns (``""``: ``passk --help``)."""
    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    try:
        return commands()[name].format_help().rstrip() + "\n"
    finally:
        if before is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = before


class PasskHelp(SphinxDirective):
    """``{passk-help} COMMAND``: the command's help, as a literal block."""

    optional_arguments = 1
    has_content = False

    def run(self) -> list[nodes.Node]:
        name = self.arguments[0] if self.arguments else ""
        known = commands()
        if name not in known:
            return [self.state.document.reporter.warning(
                f"passk-help: no command {name!r}; the commands are "
                f"{', '.join(n for n in known if n)}", line=self.lineno)]
        text = help_text(name)
        block = nodes.literal_block(text, text, language="text")
        self.set_source_info(block)
        return [block]


_CITATION = re.compile(r"\[(\d+)\]_")
_CITED = re.compile(r"^(\s*\.\. )\[(\d+)\]")


def unique_citations(app: Sphinx, what: str, name: str, obj: object, options: object,
                     lines: list[str]) -> None:
    """numpydoc's ``[1]_`` and ``.. [1]`` are local to one docstring; on a page that shows
    several docstrings they would clash, so each is prefixed with its object's name."""
    tag = name.rsplit(".", 1)[-1]
    for i, line in enumerate(lines):
        cited = _CITED.sub(lambda m: f"{m.group(1)}[{tag}-{m.group(2)}]", line)
        lines[i] = _CITATION.sub(lambda m: f"[{tag}-{m.group(1)}]_", cited)


def always_reread(app: Sphinx, env: object, added: set[str], changed: set[str],
                  removed: set[str]) -> list[str]:
    """The pages that draw from the parser or the docstrings are read again on every build:
    their text is the package's, which Sphinx does not see change."""
    return [doc for doc in ("book/using/cli", "book/using/api") if doc in env.found_docs]


def setup(app: Sphinx) -> dict[str, bool]:
    app.connect("env-get-outdated", always_reread)
    app.setup_extension("sphinx.ext.autodoc")
    app.add_directive("passk-help", PasskHelp)
    app.connect("autodoc-process-docstring", unique_citations)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
