"""The Goodhart run (`runs/run_008`): the proxy and the true goal over training, the peak, and
each style's share at the start and the end."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

import numpy as np

from course.formatting import inline_code, rounded
from course.goodhart import STYLES, GoodhartConfig, simulate
from course.jsonfiles import json_bytes
from course.paths import DATA_DIR
from course.reports.png import figure_png, new_figure, plain, styled
from course.runs import RunFiles, manifest


def summarise(config: GoodhartConfig, result: Mapping[str, Any]) -> dict[str, Any]:
    proxy_curve, true_curve = result["proxy_curve"], result["true_curve"]
    peak = result["peak_step"]
    return {
        "proxy": config.proxy,
        "styles": {style: {"proxy_rate": rounded(result["rates"]["proxy"][s]),
                           "true_rate": rounded(result["rates"]["true"][s]),
                           "initial_probability": rounded(result["policies"][0][s]),
                           "final_probability": rounded(result["policies"][-1][s])}
                   for s, style in enumerate(STYLES)},
        "start": {"proxy": rounded(proxy_curve[0]), "true": rounded(true_curve[0])},
        "peak": {"step": peak, "proxy": rounded(proxy_curve[peak]),
                 "true": rounded(true_curve[peak])},
        "end": {"step": config.steps, "proxy": rounded(proxy_curve[-1]),
                "true": rounded(true_curve[-1])},
        "proxy_kept_rising": bool(proxy_curve[-1] > proxy_curve[peak]),
    }


@styled
def curve_png(config: GoodhartConfig, result: Mapping[str, Any]) -> bytes:
    steps = np.arange(config.steps + 1)
    peak = result["peak_step"]
    fig = new_figure(4.4)
    ax = fig.add_subplot()
    ax.plot(steps, result["proxy_curve"], color="tab:orange", lw=2.2,
            label=f"proxy reward ({plain(config.proxy)}), optimised")
    ax.plot(steps, result["true_curve"], color="tab:blue", lw=2.2,
            label="true goal (strict scorer), only measured")
    ax.axvspan(peak, config.steps, color="tab:red", alpha=0.08)
    ax.axvline(peak, color="tab:red", ls="--", lw=1)
    ax.annotate("divergence:\nreward-hacking regime", xy=(peak, result["true_curve"][peak]),
                xytext=(peak + config.steps * 0.05, 0.12), color="tab:red",
                arrowprops={"arrowstyle": "->", "color": "tab:red"})
    ax.set(xlabel="training step", ylabel="expected reward under the policy", ylim=(0, 1.05),
           xlim=(0, config.steps), title="Goodhart curve: optimising a hackable proxy")
    ax.legend(loc="upper left")
    return figure_png(fig)


def render_readme(config: GoodhartConfig, summary: Mapping[str, Any]) -> str:
    peak, start, end = summary["peak"], summary["start"], summary["end"]
    lines = [
        "# Goodhart's law on a hackable proxy",
        "",
        f"A policy over three completion styles is trained with REINFORCE on the proxy rubric "
        f"{inline_code(config.proxy)} (Loop C on a proxy); the strict scorer is only measured.",
        "",
        "| style | proxy pays | strict pays | P at start | P at end |",
        "| --- | --- | --- | --- | --- |",
    ]
    for style, row in summary["styles"].items():
        lines.append(f"| {inline_code(style)} | {row['proxy_rate']:.3f} | {row['true_rate']:.3f} | "
                     f"{row['initial_probability']:.3f} | {row['final_probability']:.3f} |")
    lines += [
        "",
        f"- Start: proxy {start['proxy']:.3f}, true goal {start['true']:.3f}.",
        f"- The true goal peaks at step {peak['step']}: {peak['true']:.3f} "
        f"(proxy {peak['proxy']:.3f}).",
        f"- End (step {end['step']}): proxy {end['proxy']:.3f}, true goal {end['true']:.3f}.",
        "",
        "Up to the peak, proxy and truth agree: moving away from vague answers helps both. After "
        "it, the proxy keeps rising because `spray` is paid more often than an honest answer, "
        "while the true goal falls: the optimiser is competent, the proxy is wrong.",
        "",
        "![Proxy reward, optimised, and strict reward, measured, over training]"
        "(goodhart_curve.png)",
        "",
        "Reproduce: `course runs regenerate run_008`, or `course goodhart --out DIR --note TEXT`.",
        "",
    ]
    return "\n".join(lines)


def build_run(config: GoodhartConfig, note: str, *, record_git: bool = True) -> RunFiles:
    result = simulate(config)
    summary = summarise(config, result)
    record = {**asdict(config), "problems": str(config.problems.relative_to(DATA_DIR.parent))}
    run_manifest = manifest(kind="goodhart", note=note, config=record,
                            inputs={"problems": config.problems}, seed=config.seed,
                            record_git=record_git)
    return {
        "manifest.json": json_bytes(run_manifest),
        "summary.json": json_bytes(summary),
        "goodhart_curve.png": curve_png(config, result),
        "README.md": render_readme(config, summary).encode("utf-8"),
    }
