"""``passk report --plot FILE.png``: the suite's curves over k and flakiness per task.

matplotlib is optional (the ``plot`` extra) and imported only here, with the
non-interactive Agg backend, so the command works on a headless CI runner.
"""

from __future__ import annotations

import numbers
import os
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from passk.errors import PasskError

if TYPE_CHECKING:  # pragma: no cover
    import re
    from collections.abc import Sequence

    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from passk.analysis.report import FileReport
    from passk.stability import SuiteReport
    from passk.stats.power import ComparisonPlan

__all__ = [
    "BOOK_FIGURE_WIDTH_PX",
    "MIN_TEXT_PX",
    "MissingExtra",
    "book_points",
    "displayed_text_px",
    "drawing_in",
    "fit_text",
    "plot_attribution",
    "plot_coverage",
    "plot_curves",
    "plot_gate",
    "plot_power_grid",
    "plot_report",
    "plot_run_strip",
    "plot_task_classes",
    "report_figure",
    "shown_sizes",
    "shown_texts",
    "smallest_text",
    "translate_figure",
    "use_language",
]


_BLUE, _VERMILLION, _GREY = "#0072B2", "#D55E00", "#999999"


class MissingExtra(PasskError, RuntimeError):
    """An optional dependency is not installed; the message names the extra."""


# ------------------------------------------------------------- text size on the book's page
#
# The book shows a figure as an image at most as wide as its column: at a 1280 px window
# (the browser tests' width), sphinx-book-theme gives the page 1280 x 80 % = 1024 px
# beside the primary sidebar (20 %), the article 1024 - 272 = 752 px beside the
# secondary one ("On this page", 272 px), 752 - 2 x 32 = 688 px inside the article's
# padding, and myst-nb's figure 688 - 2 x 8 = 672 px inside its own. An image wider
# than that is scaled down to it (``max-width: 100%``), a narrower one shown at its own
# size. tests/test_figure_text_size.py measures this width in Chromium.

#: CSS px a figure of the book may take at a 1280 px window (see above).
BOOK_FIGURE_WIDTH_PX = 672
#: The smallest text a figure may show on the book's page: 9 pt at 96 CSS px per inch.
MIN_TEXT_PX = 12.0


def displayed_text_px(points: float, dpi: float, image_px: float,
                      width_px: float = BOOK_FIGURE_WIDTH_PX) -> float:
    """CSS px of a ``points`` font in an image ``image_px`` wide shown at most ``width_px``.

    The image draws a point as ``dpi / 72`` of its pixels, and the page shows it scaled by
    :math:`\\min(1, w / N)` for a column ``w`` px wide and an image ``N`` px wide:

    .. math:: \\text{px} = \\text{pt} \\cdot \\frac{\\text{dpi}}{72} \\cdot
              \\min\\!\\left(1, \\frac{w}{N}\\right)

    Examples
    --------
    >>> displayed_text_px(10, 100, 600)            # shown at its own size
    13.89
    >>> displayed_text_px(10, 100, 840)            # 8.4 inches scaled to 672 px
    11.11
    """
    if dpi <= 0 or image_px <= 0 or width_px <= 0:
        raise ValueError(f"dpi ({dpi}), image_px ({image_px}) and width_px ({width_px}) "
                         "must be positive")
    return round(points * dpi / 72 * min(1.0, width_px / image_px), 2)


def book_points(fig: Figure, minimum_px: float = MIN_TEXT_PX,
                width_px: float = BOOK_FIGURE_WIDTH_PX) -> float:
    """The smallest font size (points, to the half point above) that ``fig`` may use.

    The page shows a ``w``-inch figure drawn at ``dpi`` at most ``width_px`` wide, so a
    point becomes :math:`\\min(\\text{dpi}, \\text{width\\_px} / w) / 72` CSS px and a
    text of ``minimum_px`` needs

    .. math:: \\text{pt} = \\frac{72 \\cdot \\text{minimum\\_px}}
              {\\min(\\text{dpi}, \\text{width\\_px} / w)}

    (the whole figure's width: the image the page shows is cropped to what is drawn, never
    wider). A 7-inch figure at 100 dpi needs 9 pt, an 8-inch one 10.5 pt.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig = plt.figure(figsize=(8, 4), dpi=100)
    >>> book_points(fig), book_points(plt.figure(figsize=(5, 3), dpi=100))
    (10.5, 9.0)
    >>> plt.close("all")
    """
    import math

    per_inch = min(float(fig.dpi), width_px / float(fig.get_figwidth()))
    return math.ceil(2 * 72 * minimum_px / per_inch) / 2


def fit_text(where: Figure | Axes, minimum: float | None = None) -> float:
    """Raise every text of ``where`` smaller than ``minimum`` points to ``minimum``.

    Titles, axis labels, tick labels, legends (their title too), annotations and texts;
    larger texts are left as they are. ``minimum`` defaults to :func:`book_points` of the
    figure, so that the smallest text is at least 9 pt on the book's page. Call it once
    everything is drawn. Returns the size used.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots(figsize=(8, 4), dpi=100)
    >>> _ = ax.set_title("title", fontsize=14); _ = ax.text(0, 0, "note", fontsize=7)
    >>> fit_text(ax), ax.texts[0].get_fontsize(), ax.title.get_fontsize()
    (10.5, 10.5, 14.0)
    >>> plt.close(fig)
    """
    from matplotlib.axes import Axes
    from matplotlib.text import Text

    fig = where.get_figure(root=True) if isinstance(where, Axes) else where
    if fig is None:
        raise ValueError("the axes belong to no figure")
    points = book_points(fig) if minimum is None else float(minimum)
    for axes in ([where] if isinstance(where, Axes) else fig.axes):
        axes.tick_params(which="both", labelsize=max(points, _tick_points(axes)))
    for text in where.findobj(Text):
        if float(text.get_fontsize()) < points:
            text.set_fontsize(points)
    return points


def _tick_points(axes: Axes) -> float:
    ticks = axes.xaxis.get_major_ticks()[:1] + axes.yaxis.get_major_ticks()[:1]
    return min((float(t.label1.get_fontsize()) for t in ticks), default=0.0)


def _drawn_texts(fig: Figure) -> list[Any]:
    """The figure's texts a reader sees: visible, not empty, tick labels only in view."""
    from matplotlib.axis import Axis
    from matplotlib.text import Text

    labels: set[int] = set()
    shown = []
    for axis in fig.findobj(Axis):
        low, high = sorted(axis.get_view_interval())
        slack = 1e-9 * (abs(low) + abs(high) + 1)
        for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]:
            labels.update((id(tick.label1), id(tick.label2)))
            loc = tick.get_loc()
            if tick.get_visible() and loc is not None and low - slack <= loc <= high + slack:
                shown += [tick.label1, tick.label2]
    shown += [t for t in fig.findobj(Text) if id(t) not in labels]
    return [t for t in shown if t.get_visible() and t.get_text().strip()
            and (t.axes is None or t.axes.get_visible())]


