"""One toy model for every toy page, its editor, and pages that remember (AppTest).

The editor (a dialog opened under the model picker) holds a ``st.data_editor``, which AppTest cannot type
into: these tests write the table the editor keeps in the session (``model_editor.DRAFT``, what the editor
reads and every button acts on) and press the editor's real buttons; tests/test_browser.py types into the
table itself.
"""
from __future__ import annotations

from fractions import Fraction as F

import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest import open_page as open_app_page, stepped, tables  # noqa: E402 (puts app/ on sys.path)

from parts import cached, model_editor, widgets  # noqa: E402
from specsim import exact, toy  # noqa: E402
from specsim.labs import family  # noqa: E402
from specsim.schemes import Chain  # noqa: E402

TOY_PAGES = {  # page -> the key of its model picker
    "views/stepper.py": "stepper", "views/residual.py": "res", "views/exactness.py": "exact",
    "views/speedup.py": "sp", "views/pitfalls.py": "pit", "views/workbench.py": "wb", "views/trees.py": "trees",
}


def ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def open_page(path: str, params: dict | None = None) -> AppTest:
    return open_app_page(path, params, timeout=90)


def go(at: AppTest, path: str, params: dict | None = None) -> AppTest:
    """Move to another page as the sidebar does: the browser drops the address's parameters (AppTest keeps
    them), so they are cleared here; ``params``: a link's."""
    at.query_params.clear()
    at.query_params.update(params or {})
    return ok(at.switch_page(path).run())


def open_editor(at: AppTest) -> dict:
    at.button(key="model-editor-button").click().run()  # the dialog under the picker
    assert ok(at).session_state[model_editor.OPEN] and at.button(key="model-editor-use")
    return at.session_state[model_editor.DRAFT]


def write_table(at: AppTest, rows: dict) -> None:
    """Set table rows (index -> cells) as a person typing into the editor would, then rerun."""
    d = dict(at.session_state[model_editor.DRAFT])
    table = [list(r) for r in d["rows"]]
    for i, cells in rows.items():
        table[i] = list(cells)
    at.session_state[model_editor.DRAFT] = {**d, "rows": table, "version": d["version"] + 1}
    ok(at.run())


def edited_seed() -> toy.ToyModel:
    """The seed model with p and q after "a" (every page's default context) changed."""
    data = toy.load_model("seed").to_dict()
    data["target"]["a"], data["draft"]["a"] = ["1/4", "1/4", "1/2"], ["1/2", "1/4", "1/4"]
    return toy.model_from_dict({**data, "name": "edited"})


# -- the editor ----------------------------------------------------------------------------------

def test_an_edited_model_reaches_every_toy_page():
    at = open_page("views/stepper.py")
    open_editor(at)
    write_table(at, {0: ["1", "1", "2"], 1: ["1/2", "1/4", "1/4"]})  # p after "a" as weights: normalize
    at.button(key="model-editor-normalize").click().run()
    at.button(key="model-editor-use").click().run()
    ok(at)
    want = edited_seed()
    assert not at.session_state[model_editor.OPEN]  # "use this model" closes the dialog
    assert at.session_state[model_editor.CHOICE] == model_editor.EDITED
    assert toy.loads_model(at.session_state[model_editor.EDITED_JSON]) == want
    assert at.session_state["stepper"]["settings"][0] == want.to_json()  # the stepper plays the edited model
    seed = toy.load_model("seed")
    for path, key in TOY_PAGES.items():
        go(at, path)
        assert at.selectbox(key=f"{key}-model").value == model_editor.EDITED, path
    # what each page computes is the edited model's, not the seed model's
    go(at, "views/trees.py")
    assert at.session_state["trees"]["settings"][0] == want.to_json()
    go(at, "views/residual.py")
    assert at.text_input(key="res-p").value == "1/4, 1/4, 1/2" and at.text_input(key="res-q").value == "1/2, 1/4, 1/4"
    go(at, "views/exactness.py")
    assert "model **edited**" in at.success[0].value
    go(at, "views/speedup.py")
    shown = tables(at)[-1]["exact E[tokens]"].tolist()
    assert shown == [widgets.fmt(exact.round_distribution(want, ("a",), Chain(g)).expected_tokens) for g in range(1, 6)]
    assert shown != [widgets.fmt(exact.round_distribution(seed, ("a",), Chain(g)).expected_tokens) for g in range(1, 6)]
    go(at, "views/workbench.py")
    mine = next(r for r in family.grid(want, ("a",), 2, 2) if (r["beta"], r["lam"]) == (1, 1))
    metric = next(m for m in at.metric if m.label == "E[tokens per round]")
    assert metric.value == widgets.fmt(mine["expected_tokens"])
    go(at, "views/pitfalls.py")
    rule = at.selectbox(key="pit-rule").value
    lab = {r.name: r for r in cached.pitfall_lab(want.to_json(), ("a",), "chain:2", 2)}
    metric = next(m for m in at.metric if m.label.startswith("TV to the intended"))
    from specsim.plots import charts
    assert metric.value == charts.exact_dec(lab[rule].total_variation)


