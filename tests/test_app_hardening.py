"""The app against a hostile visitor's values: the remembered-settings store is
bounded in bytes and keeps only checked values; an uploaded number is parsed with its size checked;
a widget value of the wrong type, sent by hand over the websocket, is ignored."""
from __future__ import annotations

import json
import math
from fractions import Fraction

import pytest
from streamlit.proto.WidgetStates_pb2 import WidgetState

from tests.apptest import ENTRY, PAGES as ALL_PAGES, ROOT, open_page  # noqa: F401 (puts app/ on sys.path)
from parts import guard, memory  # noqa: E402

PAGES = [p for p in ALL_PAGES if p != "views/glossary.py"]  # every page with widgets (the glossary has none to forge)
# a field of the wrong type for each kind of widget (what its browser never sends)
WRONG = {"selectbox": ("int_value", 3), "radio": ("double_value", 2.5), "slider": ("string_value", "x"),
         "number_input": ("string_value", "x"), "select_slider": ("int_value", 7),
         "text_input": ("int_value", 3), "text_area": ("double_array_value", [1.0]),
         "toggle": ("string_value", "x"), "checkbox": ("string_value", "x"),
         "segmented_control": ("int_value", 3), "multiselect": ("int_value", 3), "button": ("string_value", "x")}


def forge(widget, field: str, value) -> None:
    """Make AppTest send ``value`` in ``field`` for ``widget`` on the next run, as a hand-made websocket
    message would (AppTest hands the server the same ``WidgetState`` protos a browser sends)."""
    class Forged(type(widget)):
        @property
        def _widget_state(self):
            w = WidgetState()
            w.id = self.id
            if isinstance(value, list):
                getattr(w, field).data.extend(value)
            else:
                setattr(w, field, value)
            return w
    widget.__class__ = Forged


def values(at) -> dict:
    return {(kind, w.key): w.value for kind in WRONG if kind != "button" for w in at.get(kind) if w.key}


# -- a widget value of the wrong type ---------------------------------------------------------------

@pytest.mark.parametrize("path", PAGES)
def test_every_widget_given_a_value_of_the_wrong_type_keeps_its_value(path):
    at = open_page(path, timeout=300)
    before, forged = values(at), 0
    for kind, (field, value) in WRONG.items():
        for w in at.get(kind):
            forge(w, field, value)
            forged += 1
    at.run(timeout=300)
    assert forged >= 2 and not at.exception, [e.value for e in at.exception]
    after = values(at)
    assert {k: after[k] for k in before if k in after} == {k: v for k, v in before.items() if k in after}


def test_an_option_the_widget_does_not_offer_is_ignored():
    at = open_page("views/stepper.py")
    model = at.selectbox(key="stepper-model").value
    forge(at.selectbox(key="stepper-model"), "string_value", "../../etc/passwd")
    forge(at.radio(key="stepper-kind"), "string_value", "<b>no such kind</b>")
    at.run()
    assert not at.exception and not at.error
    assert at.selectbox(key="stepper-model").value == model and at.radio(key="stepper-kind").value == "chain"


def test_the_guard_is_installed_on_this_streamlit():
    from streamlit.runtime.state import session_state
    assert guard.install() and getattr(session_state.SessionState.set_widgets_from_proto, guard.MARK)


def test_a_hand_made_websocket_message_puts_an_integer_into_a_selectbox(tmp_path):
    """Against ``streamlit run app``: the message a browser never sends, read as nothing happened."""
    from tests.st_ws_client import Session
    from tests.test_browser import start_server
    proc, url, _ = start_server(tmp_path)
    try:
        s = Session(url)
        first = s.run("stepper", timeout=120)
        ids = {e.selectbox.label: e.selectbox.id for _, k, e in first.elements if k == "selectbox"}
        sliders = {e.slider.label: e.slider.id for _, k, e in first.elements if k == "slider"}
        assert "toy model" in ids and sliders
        forged = s.run("stepper", timeout=120, values={ids["toy model"]: ("int_value", 3),
                                                       next(iter(sliders.values())): ("string_value", "x")})
        kinds = [k for _, k, _ in forged.elements]
        assert "exception" not in kinds and "plotly_chart" in kinds, kinds
        s.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        proc.log.close()


# -- the remembered-settings store -------------------------------------------------------------------

@pytest.fixture
def store(monkeypatch):
    """An empty server-side store and a browser id we choose (``who[0]``)."""
    memory._store().clear()
    memory._sizes().clear()
    memory._sizes()["total"] = 0
    who = ["b0"]
    monkeypatch.setattr(memory, "_browser", lambda: who[0])
    yield who
    memory._store().clear()
    memory._sizes().clear()
    memory._sizes()["total"] = 0


