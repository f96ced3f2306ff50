"""Lesson 29's figures: burst sizes as a side channel, the bits they carry, and what padding or pacing costs.

With the lesson's own calls: a seeded stream of rounds on the seed model from "a" (``sampling.generate``),
one bar per burst; the bits per round and per token of the i.i.d. law against α for a few γ
(``side_channel.leak_iid``, ``binary_entropy``); the law of a burst's last token by its size from "a"
(``side_channel.closing_tokens``); every padding of the i.i.d. law at α = 4/5, γ = 4 (``paddings``,
``frontier``); and the chance a paced 200-token answer never stalls against the start-up delay
(``stall_free``). No chart of ``specsim.plots`` draws these, so the small builders below compose plotly
from those numbers.

>>> [f.name for f in FIGURES]
['29-bursts', '29-bits', '29-last-token', '29-padding', '29-pacing']
"""
from __future__ import annotations

from fractions import Fraction

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ...labs import side_channel as sc
from ...sampling import generate
from ...schemes import Chain
from ...toy import load_model
from .. import charts
from ..colors import BONUS_COLOR, CYAN, GREY, OVERLAP_COLOR, P_COLOR, Q_COLOR, RESIDUAL_COLOR
from .figure import Control, LessonFigure

CONTEXT, TOY_GAMMA, SEED, ROUNDS = ("a",), 3, 0, 14
ALPHA, GAMMA = Fraction(4, 5), 4      # lesson 26's serving example
GAMMAS = (1, 2, 4, 8)
PACED_TOKENS, DELAYS = 200, range(0, 16)
PACES = (Fraction(2), Fraction(5, 2), Fraction(3))
TOKEN_COLOURS = (OVERLAP_COLOR, BONUS_COLOR, CYAN)


def stream(seed: int = SEED):
    """One bar per round of a seeded generation from "a" (γ = 3): the burst size an observer sees, the tokens
    (which it does not see) written in the bar; a full burst (γ + 1) in blue, a short one in red."""
    m = load_model("seed")
    trace = generate(m, CONTEXT, Chain(TOY_GAMMA), 40, seed=int(seed))
    rounds = trace.rounds[:ROUNDS]
    sizes = [len(r.emitted) for r in rounds]
    full = TOY_GAMMA + 1
    fig = go.Figure()
    for is_full, name, colour in ((True, f"{full} tokens: every draft kept, closed by the bonus", P_COLOR),
                                  (False, "fewer: a draft rejected, closed by a correction", RESIDUAL_COLOR)):
        pick = [i for i, n in enumerate(sizes) if (n == full) == is_full]
        fig.add_bar(x=[i + 1 for i in pick], y=[sizes[i] for i in pick], name=name, marker_color=colour,
                    text=[" ".join(rounds[i].emitted) for i in pick], textposition="inside",
                    insidetextanchor="middle", textangle=0, textfont=dict(color="white", size=13),
                    hovertemplate="round %{x}: %{y} tokens (%{text})<extra></extra>")
    fig.update_xaxes(tickmode="array", tickvals=list(range(1, len(rounds) + 1)))
    fig.update_yaxes(range=[0, full + 0.4], tickvals=list(range(full + 1)))
    return charts.style(fig, f"A stream from \"a\" (γ = {TOY_GAMMA}, seed {int(seed)}): the observer sees only "
                             "the bar heights; the tokens are hidden", "round", "burst size K + 1", height=400)


def bits():
    """Bits per round H(K) and per token H(K) / E[K + 1] of the i.i.d. law against α, for a few γ; the per-token
    limit h(α) dashed, the lesson's point (α = 4/5, γ = 4) marked."""
    alphas = [Fraction(k, 50) for k in range(0, 51)]
    fig = make_subplots(rows=1, cols=2, subplot_titles=("bits per round, H(K)", "bits per emitted token"),
                        horizontal_spacing=0.12)
    palette = (Q_COLOR, OVERLAP_COLOR, P_COLOR, BONUS_COLOR)
    for g, colour in zip(GAMMAS, palette):
        leaks = [sc.leak_iid(a, g) for a in alphas]
        for col, values in ((1, [lk.bits_per_round for lk in leaks]), (2, [lk.bits_per_token for lk in leaks])):
            fig.add_scatter(x=charts.floats(alphas), y=values, mode="lines", line=dict(color=colour, width=2),
                            name=f"γ = {g}", legendgroup=str(g), showlegend=col == 1, row=1, col=col,
                            hovertemplate=f"γ = {g}, α = %{{x:.2f}}: %{{y:.3f}} bits<extra></extra>")
    fig.add_scatter(x=charts.floats(alphas), y=[sc.binary_entropy(a) for a in alphas], mode="lines",
                    line=dict(color=GREY, dash="dash"), name="h(α): one coin, the limit per token", row=1, col=2,
                    hovertemplate="α = %{x:.2f}: h(α) = %{y:.3f} bits<extra></extra>")
    lk = sc.leak_iid(ALPHA, GAMMA)
    for col, y in ((1, lk.bits_per_round), (2, lk.bits_per_token)):
        fig.add_scatter(x=[float(ALPHA)], y=[y], mode="markers", showlegend=col == 1, row=1, col=col,
                        marker=dict(size=12, color="white", symbol="circle", line=dict(width=2, color="black")),
                        name=f"α = {ALPHA}, γ = {GAMMA}", legendgroup="point",
                        hovertemplate=f"α = {ALPHA}, γ = {GAMMA}: %{{y:.3f}} bits<extra></extra>")
    fig.update_xaxes(title_text="α (acceptance rate)", range=[0, 1])
    fig.update_yaxes(rangemode="tozero")
    fig.update_yaxes(title_text="bits", row=1, col=1)
    fig.update_annotations(font_size=13)
    return charts.style(fig, "What the burst sizes carry under i.i.d. acceptance: nothing at α = 0 or 1",
                        None, None, height=420)


