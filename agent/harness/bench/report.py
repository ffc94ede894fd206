"""A run's report and a comparison of runs: one self-contained HTML page each, with the Pareto plot of pass
rate against median tokens per task as a PNG beside it and inside it."""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from keel.agent.harness.bench.results import BenchSummary, TaskResult

if TYPE_CHECKING:  # matplotlib is the `bench` extra, loaded only to draw
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

PLOT = "pareto.png"
NO_PLOT = "No plot: matplotlib is not installed (pip install 'keel[bench]')."


def pareto_front(points: Sequence[tuple[float, float]]) -> list[int]:
    """Indices of the points no other point beats (fewer or equal tokens and a higher or equal pass rate,
    one of them strictly), by tokens."""
    front = []
    for i, (tokens, rate) in enumerate(points):
        beaten = any(
            other_tokens <= tokens
            and other_rate >= rate
            and (other_tokens, other_rate) != (tokens, rate)
            for j, (other_tokens, other_rate) in enumerate(points)
            if j != i
        )
        if not beaten:
            front.append(i)
    return sorted(front, key=lambda i: points[i])


LABEL_WIDTH = 40  # a run's name in the legend, cut beyond this


def _short(label: str) -> str:
    return label if len(label) <= LABEL_WIDTH else label[: LABEL_WIDTH - 1] + "…"


def _percent(rate: float) -> str:
    return f"{rate:.1f}".rstrip("0").rstrip(".") + "%"


