"""One registry of scheme families, each declaring its grammar as data; callers ask questions, never a kind.

Two halves:

* nothing in ``specsim/`` or ``app/`` outside ``specsim/schemes/`` reads a kind-flag (``fixed_gamma``,
  ``plain``, ...), checks a scheme's type (``type(s) is Chain``, ``isinstance(s, Tree)``), compares a kind
  with a family's keyword (``row["kind"] == "tree"``) or reads the registry's dict directly;
* a new family declared in this one file, ``greedy:G`` (the drafter's top token verified as a point mass),
  reaches ``parse``, ``grammar_help``, the CLI's ``--scheme`` help, the budget comparison, the app's
  scheme picker and the Tiny GPT page with no other edit, and its reference is its own exact round, not the
  i.i.d. formula.
"""
from __future__ import annotations

import ast
import re
from fractions import Fraction as F
from pathlib import Path

import pytest

from specsim import exact, formulas
from specsim.labs import compare
from specsim.rule import CORRECT, RoundRule
from specsim.schemes import Chain, Param, families, grammar, grammar_help, parse, register
from specsim.toy import load_model

ROOT = Path(__file__).resolve().parents[1]
SEED = load_model("seed")

# -- nothing outside specsim/schemes asks a scheme's kind ----------------------------------------------------------
FLAGS = {"fixed_gamma", "plain", "token_wise", "stop_coins", "branches", "drawn_as_tree", "ordered", "adaptive",
         "chosen", "kernel_draw"}
SCHEME_CLASSES = {"Chain", "Block", "Tree", "ConfidenceChain", "DynamicTree"}
# attributes with a flag's name that are not a scheme's: argparse's --plain, the plain-decoding timings of a bench
NOT_A_SCHEME = {("*", "args", "plain"), ("specsim/gpt/measure/bench_schemes.py", "t", "plain")}


def _sources():
    for folder in ("specsim", "app"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if not rel.startswith("specsim/schemes/"):
                yield rel, ast.parse(path.read_text(encoding="utf-8"), rel)


def _receiver(node) -> str:
    return node.id if isinstance(node, ast.Name) else getattr(node, "attr", "")


def _is_kind(node) -> bool:
    """``x.kind``, ``x["kind"]`` or a variable named ``kind``."""
    return (isinstance(node, ast.Attribute) and node.attr == "kind") or \
        (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value == "kind") or \
        (isinstance(node, ast.Name) and node.id == "kind")


def _strings(node) -> set:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    return set()


def kind_questions(rel: str, tree) -> list:
    """Every place in one module that asks a scheme its kind, as 'path:line: what'."""
    kinds = set(families()) | {cls.keyword_of() for cls in families().values()}
    found = []
    for node in ast.walk(tree):
        where = f"{rel}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Attribute) and node.attr in FLAGS:
            who = _receiver(node.value)
            if ("*", who, node.attr) not in NOT_A_SCHEME and (rel, who, node.attr) not in NOT_A_SCHEME:
                found.append(f"{where}: reads the kind-flag .{node.attr}")
        if isinstance(node, ast.Attribute) and node.attr == "KINDS" and _receiver(node.value) == "grammar":
            found.append(f"{where}: reads the registry's dict (use specsim.schemes.families())")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance" \
                and len(node.args) == 2 and {_receiver(n) for n in ast.walk(node.args[1])} & SCHEME_CLASSES:
            found.append(f"{where}: isinstance of a scheme class")
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops) and \
                    any(isinstance(s, ast.Name) and s.id in SCHEME_CLASSES for s in sides):
                found.append(f"{where}: type(...) is a scheme class")
            if any(_is_kind(s) for s in sides) and any(_strings(s) & kinds for s in sides):
                found.append(f"{where}: compares a kind with a family's keyword")
    return found


def test_no_caller_outside_the_schemes_asks_a_scheme_its_kind():
    found = [f for rel, tree in _sources() for f in kind_questions(rel, tree)]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("line, what", [
    ("x = scheme.fixed_gamma", "kind-flag .fixed_gamma"),
    ("if type(s) is Chain: pass", "type(...) is a scheme class"),
    ("ok = isinstance(s, (Tree, int))", "isinstance of a scheme class"),
    ("ok = row['kind'] == 'tree'", "compares a kind"),
    ("ok = kind in ('confidence', 'dynamic')", "compares a kind"),
    ("k = schemes.grammar.KINDS['chain']", "registry's dict"),
])
def test_the_check_finds_each_kind_of_question(line, what):
    found = kind_questions("specsim/x.py", ast.parse(line))
    assert len(found) == 1 and what in found[0], found


def test_an_event_kind_and_argparse_plain_are_not_scheme_kinds():
    assert kind_questions("specsim/x.py", ast.parse("a = ev['kind'] == 'accept'\nb = args.plain\n")) == []


