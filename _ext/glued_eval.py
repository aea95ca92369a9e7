"""The book's ``{eval}`` role: the glued value named after ``# glue``, as ``{glue:text}``.

``scripts/sync_notebooks.py`` writes each number of the prose as
``{eval}`'0.318'  # glue p_hat_03:.3f` ``: JupyterLab (jupyterlab-myst) draws the literal,
stored in the cell's ``user_expressions``. The book, built with execution off, has no
kernel to evaluate anything (myst-nb's own ``eval`` needs one), so this role ignores the
literal and pastes the glued value itself, exactly as ``{glue:text}`p_hat_03:.3f` ``
would: the book always shows what the code glued. An ``{eval}`` without ``# glue KEY``
is a build warning (so ``-W`` fails), naming the fix.
"""

from __future__ import annotations

import re

from myst_nb.ext.glue.roles import PasteTextRole

GLUE_KEY = re.compile(r"#\s*glue\s+(\S+)\s*$")


class GluedEvalRole:
    """``{eval}`'text'  # glue key[:fmt]` `` rendered as ``{glue:text}`key[:fmt]` ``."""

    def __call__(self, name, rawtext, text, lineno, inliner, options=None, content=()):
        found = GLUE_KEY.search(text)
        if not found:
            msg = inliner.reporter.warning(
                f"{{eval}}`{text}`: the book renders only eval roles written by "
                "scripts/sync_notebooks.py from a glued value (`# glue KEY[:FMT]`); "
                "cite a number as {glue:text}`KEY:FMT` and run the script",
                line=lineno,
            )
            return [], [msg]
        return PasteTextRole()("glue:text", rawtext, found.group(1), lineno, inliner,
                               options, content)


def setup(app):
    # after myst_nb (listed before this extension), whose eval role needs a kernel
    app.add_role("eval", GluedEvalRole(), override=True)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
