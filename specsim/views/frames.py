"""Animation frames as plain data: what each frame of a played figure shows, computed once.

A page draws a figure once; the browser plays and scrubs its frames
(``specsim.plots.anim`` turns these into plotly frames). Every number comes
from specsim's engines: the sampled rounds from ``sampling.trace_round`` /
``replay.next_round``, the rows from ``rule``, P(K) from ``exact`` and
``formulas``; nothing here re-implements the acceptance rule.

Each builder returns a dict with ``"frames"``: a list of dicts, each with a
unique ``"name"`` and a ``"caption"`` (what happened, in words, with the
exact numbers). Sizes are checked first (``bounds.WorkRefused``, one line).

Example
-------
>>> from specsim.toy import load_model
>>> m = load_model("seed")
>>> [f["kind"] for f in round_frames(m, ("a",), 3, seed=0)["frames"]]
['draft', 'draft', 'draft', 'verify', 'accept', 'reject', 'correct', 'emit']
>>> last = morph_frames(m.vocab, m.p(("a",)), m.q(("a",)), steps=4)["frames"][-1]
>>> last["t"], last["alpha"], last["residual"]
(Fraction(1, 1), Fraction(1, 1), None)
>>> snapshot_counts(100, first=3, frames=6)
[1, 2, 3, 10, 31, 100]
"""
from __future__ import annotations

from fractions import Fraction

from .. import bounds, formulas
from .replay import draft_statuses, next_round
from ..rule import CORRECT, RoundRule, excess, overlap, residual
from ..rule import alpha as alpha_of
from ..sampling import make_rng, trace_round
from ..schemes import Chain
from .words import count
from ..stats import chi_square
from ..toy import check_row

MAX_FRAMES = 500  # frames of one figure (each one is sent to the browser)
MAX_DRAWS = 8_000  # rounds x (gamma + 1) sampled for one figure (~0.1 ms each: about a second)
MAX_GAMMA = 16  # the token strip and the K histogram stay readable up to here


def fmt(x) -> str:
    """A number for a caption: Fractions exactly ("3/5", "729/1000 ≈ 0.729"), floats to 3 decimals."""
    if isinstance(x, Fraction):
        text = str(x)
        return f"{text} ≈ {float(x):.4g}" if x.denominator != 1 and len(text) > 5 else text
    return str(x) if isinstance(x, int) else f"{float(x):.3f}"


def _check_gamma(gamma: int) -> None:
    if int(gamma) != gamma or not 1 <= gamma <= MAX_GAMMA:
        raise ValueError(f"γ must be an integer from 1 to {MAX_GAMMA} for an animation, got {gamma}")


def _check_draws(rounds: int, gamma: int, what: str) -> None:
    if int(rounds) != rounds or rounds < 1:
        raise ValueError(f"rounds must be a whole number >= 1, got {rounds}")
    bounds.check(rounds * (gamma + 1), f"{what} of {rounds:,} rounds with γ = {gamma}", "the rounds or γ",
                 MAX_DRAWS, "draws")


# -- 1. one round, event by event ------------------------------------------------
def _rows_of(trace, ev: dict) -> dict:
    """The rows an event is about: q for a draft, p and q (and u) for a test, r for a correction, p for a bonus."""
    kind, i = ev["kind"], ev.get("position", 0)
    tok = ev.get("token")
    out = {"position": i, "p": None, "q": None, "r": None, "highlight": tok, "u": None, "acceptance": None}
    if kind == "draft":
        out["q"] = trace.q_rows[i]
    elif kind == "verify":
        out.update(p=trace.p_rows[0], q=trace.q_rows[0], highlight=trace.drafts[0])
    elif kind in ("accept", "reject"):
        out.update(p=trace.p_rows[i], q=trace.q_rows[i], u=trace.u[i], acceptance=trace.acceptance[i])
    elif kind == "correct":
        out.update(p=trace.p_rows[i], q=trace.q_rows[i], r=trace.replacement_row)
    elif kind == "bonus":
        out["p"] = trace.p_rows[i]
    return out