def test_normalize_divides_every_row_by_its_sum():
    at = open_page("views/exactness.py")
    open_editor(at)
    write_table(at, {2: ["2", "0.5", "1.5"], 5: ["1", "1", "1"]})
    assert at.error and "row 3 (p after “b”)" in at.error[0].value  # not a probability row yet
    at.button(key="model-editor-normalize").click().run()
    ok(at)
    rows = at.session_state[model_editor.DRAFT]["rows"]
    assert rows[2] == ["1/2", "1/8", "3/8"] and rows[5] == ["1/3", "1/3", "1/3"]
    assert not at.error
    at.button(key="model-editor-use").click().run()
    model = toy.loads_model(at.session_state[model_editor.EDITED_JSON])
    assert model.p(("b",)) == (F(1, 2), F(1, 8), F(3, 8)) and model.q(("c",)) == (F(1, 3),) * 3
    assert "model **edited**" in ok(at).success[0].value  # the page below the editor proves the new model


@pytest.mark.parametrize("row, cells, named", [
    (2, ["1/10", "1/2", "3/10"], "row 3 (p after “b”): sums to 9/10, not 1"),
    (1, ["1/2", "x", "1/10"], "row 2 (q after “a”), token 'b'"),
    (4, ["-1/10", "3/5", "1/2"], "row 5 (p after “c”): entry -1/10 is negative"),
    (3, ["1/2", "", "1/2"], "row 4 (q after “b”), token 'b': the cell is empty"),
    (0, ["1/2", "1/2", "9" * 50], "row 1 (p after “a”), token 'c': 50 characters; the limit is 40"),
])
def test_a_bad_row_is_one_error_naming_it_and_the_model_stays(row, cells, named):
    at = open_page("views/stepper.py")
    open_editor(at)
    write_table(at, {row: cells})
    assert len(at.error) == 1 and named in at.error[0].value, [e.value for e in at.error]
    assert "\n" not in at.error[0].value
    at.button(key="model-editor-use").click().run()
    ok(at)
    assert model_editor.CHOICE not in at.session_state or at.session_state[model_editor.CHOICE] == "seed"
    assert at.session_state["stepper"]["settings"][0] == toy.load_model("seed").to_json()
    assert len(at.error) == 1  # still the one line


def test_tokens_and_order_reshape_the_table():
    at = open_page("views/pitfalls.py")
    open_editor(at)
    at.text_input(key="model-editor-tokens").set_value("a b").run()
    d = ok(at).session_state[model_editor.DRAFT]
    assert d["vocab"] == ["a", "b"] and d["rows"] == [["1/2", "1/2"]] * 4
    at.number_input(key="model-editor-order").set_value(2).run()
    d = ok(at).session_state[model_editor.DRAFT]
    assert d["order"] == 2 and len(d["rows"]) == 8
    at.text_input(key="model-editor-tokens").set_value("a a").run()
    assert len(ok(at).error) == 1 and "token 'a' appears more than once" in at.error[0].value
    at.text_input(key="model-editor-tokens").set_value(" ".join("abcdefghi")).run()
    assert "between 1 and 8 tokens" in ok(at).error[0].value
    at.button(key="model-editor-use").click().run()  # a uniform order-2 model over a, b
    model = toy.loads_model(ok(at).session_state[model_editor.EDITED_JSON])
    assert model.order == 2 and model.vocab == ("a", "b") and model.p(("a", "b")) == (F(1, 2), F(1, 2))


def test_residual_rows_can_become_the_model():
    at = open_page("views/residual.py")
    at.text_input(key="res-p").set_value("1/4, 1/4, 1/2").run()
    at.text_input(key="res-q").set_value("1/2, 1/4, 1/4").run()
    at.button(key="res-promote").click().run()
    ok(at)
    assert toy.loads_model(at.session_state[model_editor.EDITED_JSON]) == edited_seed()
    assert any("Every toy page now uses" in s.value for s in at.success)
    go(at, "views/stepper.py")
    assert at.session_state["stepper"]["settings"][0] == edited_seed().to_json()
    go(at, "views/residual.py")  # other tokens: a new order-1 model with these rows after every token
    at.text_input(key="res-tokens").set_value("x y").run()
    at.button(key="res-promote").click().run()
    model = toy.loads_model(ok(at).session_state[model_editor.EDITED_JSON])
    assert model.vocab == ("x", "y") and model.p(("y",)) == (F(1, 2), F(1, 2))


def test_an_upload_is_the_model_of_every_page_without_uploading_again():
    at = open_page("views/exactness.py")
    at.selectbox(key="exact-model").set_value(widgets.UPLOAD).run()
    at.file_uploader(key="exact-upload").upload("z.json", toy.load_model("zeros").to_json().encode()).run()
    ok(at)
    go(at, "views/stepper.py")
    assert at.selectbox(key="stepper-model").value == widgets.UPLOAD and not at.error
    assert at.session_state["stepper"]["settings"][0] == toy.load_model("zeros").to_json()
    at.selectbox(key="stepper-model").set_value("order2").run()
    go(at, "views/workbench.py")
    assert at.selectbox(key="wb-model").value == "order2"