def _token_axis(axes: Axes, most: float) -> None:
    """Tokens from 0 with room on both sides, so no point sits on the frame; whole numbers with commas."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    if most <= 0:
        axes.set_xlim(-1, 1)
        axes.set_xticks([0])
    else:
        axes.set_xlim(-0.05 * most, 1.08 * most)
        axes.xaxis.set_major_locator(MaxNLocator(nbins=6, integer=True, min_n_ticks=2))
    axes.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:,.0f}"))


def pareto_figure(summaries: Sequence[BenchSummary]) -> Figure:
    """The plot: each run a point (median tokens per task, pass@1) named in a legend beside the axes, where
    it can cover nothing; the Pareto front joined; with one run, its tasks as faint points too."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(9, 4.8), dpi=120, layout="constrained")
    axes = figure.add_subplot()
    tokens = [summary.median_tokens for summary in summaries]
    if len(summaries) == 1:
        tasks = [task for task in summaries[0].tasks if task.judged]
        tokens += [task.median_tokens for task in tasks]
        axes.scatter(
            [task.median_tokens for task in tasks],
            [100 * task.pass_at_1 for task in tasks],
            s=14, color="#9bb7d4", alpha=0.7, label="its tasks",
        )  # fmt: skip
    markers = "osD^vP*X"
    points = [(summary.median_tokens, 100 * summary.pass_at_1) for summary in summaries]
    for n, ((x, rate), summary) in enumerate(zip(points, summaries, strict=True)):
        axes.scatter(
            [x], [rate], s=60, zorder=3, marker=markers[n // 10 % len(markers)],
            label=f"{_short(summary.label)}: {_percent(rate)}, {x:,.0f} tokens",
        )  # fmt: skip
    front = pareto_front(points)
    if len(front) > 1:
        axes.plot(
            [points[i][0] for i in front],
            [points[i][1] for i in front],
            "--",
            color="#555",
            lw=1,
            label="Pareto front",
        )
    axes.set_xlabel("median tokens per task")
    axes.set_ylabel("pass@1 (%)")
    axes.set_ylim(-5, 105)
    _token_axis(axes, max(tokens))
    axes.grid(alpha=0.3)
    axes.set_title("pass rate against tokens")
    figure.legend(loc="outside right upper", fontsize=8)
    return figure


def plot_pareto(summaries: Sequence[BenchSummary], path: Path) -> Path | None:
    """The PNG of pareto_figure; None without matplotlib (the `bench` extra)."""
    try:
        import matplotlib  # noqa: F401 -- only to know it is there
    except ImportError:
        return None
    pareto_figure(summaries).savefig(path)
    return path


def _cell(value: object) -> str:
    if isinstance(value, float):
        return f"{value:,.3f}" if value < 10 else f"{value:,.0f}"
    return html.escape(str(value if value is not None else "-"))


def _table(header: list[str], rows: list[list[object]]) -> str:
    head = "".join(f"<th>{html.escape(name)}</th>" for name in header)
    body = "".join("<tr>" + "".join(f"<td>{_cell(v)}</td>" for v in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


STYLE = """body{font:14px system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:1em 0}
td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}td:first-child,th:first-child{text-align:left}
th{background:#f2f2f2}img{max-width:100%}.skip{color:#888}"""


def _page(title: str, plot: Path | None, body: str) -> str:
    if plot is None:
        figure = f"<p class='skip'>{NO_PLOT}</p>"
    else:
        image = base64.b64encode(plot.read_bytes()).decode("ascii")
        figure = f"<img alt='Pareto plot' src='data:image/png;base64,{image}'>"
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{STYLE}</style></head><body><h1>{html.escape(title)}</h1>{figure}{body}</body></html>"
    )


def _overview(summaries: Sequence[BenchSummary]) -> str:
    header = ["run", "tasks", "pass@1", "pass@k", "k", "mean reward", "median tokens/task",
              "prompt", "completion", "cached", "cost ($)", "turns", "errors", "environment errors",
              "no verdict", "seconds"]  # fmt: skip
    rows: list[list[object]] = [
        [s.label, len(s.tasks) - s.skipped_tasks, s.pass_at_1, s.pass_at_k, s.k, s.mean_reward,
         s.median_tokens, s.prompt_tokens, s.completion_tokens, s.cached_tokens, s.cost,
         round(s.mean_turns, 1), s.errors, s.environment_errors, s.skipped_tasks,
         round(s.wall_seconds)]
        for s in summaries
    ]  # fmt: skip
    return _table(header, rows)


def _note(task: TaskResult) -> str:
    """Why a task has no verdict, for the report's last column."""
    if task.judged:
        return ""
    if task.environment_error:
        return f"environment error: {task.environment_error}"
    return f"skipped: {task.skipped}"


def write_report(out: Path, summary: BenchSummary) -> Path:
    """report.html (and pareto.png) in the run's folder."""
    plot = plot_pareto([summary], out / PLOT)
    header = ["task", "category", "passed", "pass@1", "pass@k", "mean reward", "median tokens",
              "prompt", "completion", "cached", "turns", "seconds", "cost ($)", "note"]  # fmt: skip
    rows: list[list[object]] = [
        [t.id, t.category, f"{t.passed}/{t.judged}", t.pass_at_1, t.pass_at_k, t.mean_reward,
         t.median_tokens, t.prompt_tokens, t.completion_tokens, t.cached_tokens,
         round(t.mean_turns, 1), round(t.mean_seconds, 1), t.cost,
         _note(t)]
        for t in summary.tasks
    ]  # fmt: skip
    body = _overview([summary]) + "<h2>Tasks</h2>" + _table(header, rows)
    report = out / "report.html"
    report.write_text(_page(f"keel bench: {summary.label}", plot, body), encoding="utf-8")
    return report


def format_comparison(summaries: Sequence[BenchSummary]) -> str:
    """The runs side by side, as text."""
    width = max([len("run"), *(len(s.label) for s in summaries)])
    lines = [f"{'run':<{width}}  tasks  pass@1  pass@k  reward  median tokens  cost"]
    for s in summaries:
        cost = "-" if s.cost is None else f"${s.cost:.4f}"
        lines.append(
            f"{s.label:<{width}}  {len(s.tasks) - s.skipped_tasks:>5}  {s.pass_at_1:>6.3f}  {s.pass_at_k:>6.3f}"
            f"  {s.mean_reward:>6.3f}  {s.median_tokens:>13,.0f}  {cost}"
        )
    return "\n".join(lines)


def write_comparison(out: Path, summaries: Sequence[BenchSummary]) -> Path:
    """compare.html and compare.png: every run on one plot and in one table, plus pass@1 per task."""
    plot = plot_pareto(summaries, out / "compare.png")
    ids = list(dict.fromkeys(task.id for s in summaries for task in s.tasks))
    by_run = [{task.id: task for task in s.tasks} for s in summaries]
    rows: list[list[object]] = [
        [
            task_id,
            *(
                run[task_id].pass_at_1 if task_id in run and run[task_id].judged else None
                for run in by_run
            ),
        ]
        for task_id in ids
    ]
    body = (
        _overview(summaries)
        + "<h2>pass@1 per task</h2>"
        + _table(["task", *(s.label for s in summaries)], rows)
    )
    page = out / "compare.html"
    page.write_text(_page("keel bench: comparison", plot, body), encoding="utf-8")
    return page