def _caption(trace, ev: dict, rule_name: str) -> str:
    """What the event did, in words, with the exact numbers of the trace."""
    kind, g, vocab = ev["kind"], trace.gamma, list(trace.vocab)
    if kind == "draft":
        i, x = ev["position"], ev["token"]
        ctx = " ".join(ev["context"][-6:])
        return (f"Draft {i + 1} of {g}: after \"{ctx}\" the drafter draws \"{x}\" from q "
                f"(q({x}) = {fmt(trace.q_rows[i][vocab.index(x)])}).")
    if kind == "verify":
        xs = ", ".join(f"p({x}) = {fmt(trace.p_rows[i][vocab.index(x)])}" for i, x in enumerate(trace.drafts))
        return f"Verify: one target pass gives p at all {g + 1} positions; for the drafts {xs}."
    if kind in ("accept", "reject"):
        i, x, a, u = ev["position"], ev["token"], trace.acceptance[ev["position"]], trace.u[ev["position"]]
        j = vocab.index(x)
        verdict = (f"u = {u:.3f} < {fmt(a)}: accepted." if kind == "accept" else
                   f"u = {u:.3f} ≥ {fmt(a)}: rejected"
                   + (", the drafts after it are discarded." if i < g - 1 else "."))
        return (f"Position {i + 1}, draft \"{x}\": p = {fmt(trace.p_rows[i][j])}, q = {fmt(trace.q_rows[i][j])}, "
                f"min(1, p/q) = {fmt(a)}; {verdict}")
    if kind == "correct":
        x = ev["token"]
        source = "the residual r = max(0, p − q) / Σ max(0, p − q)" if rule_name == "correct" else \
            f"the replacement row of the rule \"{rule_name}\""
        return (f"Correct: \"{x}\" replaces draft {ev['position'] + 1}, drawn from {source} "
                f"(r({x}) = {fmt(trace.replacement_row[vocab.index(x)])}).")
    if kind == "bonus":
        x = ev["token"]
        return (f"Bonus: all {g} drafts accepted; \"{x}\" is drawn from p at position {g + 1} "
                f"(p({x}) = {fmt(trace.p_rows[g][vocab.index(x)])}).")
    k, n = trace.accepted, len(trace.emitted)
    closing = {"correct": " + 1 replacement", "bonus": " + 1 bonus"}.get((trace.kinds[-1:] or [""])[0], "")
    return (f"Emit \"{' '.join(trace.emitted)}\": {k} accepted draft{'s' if k != 1 else ''}{closing} = "
            f"{n} token{'s' if n != 1 else ''} for 1 target pass.")


def trace_frames(trace, round_index: int = 0) -> list:
    """One frame per event of a ``RoundTrace`` (``trace.events()``), in order: exactly as many frames as events.

    A frame holds the token strip (γ draft slots and the closing slot, each a
    token and a status: "empty", "pending", "accepted", "rejected",
    "discarded", "correct", "bonus"), the rows the event is about (``p``,
    ``q``, ``r``: rows or None; ``u`` and ``acceptance`` at a test) and a caption.
    """
    frames, events, rows = [], trace.events(), None
    for i, ev in enumerate(events):
        statuses, last = draft_statuses(trace, i)
        strip = [{"token": trace.drafts[j], "status": s} for j, s in enumerate(statuses)]
        strip += [{"token": None, "status": "empty"}] * (trace.gamma - len(strip))
        strip.append({"token": last[1], "status": last[0]} if last else {"token": None, "status": "empty"})
        rows = rows if ev["kind"] == "emit" and rows else _rows_of(trace, ev)  # emit keeps the last rows
        frames.append({"name": f"{round_index + 1}.{i + 1} {ev['kind']}", "round": round_index, "event": i,
                       "kind": ev["kind"], "context": trace.context, "strip": strip, **rows,
                       "caption": f"Round {round_index + 1}. " + _caption(trace, ev, trace.rule)})
    return frames