def smallest_text(fig: Figure) -> tuple[float, str]:
    """The size in points of the smallest text ``fig`` shows, and that text.

    Titles, labels, tick labels in view, legends, annotations and contour labels all
    count; a text's base size is read (mathtext draws a superscript at 70 % of it).
    A figure without text gives ``(inf, "")``.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> _ = ax.set_title("a title", fontsize=14); _ = ax.text(0.5, 0.5, "note", fontsize=7)
    >>> smallest_text(fig)
    (7.0, 'note')
    >>> plt.close(fig)
    """
    fig.canvas.draw()   # ticks and their labels as they will be drawn
    sizes = [(float(t.get_fontsize()), t.get_text()) for t in _drawn_texts(fig)]
    return min(sizes, key=lambda s: s[0]) if sizes else (float("inf"), "")


# ------------------------------------------------------------- figures in another language
#
# Every figure of the book (this module's and the notebooks' own) is drawn in English by
# the same code; the Chinese edition's build (scripts/zh_book.py) executes the notebooks
# with ``use_language("zh_CN", catalog)`` first, so that each figure is translated, text
# by text, just before it is drawn. One catalog (locales/zh_CN/_figures.yml) holds the
# Chinese of every figure text.

#: The CJK fonts tried in order (the first installed draws Latin and Chinese alike;
#: mathtext's text outside the dollars uses it too), then DejaVu Sans for the rest.
CJK_FONTS = ("Noto Sans CJK SC", "Noto Sans CJK JP", "WenQuanYi Zen Hei")
_LANGUAGE: dict[str, Any] = {"catalog": None, "shown": [], "sizes": [], "where": None}


def _compile(catalog: dict[str, Any]) -> dict[str, Any]:
    import re

    strings = {str(k): str(v) for k, v in (catalog.get("strings") or {}).items()}
    patterns = []
    for number, entry in enumerate(catalog.get("patterns") or [], 1):
        if not isinstance(entry, dict) or set(entry) != {"en", "zh"}:
            raise ValueError(f"figure catalog: pattern {number} must be {{en: regex, zh: "
                             f"template}}, not {entry!r}")
        patterns.append((re.compile(str(entry["en"]), re.DOTALL), str(entry["zh"])))
    return {"strings": strings, "patterns": patterns}


def translate_text(text: str, catalog: dict[str, Any]) -> str:
    """One figure text in the catalog's language; a text it does not know stays as it is.

    An exact entry of ``catalog["strings"]`` wins; else the first of
    ``catalog["patterns"]`` (``(compiled regex, template)``) that matches the whole
    text, whose template is filled (``str.format``) with its groups, each translated
    in turn; else each line of a text of several lines on its own.

    Examples
    --------
    >>> import re
    >>> cat = {"strings": {"probability": "概率", "before": "修复前"},
    ...        "patterns": [(re.compile(r"(.+): (BLOCKED)"), "{0}：{1}")]}
    >>> translate_text("probability", cat), translate_text("before: BLOCKED", cat)
    ('概率', '修复前：BLOCKED')
    >>> translate_text("0.25", cat)
    '0.25'
    """
    strings: dict[str, str] = catalog["strings"]
    if text in strings:
        return strings[text]
    patterns: list[tuple[re.Pattern[str], str]] = catalog["patterns"]
    for pattern, template in patterns:
        match = pattern.fullmatch(text)
        if match:
            return template.format(*(translate_text(g, catalog) if g else (g or "")
                                     for g in match.groups()))
    if "\n" in text:
        return "\n".join(translate_text(line, catalog) for line in text.split("\n"))
    return text


def translate_figure(fig: Figure, catalog: dict[str, Any]) -> list[str]:
    """Translate every text of ``fig`` in place; returns the texts as they will be drawn.

    Titles, axis labels, legends, annotations, bar labels and fixed tick labels (their
    ``FixedFormatter``) all go through :func:`translate_text`. Numbers and formulas a
    catalog does not list are left as they are.
    """
    import functools

    from matplotlib.text import Text
    from matplotlib.ticker import FixedFormatter, FuncFormatter

    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for formatter in (axis.get_major_formatter(), axis.get_minor_formatter()):
                if isinstance(formatter, FixedFormatter):
                    formatter.seq = [translate_text(str(s), catalog) for s in formatter.seq]
                # ax.set_xticks(ticks, labels): the labels by tick, in a partial's dict
                func = getattr(formatter, "func", None)
                if isinstance(formatter, FuncFormatter) and isinstance(
                        func, functools.partial) and func.args and isinstance(func.args[0], dict):
                    for tick, label in func.args[0].items():
                        func.args[0][tick] = translate_text(str(label), catalog)
    for text in fig.findobj(Text):
        shown = text.get_text()
        if shown:
            text.set_text(translate_text(shown, catalog))
    return [t.get_text() for t in fig.findobj(Text) if t.get_text() and t.get_visible()]


