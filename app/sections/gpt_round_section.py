"""The Tiny GPT page's "one round, opened up": the verify pass's mask, both KV caches and the tests, for
any scheme the GPT decoder runs.

A round whose drafts form a path (a chain, a block) is drawn as a chain: its lower-right causal mask
beside the upper-left one, the cache slots of the first k drafts kept, and p and q at each draft. Any
other layout (a tree, a dynamic tree) is drawn as a tree: the tree mask of its one target pass (each
node sees the cache, the root and its own ancestors), the target's cache with every node in the pass's
order and the accepted path kept, and a table of the tests the walk made.
"""
from __future__ import annotations

import streamlit as st

from parts import memory, plain, presenter
from parts.tokens import md
from specsim.plots import gpt as plots_gpt
from specsim.plots import tree as plots_tree
from specsim.schemes import masks
from specsim.views import tree_view, words

DRAFTS_PER_CHART = 3  # per-draft panels in one chart (more collide at 420 px)
PASS_ORDER = "dfs"  # the decoder's default order of a tree's nodes in its verify pass (``specsim.gpt.api``)


def is_path(parents) -> bool:
    """Do the drafts form one path (a chain's or a block's layout)?"""
    return list(parents) == list(range(-1, len(parents) - 1))


def show(gen, vocab) -> None:
    st.subheader("One round, opened up")
    j = _pick_round(gen)
    r = gen.rounds[j]
    if not len(r.drafts):  # nothing to verify: no mask, no draft slots, no tests to draw
        drafted = sum(1 for x in gen.rounds if len(x.drafts))
        st.info(f"Round {j + 1} ({md(r.scheme)}): the drafter proposed nothing (prompt lookup found no earlier "
                f"match for the last characters), so the target's pass emitted one token alone, "
                f"**{md(plots_gpt.show_char(vocab[r.closing_token]))}**. "
                f"{drafted} of the {words.count(len(gen.rounds), 'round')} drafted something: pick one on the "
                "slider.")
        return
    n = r.cache["target"]["start"]
    labels = {n: vocab[r.last_token]}
    if not any(x.slid for x in gen.rounds[:j + 1]):  # cache slot j holds sequence position j
        seq = gen.prompt_ids + gen.tokens
        labels.update({i: vocab[t] for i, t in enumerate(seq[:n])})
    if is_path(r.parents):
        _chain_round(j, r, vocab, labels)
    else:
        _tree_round(gen, j, r, vocab, labels)
    with st.expander("Which logit row of the verify pass scored which draft"):
        plain.table([{"row": s["row"], "query token": plots_gpt.show_char(vocab[s["query_token"]]),
                       "position": s["query_position"], "scores": s["scores"], "used": "✓" if s["used"] else ""}
                      for s in r.scored_by()])


def _pick_round(gen) -> int:
    """The round the slider picks (0-based); a new generation opens on its first round that drafted something
    (prompt lookup's first rounds often find no match), the page's first run on a remembered round."""
    first = next((i + 1 for i, x in enumerate(gen.rounds) if len(x.drafts)), 1)
    made = (gen.rounds[0].scheme if gen.rounds else None, tuple(int(x.closing_token) for x in gen.rounds))
    if st.session_state.get("gpt-round-of") != made:  # another generation: its own first round with drafts
        st.session_state["gpt-round-of"] = made
        if st.session_state.get("gpt-round-of-seen"):  # (not on the page's first run: a remembered round stays)
            st.session_state["gpt-round"] = first
        st.session_state["gpt-round-of-seen"] = True
    memory.remember("gpt-round", first, valid=lambda v: isinstance(v, int) and 1 <= v <= len(gen.rounds))  # kept
    return st.slider("round", 1, len(gen.rounds), key="gpt-round") - 1 if len(gen.rounds) > 1 else 0


def _round_chars(r, vocab) -> tuple:
    """What the round's words show: n (the cache's length), the drafts' characters, the last token's, the
    closing token's and how the round closed ("bonus" or "replacement")."""
    chars = [plots_gpt.show_char(vocab[t]) for t in r.drafts]
    ending = "bonus" if r.closing_kind == "bonus" else "replacement"
    return (r.cache["target"]["start"], chars, plots_gpt.show_char(vocab[r.last_token]),
            md(plots_gpt.show_char(vocab[r.closing_token])), ending)