# -- pages remember ------------------------------------------------------------------------------

def test_the_stepper_keeps_seed_gamma_and_event_through_another_page():
    at = ok(stepped(seed=5, gamma=2, clicks=3, timeout=90))
    where = (at.session_state["stepper"]["player"].round, at.session_state["stepper"]["player"].event)
    assert where == (0, 3)
    go(at, "views/exactness.py")
    assert "stepper-seed" not in at.session_state  # Streamlit dropped the widget: memory brings it back
    go(at, "views/stepper.py")
    assert at.number_input(key="stepper-seed").value == 5 and at.number_input(key="stepper-gamma").value == 2
    player = at.session_state["stepper"]["player"]
    assert (player.round, player.event) == where and at.slider(key="stepper-slider-0").value == 4


@pytest.mark.parametrize("path, widget, key, value", [
    ("views/speedup.py", "slider", "sp-alpha", 0.63),
    ("views/speedup.py", "slider", "sp-cost", 0.2),
    ("views/exactness.py", "selectbox", "exact-pitfall", "resample-from-target"),
    ("views/exactness.py", "number_input", "exact-round-gamma", 2),
    ("views/workbench.py", "select_slider", "wb-beta", 2),
    ("views/workbench.py", "selectbox", "wb-ctx", ("c",)),
    ("views/pitfalls.py", "selectbox", "pit-rule", "always-accept"),
    ("views/pitfalls.py", "number_input", "pit-gamma", 3),
    ("views/trees.py", "text_input", "trees-shape", "2,1"),
    ("views/trees.py", "number_input", "trees-seed", 9),
    ("views/residual.py", "text_input", "res-q", "1/3, 1/3, 1/3"),
    ("views/audit.py", "selectbox", "audit-engine", "keep every draft (bug)"),
    ("views/audit.py", "text_input", "audit-prompt", "for i in"),
    ("views/audit.py", "select_slider", "audit-n", 200),
    ("views/audit.py", "selectbox", "audit-topk", 5),
    ("views/audit.py", "number_input", "audit-seed", 7),
])
def test_a_setting_survives_a_round_trip_through_another_page(path, widget, key, value):
    at = open_page(path)
    getattr(at, widget)(key=key).set_value(value).run()
    ok(at)
    go(at, "views/home.py")
    go(at, path)
    assert getattr(at, widget)(key=key).value == value


def test_a_remembered_context_that_the_new_model_lacks_falls_back():
    at = open_page("views/stepper.py")
    at.selectbox(key="stepper-ctx").set_value(("c",)).run()
    at.selectbox(key="stepper-model").set_value("zeros").run()  # contexts x, y, z
    assert ok(at).selectbox(key="stepper-ctx").value == ("x",)


# -- links win on load ---------------------------------------------------------------------------

def test_query_parameters_win_on_load_and_then_the_widgets_do():
    at = open_page("views/stepper.py", {"seed": "7", "scheme": "block:2", "context": "b"})
    assert at.number_input(key="stepper-seed").value == 7 and at.number_input(key="stepper-gamma").value == 2
    assert at.radio(key="stepper-kind").value == "block" and at.selectbox(key="stepper-ctx").value == ("b",)
    at.number_input(key="stepper-seed").set_value(9).run()  # the address still says 7: the widget wins now
    assert ok(at).number_input(key="stepper-seed").value == 9
    go(at, "views/home.py")
    go(at, "views/stepper.py")
    assert at.number_input(key="stepper-seed").value == 9
    at.query_params["seed"] = "3"  # a new link arrives
    ok(at.run())
    assert at.number_input(key="stepper-seed").value == 3


def test_a_link_to_speedup_beats_a_remembered_alpha():
    at = open_page("views/speedup.py")
    at.slider(key="sp-alpha").set_value(0.5).run()
    go(at, "views/home.py")
    go(at, "views/speedup.py", {"alpha": "0.9", "c": "0.2"})
    assert at.slider(key="sp-alpha").value == 0.9 and at.slider(key="sp-cost").value == 0.2


def test_the_tiny_gpt_settings_survive_a_round_trip_through_another_page():
    """The Tiny GPT's form (prompt, γ, drafter, seed) is remembered like a toy page's settings."""
    at = open_page("views/tiny_gpt.py")
    at.text_area(key="gpt-prompt").set_value("x = 1\nx = ")
    at.number_input(key="gpt-gamma").set_value(6)
    at.selectbox(key="gpt-draft").set_value("lookup:3")
    at.number_input(key="gpt-seed").set_value(7)
    ok(at.run())
    go(at, "views/speedup.py")
    go(at, "views/tiny_gpt.py")
    assert (at.text_area(key="gpt-prompt").value, at.number_input(key="gpt-gamma").value,
            at.selectbox(key="gpt-draft").value, at.number_input(key="gpt-seed").value) == ("x = 1\nx = ", 6, "lookup:3", 7)
    assert not at.error
