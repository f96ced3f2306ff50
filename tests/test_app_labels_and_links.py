"""Labels and links across pages: a broken rule on Exactness, the K legend, pitfall titles, Home's links, the bench note."""
from __future__ import annotations

import json


from specsim import exact, toy

from specsim.labs import pitfalls

from specsim.plots import charts as plots

from tests.apptest import open_page, tables  # noqa: E402 (puts app/ on sys.path)


# -- 1. Exactness: a broken rule beside the correct one ------------------------------------------

def pick_broken_rule(name: str):
    """The Exactness page with ``name`` picked, and the library's exact TV for the page's settings."""
    at = open_page("views/exactness.py")
    first = at.selectbox(key="exact-pitfall").value  # the section opens on a broken rule, its verdict shown
    assert first is not None and first != "correct" and any(m.label.startswith("TV(broken rule") for m in at.metric)
    at.selectbox(key="exact-pitfall").set_value(name).run()
    assert not at.exception, [e.value for e in at.exception]
    context, gamma = at.selectbox(key="exact-ctx").value, at.selectbox(key="exact-table-gamma").value
    n_tokens = int(at.number_input(key="exact-n").value)
    produced, wanted = pitfalls.joints(pitfalls.get(name), toy.load_model("seed"), context, gamma, n_tokens)
    metric = next(m for m in at.metric if m.label.startswith("TV(broken rule"))
    return at, metric.value, exact.joint_total_variation(produced, wanted)


def test_exactness_shows_a_broken_rules_exact_tv():
    at, shown, tv = pick_broken_rule("resample-from-target")
    assert tv != 0 and shown == str(tv)  # the exact fraction, as the library computes it
    assert any(w.value.startswith("Not exact") for w in at.warning)
    table = tables(at)[-1]
    assert list(table.columns) == ["next tokens", "broken rule", "intended (target)", "equal"]
    assert (table["equal"] == "✗").any()


def test_exactness_shows_tv_zero_for_an_exact_variant():
    at, shown, tv = pick_broken_rule("no-bonus-token")
    assert tv == 0 and shown == "0"
    assert any(s.value.startswith("Exact here") for s in at.success)


# -- 2. the K chart's legend ---------------------------------------------------------------------

def test_k_legend_names_the_k_equals_gamma_bar():
    from fractions import Fraction as F
    fig = plots.accepted_distribution([F(1, 2), F(1, 4), F(1, 4)], [F(1, 2), F(1, 4), F(1, 4)])
    iid = next(t for t in fig.data if t.name.startswith("i.i.d."))
    assert iid.name == "i.i.d. formula: α^k(1 − α) for k < γ, α^γ for k = γ"


# -- 3. every rule shows a title, never its slug --------------------------------------------------

def test_every_rule_has_a_human_title():
    names = list(pitfalls.PITFALLS) + list(pitfalls.TREE_PITFALLS)
    for name in names:
        title = pitfalls.DESCRIPTIONS[name].get("title")
        assert title and title != name and "-" not in title.split()[0], name


def test_pitfalls_page_lists_titles_not_slugs():
    at = open_page("views/pitfalls.py")
    shown = at.selectbox(key="pit-rule").options
    assert len(shown) == len(pitfalls.PITFALLS)
    assert not set(shown) & set(pitfalls.PITFALLS), set(shown) & set(pitfalls.PITFALLS)
    table = tables(at)[-1]  # "Every rule on this model"
    assert not set(table["rule"]) & set(pitfalls.PITFALLS)
    exact_page = open_page("views/exactness.py")
    assert not set(exact_page.selectbox(key="exact-pitfall").options) & set(pitfalls.PITFALLS)


# -- 4. Home: a way back to the lesson, blurbs in full ------------------------------------------

def test_home_from_a_lesson_links_back():
    at = open_page("views/home.py", {"from_lesson": "1"})
    assert any(el.proto.label == "← back to lesson 1" for el in at.get("page_link"))
    plain = open_page("views/home.py")
    assert not any("back to lesson" in el.proto.label for el in plain.get("page_link"))


def test_lesson_ones_home_link_carries_the_lesson():
    at = open_page("views/lessons.py", {"lesson": "1"})
    home = [el.proto for el in at.get("page_link") if el.proto.page == ""]  # Home is the app's root url
    assert home and all("from_lesson=1" in p.query_string for p in home), home


def test_home_blurbs_are_shown_whole():
    from parts import nav
    at = open_page("views/home.py")
    labels = [el.proto.label for el in at.get("page_link")]
    captions = [c.value for c in at.caption]
    for page in nav.PAGES[1:]:
        # a page link's label is one line cut with "…" in the browser: the blurb is a caption, in full
        assert f"**{page.title}**" in labels and page.blurb in captions, page.title
        assert not any(page.blurb in label for label in labels)


# -- 5. the Trees bench: rows that did the same work -----------------------------------------

def test_bench_note_names_rows_with_the_same_work_and_their_spread():
    from sections import tree_gpt_section
    rows = [{"scheme": "chain:4", "tokens_per_pass": 2.5, "speedup": 1.57},
            {"scheme": "block:4", "tokens_per_pass": 2.75, "speedup": 1.8},
            {"scheme": "tree:1,1,1,1", "tokens_per_pass": 2.5, "speedup": 2.04}]
    note = tree_gpt_section.same_work_note(rows)
    assert "`chain:4` and `tree:1,1,1,1`" in note and "block:4" not in note
    assert "1.57×, 2.04×" in note and "spread of 30%" in note and "noise" in note  # 2.04 / 1.57 − 1 = 29.9 %
    assert tree_gpt_section.same_work_note(rows[:2]) is None
    json.dumps(note)  # plain text