def last_token(gamma: int = TOY_GAMMA):
    """P(a burst's last token | its size) for one round from "a": short bursts end with a correction from the
    residual, a full one with the bonus token from p."""
    m, gamma = load_model("seed"), int(gamma)
    law = sc.closing_tokens(m, CONTEXT, Chain(gamma))
    sizes = list(law)
    fig = go.Figure()
    for token, colour in zip(m.vocab, TOKEN_COLOURS):
        row = [law[n][token] for n in sizes]
        fig.add_bar(x=[str(n) for n in sizes], y=charts.floats(row), name=f"last token {token}", marker_color=colour,
                    text=[charts.label(v) if v else "" for v in row], textposition="inside",
                    customdata=[charts.exact_dec(v) for v in row],
                    hovertemplate=f"burst of %{{x}}: P(last = {token}) = %{{customdata}}<extra></extra>")
    fig.update_layout(barmode="stack", yaxis_range=[0, 1], legend_traceorder="normal")
    return charts.categorical(charts.style(fig, f"From \"a\", γ = {gamma}: what a burst's size says about its last "
                                                "token", "burst size K + 1", charts.PROBABILITY, height=400))


def _sizes(b) -> str:
    return "{" + ", ".join(map(str, b.sizes)) + "}"


def padding():
    """Every padding of the i.i.d. law at α = 4/5, γ = 4: bits per round left against empty slots per real token;
    the ones no other beats joined (those with 1, 2, 4 or 5 sizes named; the crowded middle on hover)."""
    pads = sc.paddings(sc.iid_law(ALPHA, GAMMA))
    best = sc.frontier(pads)
    others = [b for b in pads if b not in best]
    side = {5: "top right", 4: "bottom right", 2: "bottom left", 1: "top right"}  # by the number of sizes
    fig = go.Figure()
    fig.add_scatter(x=[float(b.overhead) for b in best], y=[b.bits_per_round for b in best], mode="lines",
                    line=dict(color=GREY, dash="dot"), name="no other padding beats these", hoverinfo="skip")
    for pick, name, colour, size in ((others, "other size sets", GREY, 8),
                                     (best, "the frontier (hover for every set)", P_COLOR, 11)):
        named = pick is best
        fig.add_scatter(x=[float(b.overhead) for b in pick], y=[b.bits_per_round for b in pick],
                        mode="markers+text" if named else "markers", name=name,
                        marker=dict(size=size, color=colour, line=dict(width=1, color="black")),
                        text=[_sizes(b) if named and len(b.sizes) in side else "" for b in pick],
                        textposition=[side.get(len(b.sizes), "top right") for b in pick], textfont=dict(size=11),
                        customdata=[[_sizes(b), charts.exact_dec(b.overhead)] for b in pick],
                        hovertemplate="sizes %{customdata[0]}<br>%{customdata[1]} empty slots per token"
                                      "<br>%{y:.3f} bits<extra></extra>")
    fig.update_xaxes(range=[-0.02, 0.6])
    fig.update_yaxes(range=[-0.1, 2.5])
    return charts.style(fig, f"Padding at α = {ALPHA}, γ = {GAMMA}: send each burst as the smallest allowed size",
                        "empty slots sent per real token", "bits per round left", height=420)


def pacing():
    """P(a paced 200-token answer never stalls) against the start-up delay in rounds, for a few paces ρ and the
    unpaced mean E[K + 1] (i.i.d. law at α = 4/5, γ = 4; floats, the lesson checks the points exactly)."""
    law = [float(x) for x in sc.iid_law(ALPHA, GAMMA)]
    mean = sc.leak_iid(ALPHA, GAMMA).tokens_per_round
    fig = go.Figure()
    fig.add_hline(y=0.99, line=dict(color=GREY, dash="dot"), annotation_text="1 % risk of a stall",
                  annotation_position="bottom right")
    for pace, colour in zip(PACES + (mean,), (OVERLAP_COLOR, CYAN, P_COLOR, RESIDUAL_COLOR)):
        label = f"ρ = {pace}" if pace != mean else f"ρ = E[K + 1] = {float(mean):.3f}"
        fig.add_scatter(x=list(DELAYS), y=[sc.stall_free(law, float(pace), d, PACED_TOKENS) for d in DELAYS],
                        mode="lines+markers", line=dict(color=colour), name=label,
                        hovertemplate=f"{label}, delay %{{x}} rounds: %{{y:.4f}}<extra></extra>")
    fig.update_yaxes(range=[0, 1.03])
    return charts.style(fig, f"Pacing ρ tokens per round (α = {ALPHA}, γ = {GAMMA}): the chance a "
                             f"{PACED_TOKENS}-token answer never stalls", "start-up delay (rounds)",
                        "P(no stall)", height=420)


FIGURES = [
    LessonFigure("29-bursts", stream),
    LessonFigure("29-bits", bits),
    LessonFigure("29-last-token", last_token, (Control("gamma", "γ (draft length)", 1, 4, 1, TOY_GAMMA),)),
    LessonFigure("29-padding", padding),
    LessonFigure("29-pacing", pacing),
]