# -- the registry and its grammar, as data ----------------------------------------------------------------------------
def test_every_family_is_registered_once_in_the_grammars_order():
    assert list(families()) == ["chain", "block", "tree", "confidence", "dynamic"]
    assert [cls.syntax() for cls in families().values()] == [
        "chain:G", "block:G", "tree:W1,W2,...[:iid|distinct]", "chain:max=G,stop=T[,on=top|draft]",
        "tree:dynamic,budget=B,depth=D,topk=K"]
    assert grammar_help() == ("chain:G, block:G (G from 1 to 64), tree:W1,W2,...[:iid|distinct], "
                              "chain:max=G,stop=T[,on=top|draft], tree:dynamic,budget=B,depth=D,topk=K")


def test_a_second_options_form_for_one_keyword_is_refused():
    class Other(families()["confidence"]):
        kind, keyword = "other-confidence", "chain"  # chain:key=value is the confidence chain's already

    try:
        with pytest.raises(ValueError, match="already has an options form"):
            register(Other)
    finally:
        grammar.KINDS.pop("other-confidence", None)


def test_write_builds_what_parse_reads_for_every_family():
    for name in ("chain:4", "block:2", "tree:2,1", "tree:2,1:distinct", "chain:max=4,stop=0.4",
                 "chain:max=4,stop=1/3,on=draft", "tree:dynamic,budget=4,depth=2,topk=2"):
        s = parse(name)
        values = {p.name: p.text(getattr(s, p.attr)) for p in type(s).params}
        assert grammar.write(type(s), values) == name


# -- a new family in one file: greedy:G -------------------------------------------------------------------------------
def top(q) -> int:
    """The drafter's most probable token (ties to the lower index)."""
    return max(range(len(q)), key=lambda x: (q[x], -x))


class GreedyRule(RoundRule):
    """Draft the drafter's top token; as a point mass it is kept with p(x), else drawn from p without x."""

    name = "greedy-point-mass"

    def draft_row(self, q):
        x = top(q)
        return [F(int(i == x)) for i in range(len(q))]

    def accept(self, p, q, x):
        return min(1, p[x])

    def replacement(self, p, q):
        x = top(q)
        rest = 1 - p[x]
        return [0 if i == x else v / rest for i, v in enumerate(p)]


GREEDY = GreedyRule()


class Greedy(Chain):
    """greedy:G: G drafts, each the drafter's top token, each verified as a point mass."""

    kind = "greedy"
    summary = "the drafter's top token, verified as a point mass"
    params = (Param("G", "whole", "drafts per round", metavar="G", low=1, high="gamma", attr="gamma",
                    label="γ: draft length", start=3, key="gamma"),)
    _iid = False  # its reference is its own exact round: the i.i.d. formula does not describe it
    _chosen = True

    def _rule(self, rule):
        self.check_rule(rule)
        return GREEDY

    def check_rule(self, rule) -> None:
        if rule is not CORRECT and rule is not None:
            raise ValueError(f"greedy verification has its own rule; got rule {rule.name!r}")

    def enumerate(self, pair, context, rule=CORRECT, limit=None):
        return super().enumerate(pair, context, self._rule(rule), limit)

    def draft(self, q_at, u_draft, rule=CORRECT):
        return super().draft(q_at, u_draft, self._rule(rule))

    def verify(self, drafts, p_rows, q_rows, u_test, u_final, rule=CORRECT, parents=None):
        return super().verify(drafts, p_rows, q_rows, u_test, u_final, self._rule(rule), parents)


@pytest.fixture
def greedy(registered):
    return registered(Greedy)  # register(Greedy): the one line a new family needs


def test_the_grammar_reads_writes_and_refuses_the_new_family(greedy):
    s = parse("greedy:3")
    assert type(s) is Greedy and s.name == "greedy:3" and parse(s.name) == s
    assert grammar_help().endswith(", greedy:G (G from 1 to 64)")
    with pytest.raises(ValueError) as e:
        parse("greedy:99")
    assert str(e.value) == "scheme 'greedy:99': write greedy:G with G from 1 to 64, got 99"
    with pytest.raises(ValueError) as e:
        parse("greedy:")
    assert str(e.value) == f"scheme 'greedy:': greedy needs its G: write {grammar_help()}"


def test_its_reference_is_its_own_exact_round_not_the_iid_formula(greedy):
    s = parse("greedy:3")
    assert s.iid_gamma is None and s.chain_gamma is None and s.point_mass_drafts
    r = exact.round_distribution(SEED, ("a",), s)
    # the first draft is the drafter's top token, kept with probability p(top)
    q, p = SEED.q(("a",)), SEED.p(("a",))
    assert r.accepted[0] == 1 - p[top(q)]
    alpha = formulas.exact_vs_iid(SEED, ("a",), 3)["alpha"]
    assert r.accepted[0] != 1 - alpha  # the i.i.d. formula's first rejection would be wrong here
    assert all(c.exact for c in exact.check_exactness(SEED, 2, [s], SEED.contexts()))


