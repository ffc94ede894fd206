"""`keel bench compare`'s plot: made by the real command, then its geometry checked: every point inside the
axes and clear of the legend, every name inside the picture."""

from __future__ import annotations

from pathlib import Path

import pytest
from keel_cli import run_keel

from keel.agent.harness.bench.results import (
    BenchRow,
    BenchSummary,
    read_summary,
    summarize,
    write_summary,
)

pytest.importorskip("matplotlib", reason="the plot needs the bench extra (matplotlib)")

LONG = "openai/a-served-model-whose-name-is-much-longer-than-any-plot-has-room-for"


def _run(folder: Path, label: str, results: list[tuple[float, int]]) -> Path:
    """A run's folder as `keel bench` leaves it: summary.json of attempts (reward, tokens), one task each."""
    rows = [
        BenchRow(id=f"task-{n}", attempt=1, status="completed", reward=reward, passed=reward == 1.0,
                 tokens=tokens, model=label)
        for n, (reward, tokens) in enumerate(results)
    ]  # fmt: skip
    folder.mkdir(parents=True)
    write_summary(folder, summarize(rows, 1))
    return folder


def _check_layout(summaries: list[BenchSummary]) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.text import Text

    from keel.agent.harness.bench.report import pareto_figure

    figure = pareto_figure(summaries)
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    renderer = canvas.get_renderer()
    (axes,) = figure.axes
    frame = axes.get_window_extent(renderer)
    for note in axes.texts:  # names written beside points must stay inside the axes
        extent = note.get_window_extent(renderer)
        assert frame.x0 <= extent.x0 and extent.x1 <= frame.x1, (
            f"{note.get_text()} runs past the axes"
        )
        assert frame.y0 <= extent.y0 and extent.y1 <= frame.y1, (
            f"{note.get_text()} runs past the axes"
        )
    legends = [*figure.legends, *([axes.get_legend()] if axes.get_legend() else [])]
    assert legends, "the runs are named in a legend"
    boxes = [legend.get_window_extent(renderer) for legend in legends]
    points = [
        tuple(axes.transData.transform(offset))
        for collection in axes.collections
        for offset in collection.get_offsets()
    ]
    assert len(points) >= len(summaries)
    for x, y in points:
        # inside the frame, with room for the marker (no point half hidden by the axes' edge)
        assert frame.x0 + 4 < x < frame.x1 - 4 and frame.y0 + 4 < y < frame.y1 - 4, (x, y, frame)
        for box in boxes:
            assert not box.contains(x, y), f"the legend covers the point at {(x, y)}"
    page = figure.bbox
    texts: list[Text] = [axes.title, axes.xaxis.label, axes.yaxis.label]
    texts += [text for legend in legends for text in legend.get_texts()]
    for axis in (axes.xaxis, axes.yaxis):
        low, high = sorted(axis.get_view_interval())
        texts += [tick.label1 for tick in axis.get_major_ticks() if low <= tick.get_loc() <= high]
    for text in texts:
        extent = text.get_window_extent(renderer)
        assert page.x0 <= extent.x0 and extent.x1 <= page.x1 + 0.5, text.get_text()
        assert page.y0 <= extent.y0 and extent.y1 <= page.y1 + 0.5, text.get_text()


def test_one_run_compared_keeps_its_point_and_name_visible(tmp_path):
    # one task: the run's point sits at the lower right, where the old legend went
    run = _run(tmp_path / "run", LONG, [(0.0, 5000)])
    result = run_keel("bench", "compare", str(run), "--out", str(tmp_path / "cmp"), cwd=tmp_path,
                      home=tmp_path / "home")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "cmp" / "compare.png").read_bytes()[:4] == b"\x89PNG"
    _check_layout([read_summary(run)])


@pytest.mark.parametrize(
    "runs",
    [
        [("oracle", [(1.0, 0)]), ("nop", [(0.0, 0)])],  # every point at 0 tokens, at 0% and 100%
        [(f"{LONG}-{n}", [(float(n > 1), 5000 + 10000 * n)]) for n in range(4)],
    ],
)
def test_several_runs_keep_their_points_and_names_clear(tmp_path, runs):
    summaries = [
        read_summary(_run(tmp_path / f"run{n}", label, results))
        for n, (label, results) in enumerate(runs)
    ]
    _check_layout(summaries)