def _chain_round(j, r, vocab, labels) -> None:
    """A round whose drafts form a path: both causal masks, the cache slots, and p and q at each draft (or a
    block's tests)."""
    n, chars, last, closing, ending = _round_chars(r, vocab)
    st.markdown(f"Round {j + 1} ({md(r.scheme)}): the cache holds **n = {n}** keys; the last token **{md(last)}** "
                f"and the drafts **{' '.join(md(c) for c in chars) or '(none)'}** are fed to the target as "
                f"{words.count(len(chars) + 1, 'query', 'queries')}. **k = {r.accepted}** accepted, then a "
                f"{ending} **{closing}**." + (" (The context window slid before this round.)" if r.slid else ""))
    queries = [f"{last} (last)"] + [f"{c} (draft {i + 1})" for i, c in enumerate(chars)]
    presenter.chart(plots_gpt.mask_pair(masks.lower_right_grid(n, len(chars)), masks.upper_left_grid(n, len(chars)),
                                        n, queries), key="gpt-mask")
    labels.update({n + 1 + i: vocab[t] for i, t in enumerate(r.drafts)})
    presenter.chart(plots_gpt.cache_slots(r.cache, len(chars), r.accepted, labels=labels), key="gpt-cache")
    if r.block is None:
        _draft_rows(r, vocab)
    else:
        _tests(r, vocab, "h: the block's stop probability")


def _tree_round(gen, j, r, vocab, labels) -> None:
    """Any other layout: the tree mask of its one target pass, the cache slots in the pass's order with the
    accepted path kept, and the walk's tests."""
    n, chars, last, closing, ending = _round_chars(r, vocab)
    names = tree_view.sibling_paths(r.parents)
    path = " → ".join(f"{names[i]} {chars[i]}" for i in r.accepted_nodes) or "no draft accepted"
    st.markdown(f"Round {j + 1} ({md(r.scheme)}): {words.count(len(r.drafts), 'drafted node')} after **n = {n}** "
                f"cached characters, fed to the target in one pass with the last token **{md(last)}** "
                f"({words.count(len(chars) + 1, 'query', 'queries')}); accepted path: **{md(path)}**, then a "
                f"{ending} **{closing}**.")
    cached = [plots_gpt.show_char(vocab[t]) for t in (gen.prompt_ids + gen.tokens)[:n]] if not r.slid else []
    mask = tree_view.round_mask(r.parents, chars, last, cached)
    presenter.chart(plots_tree.mask_figure(mask["grid"], mask["rows"], mask["columns"],
                                           f"Round {j + 1}: the tree mask of its one target pass (last 8 cached "
                                           "keys)"), key="gpt-mask")
    labels.update({-(i + 1): vocab[t] for i, t in enumerate(r.drafts)})
    presenter.chart(plots_gpt.cache_slots(r.cache, len(chars), r.accepted, labels=labels,
                                          slots=tree_order(r.parents), path=r.accepted_nodes), key="gpt-cache")
    _tests(r, vocab, "min(1, p'/q'): the walk's acceptance")


def tree_order(parents) -> list:
    """The nodes in the verify pass's order (``specsim.gpt.tree_decode.flatten``, imported with the model)."""
    from specsim.gpt import tree_decode
    return tree_decode.flatten(parents, PASS_ORDER)


def _draft_rows(r, vocab) -> None:
    """A chain's drafts: p and q at each, at most three panels a chart (their titles fit a phone)."""
    p_rows, q_rows = r.p_rows.tolist(), r.q_rows.tolist()
    for s in range(0, max(len(r.drafts), 1), DRAFTS_PER_CHART):
        e = s + DRAFTS_PER_CHART
        fig = plots_gpt.draft_rows(vocab, p_rows[s:e], q_rows[s:e], r.drafts[s:e], r.acceptance[s:e], r.u[s:e],
                                   r.accepted_flags[s:e])
        if len(r.drafts) > DRAFTS_PER_CHART:
            fig.update_layout(title_text=f"{words.span('draft', s + 1, min(e, len(r.drafts)), len(r.drafts))}: "
                                         "p and q, the draft outlined")  # one line at 420 px
        presenter.chart(fig, key="gpt-rows" if s == 0 else f"gpt-rows-{s}")


def _tests(r, vocab, what: str) -> None:
    """The tests the round made, in order (``Verdict.tests``): node, token, the value its coin is compared
    with, the coin, and what the test decided (kept or not; a block's coin: up when u < h)."""
    names = tree_view.sibling_paths(r.parents)
    rows = []
    for t in r.verdict.tests:
        value = t["acceptance"] if "acceptance" in t else t["h"]
        said = ("kept ✓" if t["accepted"] else "rejected ✗") if "accepted" in t else ("u < h ✓" if t["stop"] else "✗")
        rows.append({"node": names[t["node"]], "token": plots_gpt.show_char(vocab[r.drafts[t["node"]]]),
                     what: round(float(value), 4), "u": round(float(t["u"]), 4), "test": said})
    plain.table(rows)
    st.caption("Each test in the order the walk made it; an untested node has no coin." if r.block is None else
               "A block keeps the drafts up to the last position whose coin comes up (u < h), then one more token.")