def test_the_cli_help_and_commands_take_it(greedy, cli, cli_json):
    code, out, _ = cli("round", "--help")
    assert code == 0 and "greedy:G" in out
    d = cli_json("round", "seed", "--context", "a", "--scheme", "greedy:3")
    assert d["scheme"] == "greedy:3" and "alpha" not in d  # no i.i.d. formula beside it
    assert d["expected_tokens"] == str(exact.round_distribution(SEED, ("a",), Greedy(3)).expected_tokens)


def test_the_budget_comparison_ranks_it(greedy, cli_json):
    assert [s.name for s in compare.schemes(2) if type(s) is Greedy] == ["greedy:1", "greedy:2"]
    rows = {r["scheme"]: r for r in compare.compare(SEED, ("a",), 2)}
    assert rows["greedy:2"]["expected_tokens"] == exact.round_distribution(SEED, ("a",), Greedy(2)).expected_tokens
    shown = {r["scheme"]: r for r in cli_json("compare", "seed", "--context", "a", "--budget", "2")["schemes"]}
    assert shown["greedy:2"]["kind"] == "greedy" and shown["greedy:2"]["expected_tokens"] == \
        str(rows["greedy:2"]["expected_tokens"])


def test_the_app_scheme_picker_offers_it_and_plays_it(greedy):
    from tests.apptest import open_page
    from parts import scheme_picker  # noqa: E402 (tests.apptest puts app/ on sys.path)

    assert "greedy" in scheme_picker.offered() and scheme_picker.every_family("chain")[-1] == "greedy"
    at = open_page("views/stepper.py")
    kinds = at.radio(key="stepper-kind")
    assert "greedy" in kinds.options
    kinds.set_value("greedy").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.number_input(key="stepper-gamma").value == 3  # its G, a widget drawn from its params
    at.button(key="stepper-next").click().run()
    assert not at.exception, [e.value for e in at.exception]
    player = at.session_state["stepper"]["player"]
    assert player.scheme.name == "greedy:3"
    assert any(re.search(r"one of its top-k tokens", m.value) for m in at.markdown)  # told as chosen drafts


def test_the_tiny_gpt_page_offers_it_and_runs_it_on_the_gpt_pair(greedy):
    """Its GPT layout is a chain's (``gpt_round``), so the Tiny GPT page offers it and the real decoder runs it."""
    pytest.importorskip("torch")
    if not (ROOT / "specsim" / "gpt" / "weights" / "manifest.json").exists():
        pytest.skip("no shipped weights")
    from streamlit.testing.v1 import AppTest
    from specsim.gpt import api
    from tests.apptest import ENTRY

    at = AppTest.from_file(str(ENTRY), default_timeout=300)
    at.run()
    at.session_state["gpt-n"] = 24
    at.switch_page("views/tiny_gpt.py").run()
    kinds = at.radio(key="gpt-kind")
    # every registered family has a GPT layout: all offered, by their titles, the new one last
    assert list(kinds.options) == [cls.words()[0] for cls in families().values()] and kinds.options[-1] == "greedy"
    kinds.set_value("greedy").run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    g = at.number_input(key="gpt-gamma").value  # its G, the widget its params declare
    gen = api.speculative_generate(api.load_pair("distilled", "cpu"), "def ", 24, f"greedy:{g}", seed=0)
    assert gen.scheme == f"greedy:{g}"
    text = " ".join(m.value.replace("\\", "") for m in at.markdown)
    assert f"Round 1 (greedy:{g})" in text and f"**k = {gen.rounds[0].accepted}** accepted" in text


def test_a_link_names_the_tiny_gpt_pages_scheme_in_the_grammar_or_by_its_old_keys():
    """``?scheme=`` (the grammar) reaches the Tiny GPT page's picker, and the page's old widget keys
    (``?gpt-budget=``) still set a dynamic tree's budget, up to the page's 16 nodes."""
    pytest.importorskip("torch")
    if not (ROOT / "specsim" / "gpt" / "weights" / "manifest.json").exists():
        pytest.skip("no shipped weights")
    from tests.apptest import open_page

    for query in ({"scheme": "tree:dynamic,budget=10,depth=2,topk=2"},
                  {"gpt-kind": "dynamic", "gpt-budget": "10", "gpt-depth": "2", "gpt-topk": "2"}):
        at = open_page("views/tiny_gpt.py", {**query, "gpt-n": "16"}, timeout=300)
        assert not at.error, [e.value for e in at.error]
        assert at.radio(key="gpt-kind").value == "dynamic"
        assert [at.number_input(key=k).value for k in ("gpt-budget", "gpt-depth", "gpt-topk")] == [10, 2, 2]
        assert any("Round 1 (tree:dynamic,budget=10,depth=2,topk=2)" in m.value.replace("\\", "") for m in at.markdown)