def use_language(language: str, catalog: str | os.PathLike[str] | dict[str, Any]) -> None:
    """Draw every figure from now on in ``language``, translated by ``catalog``.

    Sets a font list that draws Chinese (:data:`CJK_FONTS`) and translates each figure
    (:func:`translate_figure`) just before matplotlib renders it, whoever drew it
    (``plt.show()`` in a notebook, ``savefig``); the texts drawn are kept, in order, for
    :func:`shown_texts`. ``language="en"`` draws in English again. The catalog is a
    YAML file or a mapping with ``strings`` (English text: translation) and
    ``patterns`` (a list of ``{en: regex, zh: template}``).
    """
    import matplotlib as mpl
    from matplotlib.backend_bases import FigureCanvasBase

    if language == "en":
        _LANGUAGE["catalog"] = None
        for key in ("font.family", "mathtext.fontset", "mathtext.rm", "mathtext.it",
                    "mathtext.bf", "mathtext.sf", "mathtext.cal", "mathtext.fallback"):
            mpl.rcParams[key] = mpl.rcParamsDefault[key]
        return
    if not isinstance(catalog, dict):
        import yaml  # type: ignore[import-untyped]  # the book extra (jupyter-book) has it

        with open(catalog, encoding="utf-8") as handle:
            catalog = yaml.safe_load(handle) or {}
    _LANGUAGE["catalog"] = _compile(catalog)
    from matplotlib import font_manager

    installed = {f.name for f in font_manager.fontManager.ttflist}
    cjk = [f for f in CJK_FONTS if f in installed][:1]
    fonts = [*cjk, "DejaVu Sans"]
    if len(fonts) == 1:
        raise MissingExtra(f"drawing {language} needs a CJK font, one of {CJK_FONTS} "
                           "(apt-get install fonts-noto-cjk; scripts/setup.sh does)")
    # a list of families, not the generic "sans-serif": matplotlib falls back glyph by
    # glyph along font.family only. A text with math ($...$) is drawn by mathtext,
    # whose upright font (its text outside the dollars) must draw Chinese too.
    mpl.rcParams["font.family"] = fonts
    mpl.rcParams.update({"mathtext.fontset": "custom", "mathtext.rm": fonts[0],
                                "mathtext.it": "DejaVu Sans:italic",
                                "mathtext.bf": "DejaVu Sans:bold", "mathtext.sf": "DejaVu Sans",
                                "mathtext.cal": "DejaVu Sans",
                                "mathtext.fallback": "stixsans"})
    if not getattr(FigureCanvasBase.print_figure, "_passk_translates", False):
        original = FigureCanvasBase.print_figure

        def print_figure(self: Any, *args: Any, **kwargs: Any) -> Any:
            if _LANGUAGE["catalog"] is not None:
                fig = self.figure
                translate_figure(fig, _LANGUAGE["catalog"])
                if fig.get_layout_engine() is None:   # the texts' widths changed
                    import warnings

                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        fig.tight_layout()
                result = original(self, *args, **kwargs)
                _LANGUAGE["shown"].append((_LANGUAGE["where"], [t.get_text() for t in fig.findobj(
                    mpl.text.Text) if t.get_text() and t.get_visible()]))
                dpi = kwargs.get("dpi")
                points, text = smallest_text(fig)
                _LANGUAGE["sizes"].append((_LANGUAGE["where"], {
                    "dpi": float(dpi if isinstance(dpi, numbers.Real) else fig.dpi),
                    "points": points, "text": text}))
                return result
            return original(self, *args, **kwargs)

        # matplotlib's print_figure is patched once; the mark says it was (no stub has it)
        print_figure._passk_translates = True  # type: ignore[attr-defined]  # noqa: SLF001
        FigureCanvasBase.print_figure = print_figure  # type: ignore[method-assign]


def drawing_in(where: str | None) -> None:
    """Label the figures drawn from now on (a notebook cell's id) for :func:`shown_texts`."""
    _LANGUAGE["where"] = where


def shown_texts() -> list[tuple[str | None, list[str]]]:
    """``(label, texts)`` of each figure drawn since :func:`use_language`, in order.

    The label is the last one :func:`drawing_in` set (None before).
    """
    return list(_LANGUAGE["shown"])


def shown_sizes() -> list[tuple[str | None, dict[str, Any]]]:
    """``(label, {"dpi", "points", "text"})`` of each figure drawn since :func:`use_language`.

    In the order of :func:`shown_texts`: the resolution the figure was drawn at, and the
    size in points of its smallest text (:func:`smallest_text`) and that text.
    """
    return list(_LANGUAGE["sizes"])


def _wrapped(title: str, width: int = 62) -> str:
    """A panel title broken into lines that fit its half of the figure (a long interval
    method would run past the figure's edge and be cut: constrained layout makes room for
    the lines a title has, and never breaks one).

    Examples
    --------
    >>> print(_wrapped("suite of 3 tasks; shaded: 95% interval over tasks (a long method)", 30))
    suite of 3 tasks; shaded: 95%
    interval over tasks (a long
    method)
    """
    import textwrap

    return "\n".join(textwrap.wrap(title, width, break_on_hyphens=False)) or title


def plot_report(fr: FileReport, path: str | os.PathLike[str]) -> None:
    """Write a two-panel PNG (``passk report --plot``): :func:`report_figure`."""
    fig = report_figure(fr)  # says which extra to install when matplotlib is missing
    import matplotlib.pyplot as plt

    fig.savefig(os.fspath(path), dpi=110)
    plt.close(fig)