def round_frames(pair, context, gamma: int, seed: int = 0, rounds: int = 1, rule: RoundRule = CORRECT) -> dict:
    """Frames of ``rounds`` consecutive seeded rounds ("play all rounds" when > 1), every event of each.

    The rounds are ``replay.next_round`` on one generator made from ``seed``:
    the chain ``replay.Player`` and ``sampling.generate`` give with that seed
    (so round 1 is ``trace_round(models, context, Chain(gamma), seed)``).
    """
    _check_gamma(gamma)
    if int(rounds) != rounds or not 1 <= rounds <= MAX_FRAMES // (2 * gamma + 3):
        raise ValueError(f"rounds must be from 1 to {MAX_FRAMES // (2 * gamma + 3)} with γ = {gamma} "
                         f"(at most {MAX_FRAMES} frames), got {rounds}")
    rng, traces = make_rng(seed), []
    for _ in range(rounds):
        traces.append(next_round(pair, context, traces, Chain(gamma), rng, rule))
    frames = [f for j, t in enumerate(traces) for f in trace_frames(t, j)]
    return {"vocab": tuple(pair.vocab), "gamma": gamma, "seed": seed, "traces": traces, "frames": frames}


# -- 2. the residual morph -------------------------------------------------------------
def morph_frames(vocab, p, start, end=None, steps: int = 20) -> dict:
    """q_t = (1 − t)·start + t·end for t = k/steps, k = 0..steps (``end`` defaults to p): steps + 1 frames.

    Each frame: ``q`` (q_t), ``overlap`` = min(p, q_t), ``excess`` = max(0, p − q_t)
    = (1 − α_t)·r_t, ``residual`` r_t (None when α_t = 1: no rejection, nothing
    to normalize) and ``alpha`` α_t = Σ min(p, q_t), all exact.
    """
    end = p if end is None else end
    if int(steps) != steps or not 1 <= steps <= 200:
        raise ValueError(f"steps must be a whole number from 1 to 200, got {steps}")
    for name, row in (("p", p), ("start row", start), ("end row", end)):
        if len(row) != len(vocab):
            raise ValueError(f"{name} has {len(row)} entries for {len(vocab)} tokens")
        check_row([Fraction(x) for x in row], name)
    p = [Fraction(x) for x in p]
    frames = []
    for k in range(steps + 1):
        t = Fraction(k, steps)
        q = [(1 - t) * Fraction(a) + t * Fraction(b) for a, b in zip(start, end)]
        a, r = alpha_of(p, q), residual(p, q)
        tail = ("α = 1: q_t equals p, every draft is accepted and there is no residual."
                if r is None else "r_t = " + ", ".join(f"{x}: {fmt(v)}" for x, v in zip(vocab, r)) + ".")
        frames.append({"name": f"t = {t}", "t": t, "q": q, "overlap": overlap(p, q),
                       "excess": excess(p, q), "residual": r, "alpha": a,
                       "caption": f"t = {t}: α_t = Σ min(p, q_t) = {fmt(a)}; {tail}"})
    return {"vocab": tuple(vocab), "p": list(p), "frames": frames}


# -- sampled figures: one frame per round at first, then geometric steps -------------
def snapshot_counts(n: int, first: int = 30, frames: int = 60) -> list:
    """Round counts to show: 1..first one by one, then geometrically spaced up to n (n always last)."""
    out = list(range(1, min(first, n) + 1))
    more = frames - len(out)
    if n > first and more > 0:
        ratio = (n / first) ** (1 / more)
        out += sorted({min(n, round(first * ratio ** j)) for j in range(1, more + 1)} - set(out))
    if out[-1] != n:
        out.append(n)
    return out


