"""The book's ``{eval}`` role: the glued value named in ``glued("key:fmt")``, as ``{glue:text}``.

``scripts/sync_notebooks.py`` writes each number of the prose as
``{eval}`glued("p_hat_03:.3f")` ``: in JupyterLab, jupyterlab-myst asks the kernel for
that expression (``glued`` is defined by the notebook's hidden ``glued-numbers`` cell and
formats the value the code glued last), and shows the result stored in the cell's
``user_expressions`` until then. The book, built with execution off, has no kernel to
evaluate anything (myst-nb's own ``eval`` needs one), so this role pastes the glued value
itself, exactly as ``{glue:text}`p_hat_03:.3f` `` would: the book always shows what the
code glued. The older form ``{eval}`'0.318'  # glue p_hat_03:.3f` `` is read the same way.
Any other ``{eval}`` is a build warning (so ``-W`` fails), naming the fix.
"""

from __future__ import annotations

import re

from myst_nb.ext.glue.roles import PasteTextRole

GLUED_CALL = re.compile(r"""^\s*glued\(\s*["']([^"']+)["']\s*\)\s*$""")
GLUE_KEY = re.compile(r"#\s*glue\s+(\S+)\s*$")


class GluedEvalRole:
    """``{eval}`glued("key[:fmt]")` `` rendered as ``{glue:text}`key[:fmt]` ``."""

    def __call__(self, name, rawtext, text, lineno, inliner, options=None, content=()):
        found = GLUED_CALL.search(text) or GLUE_KEY.search(text)
        if not found:
            msg = inliner.reporter.warning(
                f"{{eval}}`{text}`: the book renders only eval roles written by "
                'scripts/sync_notebooks.py from a glued value (`glued("KEY:FMT")`); '
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
