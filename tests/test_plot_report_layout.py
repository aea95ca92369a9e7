"""``passk report --plot``: every text of the figure lies inside the image (the left panel's
title, naming a long interval method, used to run past the figure's left edge and be cut),
and no two titles overlap. Checked on the drawn figure's text extents, for a few suites
whose interval methods differ in length, and on the PNG the command writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

from passk import api
from passk.book.plots import _drawn_texts, _wrapped, report_figure
from passk.cli.commands import main


def _file(path: Path, tasks: int, runs: int, flaky: int) -> Path:
    path.write_text("".join(
        json.dumps({"task_id": f"task-{t:03d}", "trial": i,
                    "success": not (t < flaky and i % 3 == 0)}) + "\n"
        for t in range(tasks) for i in range(runs)), encoding="utf-8")
    return path


@pytest.mark.parametrize(("tasks", "runs", "flaky"), [(8, 8, 1), (3, 2, 0), (60, 5, 20),
                                                      (1, 12, 1)])
def test_every_text_lies_inside_the_figure(tmp_path, tasks, runs, flaky):
    (tmp_path / ".git").mkdir()
    path = _file(tmp_path / "runs.jsonl", tasks, runs, flaky)
    fr = api.report(str(path), asked={"k": min(runs, 2)}, cwd=tmp_path)
    fig = report_figure(fr)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    box = fig.bbox
    for text in _drawn_texts(fig):
        e = text.get_window_extent(renderer)
        assert box.x0 - 0.5 <= e.x0 and e.x1 <= box.x1 + 0.5, text.get_text()
        assert box.y0 - 0.5 <= e.y0 and e.y1 <= box.y1 + 0.5, text.get_text()
    left, right = (ax.title.get_window_extent(renderer) for ax in fig.axes[:2])
    assert left.x1 <= right.x0 and "interval over tasks" in fig.axes[0].get_title()
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_the_command_writes_the_png(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    path = _file(tmp_path / "runs.jsonl", 8, 8, 1)
    assert main(["report", str(path), "--k", "2", "--plot", "out.png"]) == 0
    assert (tmp_path / "out.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("width", [20, 40, 62])
def test_a_title_is_wrapped_whole(width):
    title = ("suite of 8 tasks; shaded: 95% interval over tasks (binomial-dominated bound "
             "(Hoeffding–Bentkus) with the exact union, proved, for these tasks)")
    lines = _wrapped(title, width).split("\n")
    assert all(len(line) <= width for line in lines) and " ".join(lines) == title