def proof_frames(pair, context, gamma: int = 1, rounds: int = 2000, seed: int = 0,
                 rule: RoundRule = CORRECT) -> dict:
    """The first emitted token of ``rounds`` seeded rounds from one context, tallied by where it came from.

    Rounds are ``trace_round(models, context, Chain(gamma), rng)`` on one generator
    made from ``seed``; each round's first token is an accepted draft (the
    min(p, q) part) or a replacement (the (1 − α)·r part), as ``trace.kinds[0]``
    says. Frames at ``snapshot_counts(rounds)``: counts by source, the TV
    distance to p (exact) and the chi-square p-value of the counts against p.
    """
    _check_gamma(gamma)
    _check_draws(rounds, gamma, "a visual proof")
    ctx, vocab = tuple(context), list(pair.vocab)
    p, q = pair.p(ctx), pair.q(ctx)
    rng, shown = make_rng(seed), set(snapshot_counts(rounds))
    drafted, replaced, frames = [0] * len(vocab), [0] * len(vocab), []
    for n in range(1, rounds + 1):
        t = trace_round(pair, ctx, Chain(gamma), rng, rule)
        (drafted if t.kinds[0] == "draft" else replaced)[vocab.index(t.emitted[0])] += 1
        if n in shown:
            counts = [a + b for a, b in zip(drafted, replaced)]
            tv = sum((abs(Fraction(c, n) - px) for c, px in zip(counts, p)), Fraction(0)) / 2
            fit = chi_square(dict(zip(vocab, counts)), dict(zip(vocab, p)))
            test = f"χ² p-value {fit.p_value:.3f}" if fit.dof else "too few rounds for a χ² test"
            frames.append({"name": f"{n} round{'' if n == 1 else 's'}", "n": n, "drafted": list(drafted), "replaced": list(replaced),
                           "tv": tv, "p_value": fit.p_value, "dof": fit.dof,
                           "caption": f"{count(n, 'round')}: first tokens {count(sum(drafted), 'accepted draft')} + "
                                      f"{count(sum(replaced), 'replacement')}; TV to p = {float(tv):.4f} "
                                      f"(exact: 0); {test}."})
    return {"vocab": tuple(vocab), "context": ctx, "gamma": gamma, "seed": seed, "p": list(p),
            "overlap": overlap(p, q), "excess": excess(p, q), "alpha": alpha_of(p, q), "frames": frames}


# -- 4. acceptance: the K histogram and the per-position rates ------------------------
def acceptance_frames(pair, context, gamma: int, rounds: int = 1000, seed: int = 0) -> dict:
    """K (drafts accepted) of ``rounds`` seeded rounds of γ from one context, tallied toward the exact P(K).

    Rounds are ``trace_round(models, context, Chain(gamma), rng)`` on one generator
    made from ``seed``. Frames at ``snapshot_counts(rounds)``: ``counts`` of
    K = 0..γ; per draft position i, ``reached`` (rounds that tested it),
    ``kept`` (rounds that accepted it) and ``rates`` = kept / reached (None
    before any round reached it). Beside them, from ``formulas.exact_vs_iid``:
    the exact P(K) (``exact.round_distribution``), the i.i.d. formula's
    (α^k(1 − α) for k < γ, α^γ for K = γ, with α of the first position) and
    the exact per-position rate P(K ≥ i) / P(K ≥ i − 1).
    """
    _check_gamma(gamma)
    _check_draws(rounds, gamma, "an acceptance animation")
    ctx = tuple(context)
    bounds.check_round(pair, gamma)
    info = formulas.exact_vs_iid(pair, ctx, gamma)
    at_least = [sum(info["accepted"][k:], Fraction(0)) for k in range(gamma + 1)]  # P(K >= k)
    exact_rates = [at_least[i] / at_least[i - 1] if at_least[i - 1] else None for i in range(1, gamma + 1)]
    rng, shown = make_rng(seed), set(snapshot_counts(rounds))
    counts, reached, kept, frames = [0] * (gamma + 1), [0] * gamma, [0] * gamma, []
    for n in range(1, rounds + 1):
        t = trace_round(pair, ctx, Chain(gamma), rng)
        counts[t.accepted] += 1
        for i, flag in enumerate(t.accepted_flags):  # the positions this round tested
            reached[i] += 1
            kept[i] += flag
        if n in shown:
            rates = [Fraction(k, r) if r else None for k, r in zip(kept, reached)]
            mean = Fraction(sum(k * c for k, c in enumerate(counts)), n)
            frames.append({"name": f"{n} round{'' if n == 1 else 's'}", "n": n, "counts": list(counts), "reached": list(reached),
                           "kept": list(kept), "rates": rates,
                           "caption": f"{n:,} round{'' if n == 1 else 's'} of γ = {gamma}: mean K = {float(mean):.3f} "
                                      f"(exact {fmt(sum(k * v for k, v in enumerate(info['accepted'])))}); "
                                      f"position 1 accepted {kept[0]:,} of {reached[0]:,}."})
    return {"context": ctx, "gamma": gamma, "seed": seed, "alpha": info["alpha"], "exact": info["accepted"],
            "iid": info["iid_accepted"], "exact_rates": exact_rates, "frames": frames}