def report_figure(fr: FileReport) -> Figure:
    """Two panels: pass@k and pass^k over k with intervals; flakiness per task. Every title
    fits its panel (wrapped), inside the figure (constrained layout)."""
    try:
        import matplotlib as mpl

        mpl.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingExtra("--plot needs matplotlib, in the optional extra 'plot': "
                           "pip install 'passk-reliability[plot]'") from None
    cv = fr.curve
    cap = fr.options.get("max_flakiness", 0.2)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2), constrained_layout=True)
    ks = cv.ks
    # Okabe-Ito colours, told apart by marker too: safe for colour-blind readers
    for values, ci, label, color, marker in (
            (cv.pass_at_k, cv.at_ci, "pass@k (at least one of k)", _BLUE, "o"),
            (cv.pass_hat_k, cv.hat_ci, "pass^k (all k)", _VERMILLION, "s")):
        left.plot(ks, values, marker=marker, color=color, label=label)
        left.fill_between(ks, ci[:, 0], ci[:, 1], color=color, alpha=0.18)
    left.set_xlabel("k (runs of the same task)")
    left.set_ylabel("suite mean over tasks")
    left.set_ylim(-0.02, 1.02)
    left.set_xticks(ks if ks.size <= 20 else ks[:: max(1, ks.size // 10)])
    conf = fr.options.get("confidence", 0.95)
    left.set_title(_wrapped(f"suite of {cv.tasks} tasks; shaded: {conf:.0%} interval over "
                            f"tasks ({cv.method})" if cv.method else
                            f"suite of {cv.tasks} tasks (no interval: too few runs)"),
                   fontsize=9)
    left.legend(loc="center right")
    left.grid(alpha=0.3)

    flak = np.nan_to_num(np.array([t.flakiness for t in fr.report.tasks], dtype=float), nan=-1.0)
    ids = [t.task_id for t in fr.report.tasks]
    order = np.argsort(-flak, kind="stable")
    if order.size <= 40:  # few tasks: one named bar each
        shown = flak[order].clip(min=0)
        right.barh(np.arange(order.size), shown,
                   color=[_VERMILLION if f > cap else _GREY for f in shown])
        right.set_yticks(np.arange(order.size), [ids[i] for i in order], fontsize=7)
        right.invert_yaxis()
        right.axvline(cap, color="black", ls="--", lw=1, label=f"cap {cap:g}")
        right.set_xlim(0, 1)
        right.set_xlabel("flakiness 4·p̂·(1−p̂)")
        right.set_title("flakiness per task (above the cap in vermillion)", fontsize=9)
    else:  # many tasks: the sorted profile
        right.plot(np.arange(order.size), flak[order].clip(min=0), color=_VERMILLION)
        right.axhline(cap, color="black", ls="--", lw=1, label=f"cap {cap:g}")
        right.set_ylim(0, 1.02)
        right.set_xlabel("tasks, flakiest first")
        right.set_ylabel("flakiness 4·p̂·(1−p̂)")
        right.set_title(f"flakiness of {order.size} tasks, sorted", fontsize=9)
    # the bars run flakiest first from the top: the legend sits where they are shortest
    right.legend(loc="lower right" if order.size <= 40 else "upper right")
    return fig


#: The task classes' colours (Okabe-Ito) and markers, in the order a legend lists them.
_CLASS_STYLE = {"flaky": (_VERMILLION, "s"), "stable-fail": ("#000000", "^"),
                "stable-pass": (_BLUE, "o")}


def plot_task_classes(report: FileReport | SuiteReport, *,
                      cap: float | None = None) -> Figure:
    """Tasks by pass rate, coloured by class, beside the flakiness curve and the gate's cap.

    Left: how many tasks passed each share :math:`\\hat p = c/n` of their runs,
    one bar per distinct :math:`\\hat p`, coloured by the task's class
    (``stable-pass``, ``stable-fail``, ``flaky``). Right: the chapter's
    flakiness :math:`4\\hat p(1-\\hat p)` over :math:`\\hat p \\in [0, 1]`, each
    observed :math:`\\hat p` marked in its class's colour, and the gate's cap
    as a dashed line: a task above it fails the gate's second condition.
    Colours are Okabe-Ito, and markers differ by class too.

    Parameters
    ----------
    report : FileReport or SuiteReport
        What :func:`passk.analysis.report.build_report` or
        :func:`passk.stability.suite_report` returns.
    cap : float, optional
        The flakiness cap drawn; default the report's own (``max_flakiness``
        of a FileReport), else 0.2.

    Returns
    -------
    matplotlib.figure.Figure
        Two axes; the caller shows or saves it (pyplot's current backend is kept).

    Raises
    ------
    ValueError
        When ``cap`` is outside [0, 1].
    MissingExtra
        When matplotlib is not installed.

    Notes
    -----
    Tasks without runs (class ``no-evidence``) have no :math:`\\hat p`; they are
    left out, and the left panel's title says how many.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from passk.stability import suite_report
    >>> fig = plot_task_classes(suite_report(["a", "b", "c"], [4, 2, 4], [4, 4, 4], k=4))
    >>> [int(bar.get_height()) for bar in fig.axes[0].patches]
    [1, 2]
    >>> plt.close(fig)
    """
    plt = _pyplot("plot_task_classes")
    from matplotlib.patches import Patch

    from passk.stability import SuiteReport

    suite = report if isinstance(report, SuiteReport) else report.report
    if cap is None:
        cap = getattr(report, "options", {}).get("max_flakiness", 0.2)
    if not 0 <= cap <= 1:
        raise ValueError(f"cap ({cap!r}) must lie in [0, 1]")
    tasks = [t for t in suite.tasks if t.runs > 0]
    unseen = len(suite.tasks) - len(tasks)
    rates = np.array([t.successes / t.runs for t in tasks], dtype=float)
    values, index, counts = np.unique(rates, return_index=True, return_counts=True)
    classes = [tasks[i].cls for i in index]  # the class is a function of p̂
    runs = {t.runs for t in tasks}
    if len(runs) == 1:
        n = runs.pop()
        labels = [f"{round(v * n)}/{n}" for v in values]
    else:
        labels = [f"{v:.2f}" for v in values]
    fig: Figure
    fig, (left, right) = plt.subplots(1, 2, figsize=(7.5, 3.4), constrained_layout=True)
    small = book_points(fig)   # 9 pt on the book's page
    width = 0.8 * (np.diff(values).min() if values.size > 1 else 1.0)
    bars = left.bar(values, counts, width=width, edgecolor="white",
                    color=[_CLASS_STYLE[c][0] for c in classes])
    left.bar_label(bars, padding=2, fontsize=small)
    left.set_xticks(values, labels)
    left.set_xlabel("pass rate p̂ = c/n (runs passed)")
    left.set_ylabel("tasks")
    # room above the bars for the legend (its three rows take the top 30 %)
    left.set_ylim(0, counts.max(initial=1) * 1.6)
    left.yaxis.get_major_locator().set_params(integer=True)   # counts of tasks
    left.set_title(f"{len(tasks)} tasks by pass rate" +
                   (f" ({unseen} without runs not shown)" if unseen else ""), fontsize=10)
    shown = [c for c in _CLASS_STYLE if c in classes]
    left.legend([Patch(color=_CLASS_STYLE[c][0]) for c in shown], shown, fontsize=small,
                loc="upper right")

    p = np.linspace(0, 1, 201)
    right.plot(p, 4 * p * (1 - p), color=_GREY, lw=1.5)
    right.axhline(cap, color="black", ls="--", lw=1)
    right.text(0.5, cap + 0.02, f"the gate's cap, {cap:g}", ha="center", va="bottom",
               fontsize=small)
    for c in shown:
        at = values[[k == c for k in classes]]
        colour, marker = _CLASS_STYLE[c]
        right.scatter(at, 4 * at * (1 - at), color=colour, marker=marker, s=60, zorder=3,
                      clip_on=False, label=c)
    right.set_xlim(-0.03, 1.03)
    right.set_ylim(0, 1.08)
    right.set_xlabel("pass rate p̂")
    right.set_ylabel("flakiness 4p̂(1−p̂)")
    right.set_title("flakiness at each observed pass rate", fontsize=10)
    fit_text(fig, small)
    return fig


def _root_figure(ax: Axes) -> Figure:
    """The figure ``ax`` is drawn in (the root one, when ``ax`` is in a subfigure)."""
    owner = ax.get_figure(root=True)
    if owner is None:
        raise ValueError("ax belongs to no figure")
    return owner


def _pyplot(what: str) -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingExtra(f"{what} needs matplotlib, in the optional extra 'plot': "
                           "pip install 'passk-reliability[plot]'") from None
    return plt


def plot_curves(p: float, k_max: int = 8, *, ax: Axes | None = None) -> Figure:
    """pass@k and pass^k of one task over k = 1..k_max, and where pass^k drops below 1/2.

    Draws the closed forms :func:`passk.pass_at_k` and :func:`passk.pass_hat_k`
    for a single-run success rate ``p``, a dotted line at one half, and a
    dashed vertical line at the first :math:`k` with :math:`p^k < 1/2` when
    that :math:`k` is at most ``k_max``. Colours are Okabe-Ito (blue for
    pass@k, vermillion for pass^k) and the markers differ too.

    Parameters
    ----------
    p : float
        Single-run success rate, in [0, 1].
    k_max : int, default 8
        The largest k drawn, at least 1.
    ax : matplotlib.axes.Axes, optional
        Where to draw; default a new 7 x 4 inch figure.

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn on; the caller shows or saves it.

    Raises
    ------
    ValueError
        When ``p`` is not in [0, 1] or ``k_max`` is not a whole number >= 1.
    MissingExtra
        When matplotlib is not installed.

    Notes
    -----
    With independent runs, :math:`\\mathrm{pass}@k = 1 - (1-p)^k` and
    :math:`\\mathrm{pass}^k = p^k`; the first :math:`k` with :math:`p^k < 1/2`
    is :math:`\\lfloor \\ln 2 / (-\\ln p) \\rfloor + 1` for :math:`0 < p < 1`.

    References
    ----------
    .. [1] M. Chen et al., "Evaluating large language models trained on code",
       arXiv:2107.03374, 2021 (pass@k).
    .. [2] S. Yao et al., "tau-bench: a benchmark for tool-agent-user interaction
       in real-world domains", arXiv:2406.12045, 2024 (pass^k).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig = plot_curves(0.9, 8)
    >>> at, hat = fig.axes[0].get_lines()[:2]
    >>> [round(float(y), 4) for y in hat.get_ydata()[:3]]
    [0.9, 0.81, 0.729]
    >>> [float(x) for x in fig.axes[0].get_lines()[-1].get_xdata()]  # 0.9**7 < 1/2
    [7.0, 7.0]
    >>> plt.close(fig)
    """
    plt = _pyplot("plot_curves")
    from passk.metrics import pass_at_k, pass_hat_k

    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0 <= p <= 1:
        raise ValueError(f"p ({p!r}) must be a success rate in [0, 1]")
    if isinstance(k_max, bool) or not isinstance(k_max, (int, np.integer)) or k_max < 1:
        raise ValueError(f"k_max ({k_max!r}) must be a whole number of runs, at least 1")
    k = np.arange(1, int(k_max) + 1)
    at, hat = pass_at_k(float(p), k), pass_hat_k(float(p), k)
    fig: Figure
    if ax is None:
        fig, ax = plt.subplots(figsize=(7, 4))
    else:
        fig = _root_figure(ax)
    ax.plot(k, at, marker="o", ms=4, color=_BLUE, label=r"pass@$k$ (at least one)")
    ax.plot(k, hat, marker="s", ms=4, color=_VERMILLION, label=r"pass$^k$ (all $k$)")
    ax.axhline(0.5, color="0.5", lw=1, ls=":")
    below = np.flatnonzero(hat < 0.5)
    if below.size:
        first = int(k[below[0]])
        ax.axvline(first, color=_VERMILLION, lw=1, ls="--",
                   label=rf"pass$^k$ < 0.5 from $k$ = {first}")
    ax.set_xlabel(r"$k$ (independent runs of the same task)")
    ax.set_ylabel("probability")
    ax.set_title(rf"pass@$k$ and pass$^k$ at $p$ = {float(p):.2f}")
    ax.set_xlim(0.5, k_max + 0.5)
    ax.set_ylim(0, 1.05)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower left", frameon=False)
    fit_text(ax)
    fig.tight_layout()
    return fig


def plot_run_strip(outcomes: Any, *, p: float | Fraction | None = None,
                   label: str | None = None,
                   names: tuple[str, str] = ("pass", "fail")) -> Figure:
    """Runs of one task in order: each as a coloured bar, and the running pass rate.

    Top: one bar per run, blue when it passed and vermillion when it failed.
    Bottom: the pass rate over the runs so far, :math:`\\sum_{j \\le i} x_j / i`,
    with the task's true success rate ``p`` as a dashed line when given.

    Parameters
    ----------
    outcomes : array_like of bool
        The runs' outcomes in run order (``RepeatRun.outcomes``); 0 and 1 are
        read as failure and pass.
    p : float or fractions.Fraction, optional
        A reference success rate in [0, 1], drawn dashed; a Fraction is
        labelled as a fraction (``5/6``), a float to three decimals.
    label : str, optional
        What was run, for the title (``"the payment-alert task"``).
    names : (str, str), default ('pass', 'fail')
        What a pass and a failure were, for the title (``("escalated",
        "restarted")``).

    Returns
    -------
    matplotlib.figure.Figure
        Two axes, strip above rate; the caller shows or saves it.

    Raises
    ------
    ValueError
        When ``outcomes`` is empty, not one-dimensional or holds values other
        than pass and fail, or ``p`` is outside [0, 1].
    MissingExtra
        When matplotlib is not installed.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig = plot_run_strip([True, True, False, True], p=Fraction(5, 6))
    >>> [float(y) for y in fig.axes[1].get_lines()[0].get_ydata()]
    [1.0, 1.0, 0.6666666666666666, 0.75]
    >>> fig.axes[1].get_legend().get_texts()[1].get_text()
    'p = 5/6'
    >>> plt.close(fig)
    """
    plt = _pyplot("plot_run_strip")
    raw = np.asarray(outcomes)
    if raw.ndim != 1 or raw.size == 0:
        raise ValueError(f"outcomes (shape {raw.shape}) must be a non-empty sequence of runs")
    numeric = raw.dtype.kind in "iuf"
    if raw.dtype != bool and not (numeric and np.isin(raw, (0, 1)).all()):
        bad = (raw[~np.isin(raw, (0, 1))][0] if numeric else raw[0]).item()
        raise ValueError(f"outcomes must be pass/fail (bool or 0/1), not {bad!r}")
    ok = raw.astype(bool)
    if p is not None and not 0 <= p <= 1:
        raise ValueError(f"p ({p!r}) must be a success rate in [0, 1]")
    runs = np.arange(1, ok.size + 1)
    fig: Figure
    fig, (strip, rate) = plt.subplots(2, 1, figsize=(7, 4), sharex=True,
                                      gridspec_kw={"height_ratios": [1, 3]})
    strip.bar(runs, np.ones(ok.size), width=1.0, color=np.where(ok, _BLUE, _VERMILLION))
    strip.set_yticks([])
    strip.set_ylabel("outcome")
    what = f"{ok.size} runs" + (f" of {label}" if label else "")
    strip.set_title(f"{what} (blue: {names[0]}, vermillion: {names[1]})", fontsize=10)
    rate.plot(runs, np.cumsum(ok) / runs, color=_BLUE, label="running pass rate")
    if p is not None:
        shown = str(p) if isinstance(p, Fraction) else f"{float(p):.3f}"
        rate.axhline(float(p), color="black", ls="--", lw=1, label=f"p = {shown}")
    rate.set_ylim(0, 1.05)
    rate.set_xlim(0.5, ok.size + 0.5)
    rate.set_xlabel("run number")
    rate.set_ylabel("pass rate (fraction of runs)")
    rate.legend(loc="lower right")
    fit_text(fig)
    fig.tight_layout()
    return fig


def plot_gate(report: FileReport | SuiteReport, *, ax: Axes | None = None,
              title: str | None = None) -> Figure:
    """The dual gate on one suite: each task's pass^k against its flakiness.

    One dot per task at :math:`(4\\hat p(1-\\hat p),\\ \\widehat{\\mathrm{pass}^k})`.
    The gate's two conditions are drawn where they apply: the flakiness cap
    as a dashed vertical line with the region beyond it shaded (any single
    task there blocks the suite), and the bar as a dotted horizontal line
    beside the suite mean (solid), because the bar applies to the mean over
    tasks, not to each task. Tasks that land on the same point share one
    label. The title ends with the gate's verdict.

    Parameters
    ----------
    report : FileReport or SuiteReport
        What :func:`passk.evaluate_suite` or :func:`passk.analysis.report.build_report`
        returns (judged: its ``gate`` is the judge's verdict); the bar and the cap
        drawn are its gate's own (``report.gate.bar``, ``report.gate.cap``).
    ax : matplotlib.axes.Axes, optional
        Where to draw; default a new 4.5 x 4 inch figure.
    title : str, optional
        Put before the verdict, e.g. ``"before the fix"``.

    Returns
    -------
    matplotlib.figure.Figure
        The figure holding ``ax``; the caller shows or saves it.

    Raises
    ------
    MissingExtra
        When matplotlib is not installed.

    Notes
    -----
    A task whose :math:`\\mathrm{pass}^k` is not estimable (fewer runs than
    :math:`k`, or none) has no dot; its reason is in ``report.gate.reasons``.
    The mean line is drawn only when the gate has an overall figure.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from passk.analysis.report import build_report
    >>> from passk.results.counts import Run, results_from_runs
    >>> runs = [Run("a", i < 10, i) for i in range(12)] + [Run("b", True, i) for i in range(5)]
    >>> fig = plot_gate(build_report(results_from_runs(runs), k=5), title="demo")
    >>> fig.axes[0].get_title()
    'demo: BLOCKED'
    >>> fig.axes[0].collections[0].get_offsets().round(3).tolist()
    [[0.556, 0.318], [0.0, 1.0]]
    >>> plt.close(fig)
    """
    plt = _pyplot("plot_gate")
    from passk.stability import SuiteReport

    suite = report if isinstance(report, SuiteReport) else report.report
    gate = suite.gate
    if gate is None:
        raise ValueError("the report has no verdict (suite_report only scores): judge it "
                         "first, e.g. with passk.analysis.report.build_report")
    fig: Figure
    if ax is None:
        fig, ax = plt.subplots(figsize=(4.5, 4), constrained_layout=True)
    else:
        owner = ax.get_figure(root=True)
        if owner is None:
            raise ValueError("ax belongs to no figure")
        fig = owner
    flak = np.array([t.flakiness for t in suite.tasks], dtype=float)
    hat = np.array([t.pass_hat_k for t in suite.tasks], dtype=float)
    shown = np.flatnonzero(~(np.isnan(flak) | np.isnan(hat)))
    small = book_points(fig)   # 9 pt on the book's page, whatever the figure's width
    ax.axvspan(gate.cap, 1.05, color="0.88", zorder=0)
    ax.axvline(gate.cap, color="0.3", linestyle="--", linewidth=1)
    ax.axhline(gate.bar, color="0.3", linestyle=":", linewidth=1)
    ax.text(gate.cap + 0.02, 0.0, f"flakiness cap {gate.cap:g}", fontsize=small, color="0.2")
    ax.text(0.98, gate.bar - 0.03, f"bar {gate.bar:g} (on the mean)", fontsize=small,
            color="0.2", ha="right", va="top")
    if not np.isnan(gate.overall):
        ax.axhline(gate.overall, color=_VERMILLION, linewidth=1.5)
        ax.text(0.98, gate.overall + 0.02, f"suite mean {gate.overall:.3f}", fontsize=small,
                color=_VERMILLION, ha="right", va="bottom")
    ax.scatter(flak[shown], hat[shown], s=70, color=_BLUE, edgecolor="black", zorder=3,
               clip_on=False)
    at: dict[tuple[float, float], list[str]] = {}
    for i in shown:
        at.setdefault((round(flak[i], 3), round(hat[i], 3)), []).append(suite.tasks[i].task_id)
    for (x, y), names in at.items():
        ax.annotate("\n".join(names), (x, y), xytext=(8, -6 - 1.2 * small * len(names)),
                    textcoords="offset points", fontsize=small)
    verdict = "PASSED" if gate.passed else "BLOCKED"
    ax.set_title(f"{title}: {verdict}" if title else verdict, fontsize=max(10, small))
    ax.set_xlim(-0.05, 1.05)
    ax.set_ylim(-0.05, 1.1)
    ax.set_xlabel("flakiness 4p̂(1−p̂)\n(0 = repeatable, 1 = coin flip)")
    ax.set_ylabel(f"estimated pass$^{{{suite.k}}}$ per task")
    fit_text(ax, small)
    return fig


def plot_attribution(task: Any, *, labels: dict[str, str] | None = None,
                     threshold: float | None = None, ax: Axes | None = None) -> Figure:
    """One flaky task's flakiness under the baseline and under each variant.

    The controlled comparison of :func:`passk.run.attribute.attribute_variants`, drawn:
    one bar for the baseline and one per variant (the baseline with one variable
    changed, on the same seeds), each labelled with the runs it passed, and the class
    rule's threshold as a dashed line. A variable that explains the flakiness brings
    its bar under the line. Bars differ by hatching as well as colour.

    Parameters
    ----------
    task : TaskAttribution
        One task of an :class:`~passk.run.attribute.Attribution` (its ``tasks``): its
        ``variants`` each hold ``variable``, ``value``, ``before`` and ``after``
        (``successes``, ``runs``, ``flakiness``).
    labels : dict, optional
        A label per variable name (and ``"baseline"``); default ``name = value``.
    threshold : float, optional
        The flakiness above which a task is flaky; default
        :data:`passk.stability.CLASS_THRESHOLD`.
    ax : matplotlib.axes.Axes, optional
        Where to draw; default a new 7 x 3.6 inch figure.

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn on; the caller shows or saves it.

    Raises
    ------
    ValueError
        When ``task`` has no variants.
    MissingExtra
        When matplotlib is not installed.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from passk import OnCallSimulator, demo_tasks
    >>> from passk.run.attribute import attribute_variants
    >>> found = attribute_variants(OnCallSimulator(), demo_tasks(),
    ...                            [("temperature", 0), ("deterministic_sort", True)],
    ...                            runs=30, seed=1)
    >>> fig = plot_attribution(found.tasks[0])
    >>> [round(float(b.get_height()), 3) for b in fig.axes[0].patches]
    [0.782, 0.782, 0.0]
    >>> [t.get_text() for t in fig.axes[0].get_xticklabels()]
    ['baseline', 'temperature = 0', 'deterministic_sort = True']
    >>> plt.close(fig)
    """
    plt = _pyplot("plot_attribution")
    from passk.stability import CLASS_THRESHOLD

    variants = list(task.variants)
    if not variants:
        raise ValueError("the task has no variants to draw")
    names = dict(labels or {})
    cut = CLASS_THRESHOLD if threshold is None else float(threshold)
    first = variants[0].before
    rows = [(names.get("baseline", "baseline"), first)] + [
        (names.get(v.variable, f"{v.variable} = {v.value!r}".replace("'", "")), v.after)
        for v in variants]
    fig: Figure
    if ax is None:
        fig, ax = plt.subplots(figsize=(7, 3.6))
    else:
        fig = _root_figure(ax)
    small = book_points(fig)
    x = np.arange(len(rows))
    heights = [float(o.flakiness) for _, o in rows]
    colours = [_VERMILLION if h > cut else _BLUE for h in heights]
    hatches = ["//" if h > cut else "" for h in heights]
    for i, (h, colour, hatch) in enumerate(zip(heights, colours, hatches)):
        ax.bar(x[i], h, 0.55, color=colour, hatch=hatch, edgecolor="white")
    for i, (_, o) in enumerate(rows):
        ax.annotate(f"{o.successes}/{o.runs} passed", (x[i], heights[i]), xytext=(0, 4),
                    textcoords="offset points", ha="center", fontsize=small)
    ax.axhline(cut, color="0.4", ls="--", lw=1, label=f"flaky above {cut:g}")
    ax.set_xticks(x, [label for label, _ in rows])
    ax.set_ylim(0, 1.1)
    ax.set_ylabel("flakiness (0 = deterministic, 1 = coin)")
    ax.set_title(f"{task.task_id}: one variable changed at a time "
                 f"({first.runs} paired runs each)")
    ax.legend(frameon=False, loc="upper right")
    fit_text(ax, small)
    fig.tight_layout()
    return fig


def plot_coverage(n: int, k: int, p: Any = None, *,
                  methods: Sequence[str] = ("exact", "bootstrap"),
                  confidence: float = 0.95, ax: Axes | None = None) -> Figure:
    """How often each per-task interval for pass^k covers the truth, across p.

    One curve per method of :func:`passk.pass_hat_k_ci`: its exact coverage
    of :math:`p^k` from :func:`passk.stats.coverage.exact_coverage`, summed over the
    binomial (no simulation), against the true single-run success rate p.
    A dotted line marks the level the interval claims. A method that keeps its
    promise stays on or above it at every p. Curves differ by colour
    (Okabe-Ito), line style and a marker every few points.

    Parameters
    ----------
    n : int
        Runs per evaluation, at least 1.
    k : int
        Runs that must all succeed, at least 1.
    p : array_like of float, optional
        Success rates to draw, in [0, 1]; default 500 points from 0.5 to 0.999.
    methods : sequence of str, default ('exact', 'bootstrap')
        Keys of :data:`passk.metrics.CI_METHODS`; the legend prints their labels.
    confidence : float, default 0.95
        The level the intervals are computed at, drawn as the claim.
    ax : matplotlib.axes.Axes, optional
        Where to draw; default a new 7 x 4 inch figure.

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn on; the caller shows or saves it.

    Raises
    ------
    ValueError
        When a method is unknown, ``n`` or ``k`` is not a whole number of at
        least 1, a p is outside [0, 1] or ``confidence`` outside (0, 1).
    MissingExtra
        When matplotlib is not installed.

    Notes
    -----
    The coverage at p is
    :math:`\\sum_{c=0}^{n} \\binom{n}{c} p^c (1-p)^{n-c}\\,
    \\mathbf{1}[L(c) \\le p^k \\le U(c)]`; it jumps wherever :math:`p^k`
    crosses an interval's end, hence the saw teeth.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig = plot_coverage(12, 5, [0.9, 0.95, 0.99, 0.995])
    >>> exact, bootstrap, claim = fig.axes[0].get_lines()
    >>> [round(float(y), 2) for y in bootstrap.get_ydata()]
    [0.69, 0.46, 0.11, 0.06]
    >>> [t.get_text() for t in fig.axes[0].get_legend().get_texts()][:2]
    ['exact Clopper–Pearson', 'percentile bootstrap']
    >>> plt.close(fig)
    """
    plt = _pyplot("plot_coverage")
    from passk.metrics import CI_METHODS
    from passk.stats.coverage import exact_coverage

    for method in methods:
        if method not in CI_METHODS:
            raise ValueError(f"method ({method!r}) must be one of {sorted(CI_METHODS)}")
    grid = np.linspace(0.5, 0.999, 500) if p is None else np.atleast_1d(np.asarray(p, float))
    curves = [np.atleast_1d(exact_coverage(n, k, grid, method=method, confidence=confidence))
              for method in methods]  # validates n, k, p and confidence
    fig: Figure
    if ax is None:
        fig, ax = plt.subplots(figsize=(7, 4))
    else:
        fig = _root_figure(ax)
    styles = [(_BLUE, "-", "o"), (_VERMILLION, "--", "s"), ("#009E73", ":", "^"),
              ("#CC79A7", "-.", "D")]
    every = max(1, grid.size // 12)
    for i, (method, curve) in enumerate(zip(methods, curves)):
        colour, line, marker = styles[i % len(styles)]
        ax.plot(grid, curve, color=colour, ls=line, lw=1.6, marker=marker, ms=4,
                markevery=every, label=CI_METHODS[method])
    ax.axhline(confidence, color="black", lw=1, ls=":",
               label=f"claimed: {confidence:.0%}")
    ax.set_xlabel("true single-run success rate $p$")
    ax.set_ylabel(f"coverage of the true pass$^{{{k}}}$")
    ax.set_title(f"Coverage of {confidence:.0%} intervals for pass$^{{{k}}}$ "
                 f"from $n$ = {n} runs")
    ax.set_xlim(float(grid.min()), float(grid.max()))
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower left", frameon=False)
    fit_text(ax)
    fig.tight_layout()
    return fig


#: Okabe-Ito colours, line styles and markers for one series each (plot_power_grid).
_SERIES = ((_BLUE, "-", "o"), (_VERMILLION, "--", "s"), ("#009E73", ":", "^"),
           ("#CC79A7", "-.", "D"), ("#E69F00", (0, (5, 1)), "v"), ("#000000", (0, (1, 1)), "P"))


def plot_power_grid(plan: ComparisonPlan, *, mark: Sequence[tuple[int, int]] = (),
                    axes: Sequence[Axes] | None = None) -> Figure:
    """A comparison's power over tasks × runs per task: more tasks, or more runs?

    Draws the grid of :func:`passk.stats.power.plan_comparison`, one line per
    number of runs per task. Left: the power to show the plan's drop
    (``plan.power``) against the number of tasks. Right: the same power
    against what a design costs, the agent runs each version needs (tasks ×
    runs per task), so that designs of equal cost stand one above the other.
    A dotted line marks the target power. A plan made without a drop
    (``delta=None``) has no power grid: both panels then draw the smallest
    drop found with the target power (``plan.detectable``), and the dotted
    line is left out. Lines differ by colour (Okabe-Ito), style and marker.

    Parameters
    ----------
    plan : ComparisonPlan
        What :func:`passk.stats.power.plan_comparison` returns.
    mark : sequence of (int, int), optional
        Designs to point out, as (tasks, runs per task), each on the plan's
        grid: circled in both panels and labelled "T × n".
    axes : pair of matplotlib.axes.Axes, optional
        Where to draw the two panels; default a new 9 x 3.8 inch figure.

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn on; the caller shows or saves it.

    Raises
    ------
    ValueError
        When a marked design is not on the plan's grid, or ``axes`` is not two axes.
    MissingExtra
        When matplotlib is not installed.

    Notes
    -----
    The plan's standard error of the mean paired difference is
    :math:`\\sqrt{(\\omega^2 + 2\\overline{V_n})/T}`: more runs per task
    shrink only the trial noise :math:`\\overline{V_n}`, more tasks shrink
    both it and the spread :math:`\\omega^2` of the true change across tasks.
    So the lines level off as runs grow, and on the right, at equal cost, the
    design with more tasks and fewer runs usually lies higher.

    References
    ----------
    .. [1] E. Miller, "Adding Error Bars to Evals", arXiv:2411.00640, 2024.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from passk.stats.power import plan_comparison
    >>> plan = plan_comparison(4, delta=0.05, tasks=(50, 100), runs=(4, 8))
    >>> fig = plot_power_grid(plan, mark=[(50, 8), (100, 4)])
    >>> left, right = fig.axes
    >>> [round(float(y), 2) for y in left.get_lines()[0].get_ydata()]  # 4 runs, no pilot: worst
    [0.0, 0.0]
    >>> [float(x) for x in right.get_lines()[1].get_xdata()]  # 8 runs: tasks × 8
    [400.0, 800.0]
    >>> [t.get_text() for t in right.texts]
    ['50 × 8', '100 × 4']
    >>> plt.close(fig)
    """
    plt = _pyplot("plot_power_grid")
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    tasks = np.asarray(plan.tasks, dtype=float)
    runs = tuple(int(r) for r in plan.runs)
    values = plan.power if plan.power is not None else plan.detectable
    where = []
    for design in mark:
        t, n = design
        if t not in plan.tasks or n not in runs:
            raise ValueError(f"mark {design!r} is not on the plan's grid: tasks {plan.tasks}, "
                             f"runs {plan.runs}")
        where.append((plan.tasks.index(t), runs.index(n)))
    fig: Figure
    if axes is None:
        fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.8), sharey=True, layout="constrained")
    elif len(axes) != 2:
        raise ValueError(f"axes ({len(axes)} given) must be two axes, left and right")
    else:
        fig = _root_figure(axes[0])
    left, right = axes
    for j, n in enumerate(runs):
        colour, style, marker = _SERIES[j % len(_SERIES)]
        for ax, x in ((left, tasks), (right, tasks * n)):
            ax.plot(x, values[:, j], color=colour, ls=style, marker=marker, ms=4, lw=1.6,
                    label=f"{n} runs per task")
    for ax, cost in ((left, False), (right, True)):
        low, high = (tasks.min() * min(runs), tasks.max() * max(runs)) if cost else (
            tasks.min(), tasks.max())
        # ticks at 1, 2, 5 in each decade; 1 and 3 when the axis spans many decades
        subs = (1.0, 2.0, 5.0) if high / low <= 10**2.5 else (1.0, 3.0)
        for i, j in where:
            x = tasks[i] * runs[j] if cost else tasks[i]
            ax.plot([x], [values[i, j]], marker="o", ms=13, mfc="none", mec="black",
                    ls="none", label="_design")
            # each label right of its circle; designs that share an x (equal cost, on the
            # right) and stand close are pushed apart, the higher one up, so that no two
            # labels overlap; a label at the bottom stays clear of the tick labels
            others = [o for o in where if o != (i, j) and
                      float(tasks[o[0]] * runs[o[1]] if cost else tasks[o[0]]) == x]
            close = [o for o in others if abs(values[o] - values[i, j]) < 0.06]
            bottom = values[i, j] < 0.03
            if any(values[o] > values[i, j] for o in close):  # the lower of a close pair
                dy = 2.0 if bottom else -5.0
            else:
                dy = 11.0 if close else 3.0 if bottom else 0.0
            ax.annotate(f"{plan.tasks[i]} × {runs[j]}", (x, values[i, j]),
                        xytext=(11, dy), va="center",
                        textcoords="offset points", fontsize=8)
        if plan.power is not None:
            ax.axhline(plan.target_power, color="0.3", lw=1, ls=":",
                       label=f"target power {plan.target_power:g}")
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(subs=subs))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.grid(alpha=0.3)
    left.set_xlabel("tasks")
    right.set_xlabel("agent runs per version (tasks × runs per task)")
    k = plan.k
    if plan.power is not None:
        left.set_ylabel(f"power to show a drop of {plan.delta:g} in pass$^{{{k}}}$")
        left.set_ylim(0, 1.02)
        right.set_ylim(0, 1.02)
    else:
        left.set_ylabel(f"drop in pass$^{{{k}}}$ found with power {plan.target_power:g}")
    left.set_title("against the number of tasks", fontsize=10)
    right.set_title("against the cost", fontsize=10)
    left.legend(loc="upper left", frameon=False, fontsize=8)
    fit_text(fig)
    return fig
