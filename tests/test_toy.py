"""Toy models: presets, JSON round trip, and every validation error."""
import json
from fractions import Fraction as F

import pytest

from specsim.toy import PRESETS, ModelError, load_model, loads_model, model_from_dict, random_model

SEED = {"name": "seed", "vocab": ["a", "b", "c"], "order": 1,
        "target": {"a": ["3/5", "3/10", "1/10"], "b": ["1/5", "1/2", "3/10"], "c": ["3/10", "1/5", "1/2"]},
        "draft": {"a": ["1/2", "2/5", "1/10"], "b": ["2/5", "3/10", "3/10"], "c": ["1/10", "1/5", "7/10"]}}


def test_seed_preset_matches_the_reference_table():
    m = load_model("seed")
    assert m.p(("a",)) == (F(3, 5), F(3, 10), F(1, 10))
    assert m.q(("c",)) == (F(1, 10), F(1, 5), F(7, 10))
    assert [m.alpha((c,)) for c in "abc"] == [F(9, 10), F(4, 5), F(4, 5)]
    assert [m.residual((c,)) for c in "abc"] == [[1, 0, 0], [0, 1, 0], [1, 0, 0]]


def test_json_round_trip_and_file_loading(tmp_path):
    for name in PRESETS:
        m = load_model(name)
        again = loads_model(m.to_json())
        assert (again.vocab, again.order, dict(again.target), dict(again.draft)) == \
            (m.vocab, m.order, dict(m.target), dict(m.draft))
    path = tmp_path / "m.json"
    path.write_text(json.dumps(SEED))
    assert load_model(str(path)).p(("b",)) == load_model("seed").p(("b",))


def test_decimals_and_integers_are_exact():
    data = json.loads(json.dumps(SEED))
    data["target"]["a"] = ["0.6", "0.3", "0.1"]
    data["draft"]["a"] = [1, 0, "0"]
    m = model_from_dict(data)
    assert m.p(("a",)) == (F(3, 5), F(3, 10), F(1, 10))
    assert m.q(("a",)) == (1, 0, 0)


def test_order_two_contexts():
    m = load_model("order2")
    assert m.order == 2 and len(m.contexts()) == 4
    assert m.parse_context("1 0") == ("1", "0")
    assert m.p(("0", "1", "0")) == m.p(("1", "0"))  # only the last two tokens count


def _bad(**changes):
    data = json.loads(json.dumps(SEED))
    for path, value in changes.items():
        table, _, key = path.partition("__")
        if key:
            data[table][key] = value
        elif value is None:
            del data[table]
        else:
            data[table] = value
    return data


@pytest.mark.parametrize("data, message", [
    (_bad(target__a=["3/5", "3/10"]), r"target\['a'\]: expected a list of 3 probabilities, got 2"),
    (_bad(target__a=["3/5", "-1/10", "1/2"]), r"target\['a'\]: entry -1/10 is negative"),
    (_bad(target__a=["3/5", "x", "1/2"]), r"target\['a'\]\[1\]: 'x' is not a number"),
    (_bad(draft__b=["1/2", "1/2", "1/2"]), r"draft\['b'\]: row sums to 3/2, not 1"),
    (_bad(extra=1), r"unknown key\(s\) \['extra'\]"),
    (_bad(vocab=None), r"missing key\(s\) \['vocab'\]"),
    (_bad(order=0), "order must be an integer >= 1"),
    (_bad(vocab=["a", "a", "c"]), "'a' appears more than once"),
    ({**SEED, "target": {k: v for k, v in SEED["target"].items() if k != "c"}}, r"target: context 'c' is missing"),
    ([1, 2], "must be a JSON object"),
])
def test_invalid_models_name_the_problem(data, message):
    with pytest.raises(ModelError, match=message):
        model_from_dict(data)


def test_unreadable_sources(tmp_path):
    with pytest.raises(ModelError, match="unknown preset 'nope'"):
        load_model("nope")
    with pytest.raises(ModelError, match="does not exist"):
        load_model(str(tmp_path / "missing.json"))
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ModelError, match="is not valid JSON"):
        load_model(str(bad))


def test_unknown_context_token():
    with pytest.raises(ModelError, match="token 'z' .* not in the vocabulary"):
        load_model("seed").parse_context("z")


def test_random_models_are_valid_and_reproducible():
    a, b = random_model(5, seed=3), random_model(5, seed=3)
    assert dict(a.target) == dict(b.target)
    for ctx in a.contexts():
        assert sum(a.p(ctx)) == 1 and sum(a.q(ctx)) == 1
