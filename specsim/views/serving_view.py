"""The Serving page as data: the speedup over batch x γ, the crossover, the memory limit, and the
frames of a verify pass growing with the batch. Every number comes from ``specsim.serving.roofline``.

``Settings`` names a model pair on hardware (presets of ``specsim.serving``,
optionally split over ``devices`` GPUs) at one context length, α and dtype;
``check`` refuses a setting the roofline cannot cost in one line.

- ``grid``: the speedup at every (batch, γ) for the heatmap, the best γ per
  batch, the crossover batch (none up to ``roofline.CROSSOVER_LIMIT`` is
  None) and the largest batch that fits in memory; the batch axis holds the
  powers of two, the crossover and the batch just before it, and the
  memory limit, so each is a column of its own.
- ``play_frames``: one frame per batch of ``PLAY_BATCHES``: the time the
  plain step, the verify pass and the drafter step would take from their
  bytes alone and from their FLOPs alone (per sequence of the batch), which
  of the two bounds each pass, v, c and the best speedup.
- ``measured``: the tiny GPT's serve-bench result (``specsim gpt
  serve-bench --json``) as points: measured and predicted speedup per batch
  and γ, and both crossovers.

>>> s = Settings("llama-3-8b", "llama-3.2-1b", "h100-sxm", context=128, alpha=0.8)
>>> g = grid(s)
>>> g["crossover"], g["max_batch"], g["batches"][:4], 323 in g["batches"]
(324, 2931, [1, 2, 4, 8], True)
>>> [g["best_gamma"][g["batches"].index(b)] for b in (1, 323, 324)]
[4, 1, 0]
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass

from ..serving import hardware, models, roofline

BATCHES = [2**k for k in range(17)]  # 1 .. 65,536 = roofline.CROSSOVER_LIMIT
GAMMAS = list(range(0, 11))  # 0 is plain decoding
PLAY_BATCHES = sorted({round(2 ** (k / 2)) for k in range(33)})  # 1, 2, 3, 4, 6, 8, 11, ... 65,536
MAX_DEVICES = 8
MAX_CONTEXT = 131072
CPU = "cpu"  # the hardware choice "this machine's CPU" (``measure_cpu``: float32 figures only)


@dataclass(frozen=True)
class Settings:
    """A served pair: presets by name (the hardware may also be a ``Hardware``, e.g. ``measure_cpu()``),
    context length, α, dtype, the drafter's KV window (None: all), GPUs splitting the models."""

    target: str = "llama-3-8b"
    draft: str = "llama-3.2-1b"
    hardware: object = "h100-sxm"
    context: int = 1024
    alpha: float = 0.8
    dtype: str = "bf16"
    draft_kv_window: int | None = None
    devices: int = 1

    @property
    def hw(self) -> hardware.Hardware:
        """The hardware preset, split over ``devices`` (ideal tensor parallelism)."""
        return hardware.tensor_parallel(hardware.hardware_named(self.hardware), self.devices)

    @property
    def kw(self) -> dict:
        return dict(dtype=self.dtype, draft_kv_window=self.draft_kv_window)


def check(s: Settings) -> None:
    """A one-line ValueError for settings the roofline refuses (unknown preset, dtype the hardware lacks,
    vocabularies that differ, a context past a model's window with the longest γ drafted).

    >>> check(Settings(target="tiny-target"))
    Traceback (most recent call last):
    ...
    ValueError: llama-3.2-1b (128,256 tokens) and tiny-target (96) do not share a vocabulary
    >>> check(Settings(hardware="a100-80gb", dtype="fp8"))
    Traceback (most recent call last):
    ...
    ValueError: a100-80gb has no 'fp8' figure: it has bf16, fp16
    """
    if not 0 <= s.alpha <= 1:
        raise ValueError(f"α must be from 0 to 1, got {s.alpha}")
    s.hw.peak(s.dtype)
    top = max(GAMMAS)
    roofline.serving_point(s.target, s.draft, s.hw, 1, s.context, s.alpha, top, **s.kw)


def grid(s: Settings) -> dict:
    """The heatmap's data (see the module docstring): ``speedup_grid`` plus "crossover", "max_batch",
    "best_speedup" per batch, and "fits" per batch (None when the memory is not known)."""
    check(s)
    hw = s.hw
    crossover = roofline.crossover_batch(s.target, s.draft, hw, s.context, s.alpha, gammas=GAMMAS, **s.kw)
    fit = roofline.max_batch(s.target, s.draft, hw, s.context, **s.kw)
    extra = {crossover, crossover - 1} if crossover else set()
    if fit:
        extra.add(fit)
    batches = sorted((set(BATCHES) | extra) - {0})
    g = roofline.speedup_grid(s.target, s.draft, hw, batches, GAMMAS, s.context, s.alpha, **s.kw)
    g.update(crossover=crossover, crossover_limit=roofline.CROSSOVER_LIMIT, max_batch=fit,
             best_speedup=[max(row) for row in g["speedup"]],
             fits=[None if fit is None else b <= fit for b in batches])
    return g