# -- 5. the speedup curve, swept over α or over c -------------------------------------
ALPHAS = tuple(Fraction(k, 100) for k in range(100))  # the Speedup page's α slider: 0..0.99
COSTS = tuple(Fraction(k, 100) for k in range(61))  # its c slider: 0..0.60, where the heatmaps stop


def _curve_frames(points, max_gamma: int) -> list:
    if not 1 <= len(points) <= MAX_FRAMES:
        raise ValueError(f"a sweep takes 1 to {MAX_FRAMES} values, got {len(points)}")
    if int(max_gamma) != max_gamma or not 1 <= max_gamma <= bounds.LIMITS.gamma:
        raise ValueError(f"max γ must be from 1 to {bounds.LIMITS.gamma}, got {max_gamma}")
    frames = []
    for a, c in points:
        curve = formulas.speedup_curve(a, c, max_gamma)
        g, s = curve["best_gamma"], curve["best_speedup"]
        # the Speedup page's metric says "none" (every γ slower) and "any" (a tie at 1×): the frames say the same
        best = "none" if s < 1 else "any" if s == 1 else str(g)
        said = f"best γ = {best}" if best == str(g) else f"best γ: {best}"
        verdict = {"none": "every γ is slower than plain decoding",
                   "any": "the best speedup is exactly 1×, no γ gains"}.get(best, f"{float(s):.2f}× plain decoding")
        frames.append({"name": f"α = {float(a):.2f}, c = {float(c):.2f}", "alpha": a, "cost": c, **curve,
                       "best_label": said, "caption": f"α = {fmt(a)}, c = {fmt(c)}: {said}, {verdict}."})
    return frames


def speedup_frames(cost=Fraction(1, 20), alphas=ALPHAS, max_gamma: int = formulas.DEFAULT_MAX_GAMMA) -> dict:
    """``formulas.speedup_curve`` at each α of ``alphas`` with c fixed: one frame per α.

    Each frame holds the curve ("gammas", "speedups"), "best_gamma" and
    "best_speedup" (as ``formulas.best_gamma``); ``"grid"`` is
    ``formulas.best_gamma_grid()`` for the heatmap the cursor moves on.
    """
    formulas.speedup(0, 1, cost)  # validates c with the formula's own message
    frames = _curve_frames([(Fraction(a), Fraction(cost)) for a in alphas], max_gamma)
    return {"sweep": "alpha", "cost": Fraction(cost), "max_gamma": max_gamma, "frames": frames,
            "grid": formulas.best_gamma_grid(max_gamma=max_gamma)}


def cost_frames(alpha=Fraction(4, 5), costs=COSTS, max_gamma: int = formulas.DEFAULT_MAX_GAMMA) -> dict:
    """The same as ``speedup_frames`` with α fixed and c swept over ``costs``."""
    formulas.speedup(alpha, 1, 0)
    frames = _curve_frames([(Fraction(alpha), Fraction(c)) for c in costs], max_gamma)
    return {"sweep": "cost", "alpha": Fraction(alpha), "max_gamma": max_gamma, "frames": frames,
            "grid": formulas.best_gamma_grid(max_gamma=max_gamma)}