def test_one_browser_cannot_store_more_than_its_bytes(store):
    for i in range(memory.KEYS):
        memory._save(f"k{i}", "x" * memory.MAX_CHARS)  # 200 keys of 1,000 characters: 200 kB asked
    kept = memory._store()["b0"]
    assert sum(memory.size(k, v) for k, v in kept.items()) == memory.stored_bytes("b0") <= memory.BYTES_PER_BROWSER
    assert 0 < len(kept) < memory.KEYS
    memory._save("k0", "short")  # a kept key may still change, and shrink
    assert memory._store()["b0"]["k0"] == "short"
    assert memory.stored_bytes("b0") == sum(memory.size(k, v) for k, v in memory._store()["b0"].items())


def test_every_browser_together_stay_under_the_total(store):
    n = memory.BYTES // memory.BYTES_PER_BROWSER * 3  # three times the browsers the total holds when full
    for b in range(n):
        store[0] = f"b{b}"
        for i in range(40):
            memory._save(f"k{i}", "y" * memory.MAX_CHARS)
    assert memory.stored_bytes() <= memory.BYTES
    assert memory.stored_bytes() == sum(memory.size(k, v) for saved in memory._store().values()
                                        for k, v in saved.items())
    assert f"b{n - 1}" in memory._store() and "b0" not in memory._store()  # the least recently seen went first


@pytest.mark.parametrize("value", ["x" * (memory.MAX_CHARS + 1), 10**401, float("nan"), math.inf, ["a"], {"k": 1},
                                   b"bytes", tuple("a" * 65 for _ in range(2)), tuple(str(i) for i in range(17)),
                                   Fraction(1, 10**20), object()])
def test_a_value_that_is_not_storable_is_never_kept(store, value):
    assert not memory.storable(value)
    memory._save("k", value)
    assert "k" not in memory._store().get("b0", {})


def test_a_restored_value_of_the_wrong_kind_or_range_gives_the_default(store, monkeypatch):
    """A planted store (as a forged browser or another version of the app could have left it) restores only
    what is storable, and the page puts into its widgets only what they may hold: the stepper opens on its
    defaults, without an error."""
    from streamlit.testing.v1 import AppTest
    planted = {"stepper-seed": "12", "stepper-speed": 99.0, "stepper-gamma": 10**401, "stepper-kind": 3,
               "stepper-ctx": ("a",) * 40, 7: "not a key"}
    memory._store()["b0"] = dict(planted)
    at = AppTest.from_file(str(ENTRY), default_timeout=120)
    at.run()
    at.switch_page("views/stepper.py").run()
    assert not at.exception and not at.error
    assert at.number_input(key="stepper-seed").value == 0 and at.select_slider(key="stepper-speed").value == 0.6
    assert at.radio(key="stepper-kind").value == "chain" and at.selectbox(key="stepper-ctx").value == ("a",)
    assert memory.PREFIX + "stepper-gamma" not in at.session_state or \
        at.session_state[memory.PREFIX + "stepper-gamma"] != 10**401
    assert all(memory.storable(v) for v in memory._store()["b0"].values())


def test_remember_checks_kind_and_range_before_the_widget_sees_the_value():
    ok = memory._fits
    assert ok("k", 3, 0, lambda v: 0 <= v <= 5) and not ok("k", 9, 0, lambda v: 0 <= v <= 5)
    assert not ok("k", "3", 0, lambda v: 0 <= v <= 5)  # the range check handed a string is just False
    assert not ok("k", True, 0, None) and not ok("k", 3, "normal", None) and ok("k", 2, 0.5, None)
    assert not ok("k", None, 3, None) and ok("k", None, "normal", lambda v: v is None)


# -- numbers in an upload -------------------------------------------------------------------------

BENCH = {"context": 40, "runs": [{"threads": 1, "crossover_batch": 4, "predicted_crossover_batch": 8, "rows": [
    {"batch": 1, "gamma": 0, "speedup": 1.0, "predicted_speedup": 1.0},
    {"batch": 1, "gamma": 2, "speedup": 1.4, "predicted_speedup": 1.8}]}]}


def _bench_with(speedup_text: str) -> bytes:
    return json.dumps(BENCH).replace('"speedup": 1.4', f'"speedup": {speedup_text}').encode()


@pytest.mark.parametrize("number", ["9" * 401, "-" + "9" * 401, "1e999", "NaN", "Infinity", "1" + "0" * 31,
                                    "1e300", "true", '"1.4"'])
def test_an_uploaded_number_out_of_range_is_one_error_line(number):
    at = open_page("views/serving.py", timeout=120)
    at.file_uploader(key="srv-upload").upload("bench.json", _bench_with(number), "application/json").run()
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "\n" not in errors[0] and "Traceback" not in errors[0], errors
    assert str(ROOT) not in errors[0] and "/" not in errors[0].replace("`", ""), errors


def test_an_uploaded_bench_in_range_is_still_drawn():
    at = open_page("views/serving.py", timeout=120)
    at.file_uploader(key="srv-upload").upload("bench.json", _bench_with("12345"), "application/json").run()
    assert not at.exception and not at.error