def verdict(g: dict) -> str:
    """One sentence on the crossover and the memory limit of ``grid``'s result.

    >>> verdict(grid(Settings()))
    'No crossover up to 65,536 sequences: some γ still pays at every batch (and at most 366 sequences fit in memory).'
    >>> verdict(grid(Settings("llama-3-70b", context=128)))
    "The two models' weights alone do not fit in memory: add GPUs. (Crossover, memory aside: at batch 285.)"
    """
    fit, cross = g["max_batch"], g["crossover"]
    if fit == 0:
        where = "none" if cross is None else f"at batch {cross:,}"
        return f"The two models' weights alone do not fit in memory: add GPUs. (Crossover, memory aside: {where}.)"
    room = "" if fit is None else f" (and at most {fit:,} sequences fit in memory)"
    if cross is None:
        return f"No crossover up to {g['crossover_limit']:,} sequences: some γ still pays at every batch{room}."
    if cross == 1:
        return "Speculation does not pay even for one sequence: plain decoding is faster at every batch."
    where = (f", beyond the {fit:,} sequences that fit in memory: within memory, speculation always pays"
             if fit is not None and cross > fit else "")
    return (f"Crossover at batch {cross:,}: from there on no γ beats plain decoding "
            f"(batch {cross - 1:,} still gains){where}.")


def _pass(cost: roofline.StepCost, batch: int) -> dict:
    """One pass per sequence of the batch: µs from bytes, µs from FLOPs, which bounds it."""
    return {"memory_us": cost.memory_s / batch * 1e6, "compute_us": cost.compute_s / batch * 1e6,
            "bytes": cost.bytes, "flops": cost.flops, "intensity": cost.flops / cost.bytes, "bound": cost.bound}


def play_frames(s: Settings, gamma: int = 4, batches=PLAY_BATCHES) -> dict:
    """One frame per batch: the plain step, the verify pass of ``gamma`` drafts and one drafter step,
    each per sequence in µs from its bytes and from its FLOPs, with v, c and the best speedup.

    >>> d = play_frames(Settings(context=128), gamma=4, batches=[1, 4096])
    >>> [(f["verify"]["bound"], round(f["v"], 2)) for f in d["frames"]], round(d["ridge"])
    ([('memory', 1.0), ('compute', 5.0)], 295)
    """
    check(s)
    if isinstance(gamma, bool) or not isinstance(gamma, int) or not 1 <= gamma <= max(GAMMAS):
        raise ValueError(f"γ must be an integer from 1 to {max(GAMMAS)}, got {gamma!r}")
    hw, fit = s.hw, roofline.max_batch(s.target, s.draft, s.hw, s.context, **s.kw)
    frames = []
    for b in batches:
        p = roofline.serving_point(s.target, s.draft, hw, b, s.context, s.alpha, gamma, **s.kw)
        best = roofline.best_gamma(s.target, s.draft, hw, b, s.context, s.alpha, gammas=GAMMAS, **s.kw)
        fits = None if fit is None else b <= fit
        verify = _pass(p.verify, b)
        caption = (f"batch {b:,}{' (does not fit in memory)' if fits is False else ''}: the verify pass of "
                   f"{gamma + 1} positions is {verify['bound']}-bound, v = {p.v:.2f}, c = {p.c:.2f}; "
                   f"best γ {best.gamma}, {best.speedup:.2f}×")
        frames.append({"name": f"{b:,}", "batch": b, "caption": caption, "fits": fits,
                       "plain": _pass(p.target, b), "verify": verify, "draft": _pass(p.draft, b),
                       "v": p.v, "c": p.c, "speedup": p.speedup, "best_gamma": best.gamma,
                       "best_speedup": best.speedup})
    return {"gamma": gamma, "ridge": hw.ridge(s.dtype), "max_batch": fit,
            "overhead_us": hw.step_overhead_s * 1e6, "frames": frames}


def measured(result: dict) -> dict:
    """The points of a serve-bench result (``specsim.gpt.measure.serve_bench.serve_bench`` or its JSON):
    its first thread count's rows as {γ: [(batch, measured speedup, predicted speedup), ...]} for γ >= 1,
    with both crossovers; a one-line ValueError for anything else.

    >>> r = {"context": 40, "runs": [{"threads": 1, "crossover_batch": 4, "predicted_crossover_batch": None,
    ...      "rows": [{"batch": 1, "gamma": 0, "speedup": 1.0, "predicted_speedup": 1.0},
    ...               {"batch": 1, "gamma": 2, "speedup": 1.3, "predicted_speedup": 1.8}]}]}
    >>> measured(r)["points"]
    {2: [(1, 1.3, 1.8)]}
    """
    try:
        run = result["runs"][0]
        points = {}
        for row in run["rows"]:
            b, g, m, p = row["batch"], row["gamma"], _ratio(row["speedup"]), _ratio(row["predicted_speedup"])
            if not (isinstance(b, int) and isinstance(g, int) and 1 <= b <= roofline.MAX_BATCH and 0 <= g <= 64):
                raise ValueError
            if g >= 1:
                points.setdefault(g, []).append((b, m, p))
        out = {"points": {g: sorted(v) for g, v in sorted(points.items())},
               "crossover": _count(run["crossover_batch"], roofline.MAX_BATCH, none=True),
               "predicted_crossover": _count(run["predicted_crossover_batch"], roofline.MAX_BATCH, none=True),
               "threads": _count(run["threads"], 4096), "context": _count(result["context"], MAX_CONTEXT)}
    except (KeyError, IndexError, TypeError, ValueError):
        raise ValueError("not a serve-bench result: expected the JSON of `specsim gpt serve-bench --json`") from None
    if not out["points"]:
        raise ValueError("the serve-bench result has no γ >= 1 to compare with plain decoding")
    return out


def dtypes_for(hardware_name: str) -> list:
    """The dtypes a page may offer on ``hardware_name``: those it has a peak FLOP figure for (``CPU``: fp32).

    >>> dtypes_for("cpu"), dtypes_for("a100-80gb")
    (['fp32'], ['bf16', 'fp16'])
    """
    if hardware_name == CPU:
        return ["fp32"]
    peaks = hardware.hardware_named(hardware_name).peak_flops
    return [d for d in models.DTYPE_BYTES if d in peaks]


MAX_RATIO = 1e6  # a speedup in an uploaded result: any real one is far below


def _ratio(value) -> float:
    """``value`` as a float when it is a number (not a bool) from 0 to ``MAX_RATIO``; else ValueError (a
    401-digit integer is refused by its size, before any conversion could overflow)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError
    if isinstance(value, int) and not -1 < value <= MAX_RATIO:
        raise ValueError
    if not (math.isfinite(value) and 0 <= value <= MAX_RATIO):
        raise ValueError
    return float(value)


MAX_DIGITS = 30  # of one number in an uploaded JSON (a count, a time, a speedup; 17 digits is a double's)


def _json_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise ValueError(f"the file holds a number of {len(text.lstrip('-')):,} digits; the limit is {MAX_DIGITS}")
    return int(text)


def _json_float(text: str) -> float:
    value = float(text) if len(text) <= 4 * MAX_DIGITS else math.inf
    if not math.isfinite(value):
        raise ValueError(f"the file holds the number {text[:20]}{'…' if len(text) > 20 else ''}: out of range")
    return value


def _json_constant(text: str):
    raise ValueError(f"the file holds {text}, which is not a number JSON allows")


def _count(value, most: int, none: bool = False):
    """``value`` when it is a whole number from 1 to ``most`` (or None, when ``none``); else ValueError.
    Every number of an uploaded result passes here before a page formats or shows it."""
    if value is None and none:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
        raise ValueError
    return value


MAX_BENCH_BYTES = 2 * 2**20  # an uploaded serve-bench JSON: 2 MiB (what Streamlit's uploader calls "2MB")


def read_bench(raw: bytes) -> dict:
    """An uploaded serve-bench JSON (bytes) as ``measured``'s points; a one-line ValueError for a file over
    ``MAX_BENCH_BYTES``, not UTF-8, not JSON, nested too deeply to parse, or not a serve-bench result.

    >>> read_bench(b"[" * 100_000)
    Traceback (most recent call last):
    ...
    ValueError: the file is nested too deeply to be a serve-bench result
    >>> read_bench(b'{"context": "![x](http://host/x.png)", "runs": []}')
    Traceback (most recent call last):
    ...
    ValueError: not a serve-bench result: expected the JSON of `specsim gpt serve-bench --json`
    >>> read_bench(b'{"runs": [{"rows": [{"speedup": ' + b"9" * 401 + b'}]}]}')
    Traceback (most recent call last):
    ...
    ValueError: the file holds a number of 401 digits; the limit is 30

    Every number is parsed with its size checked (``MAX_DIGITS``; a float that overflows to infinity,
    NaN and Infinity are refused), so no conversion of it can overflow later.
    """
    if len(raw) > MAX_BENCH_BYTES:
        raise ValueError(f"the file has {len(raw):,} bytes; the limit is {MAX_BENCH_BYTES:,}")
    try:
        data = json.loads(raw.decode("utf-8"), parse_int=_json_int, parse_float=_json_float,
                          parse_constant=_json_constant)
    except UnicodeDecodeError:
        raise ValueError("the file is not UTF-8 text") from None
    except RecursionError:
        raise ValueError("the file is nested too deeply to be a serve-bench result") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"the file is not JSON: {e.msg} (line {e.lineno}, column {e.colno})") from None
    return measured(data)


def preset_names() -> dict:
    """The choices a page offers: model and hardware preset names, dtypes."""
    return {"models": list(models.MODELS), "hardware": list(hardware.HARDWARE), "dtypes": list(models.DTYPE_BYTES)}
