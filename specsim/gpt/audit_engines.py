"""Engines to audit (``specsim audit --engine specsim/gpt/audit_engines.py:NAME``): one exact, three lossy, one
often suspected (known bugs of real releases: ``audit_bugs.py`` beside this file).

Each is written the way a user writes an engine for ``specsim audit``: a class
built as ``Engine(target, drafter, temperature=..., top_k=..., top_p=...)``
whose ``generate(ids, n, generator)`` returns n new token ids. ``target`` and
``drafter`` map a (1, T) LongTensor to (1, T, V) logits; these engines use no
cache (one full pass per step: slow, and easy to read). The sampling settings
apply to p and q alike through ``specsim.gpt.rule.adjust``, except where an
engine's bug is to do otherwise.

* ``Textbook``: speculative sampling as the papers state it (gamma 4): exact;
* ``EmitDraft``: keeps every draft (the rule "accept always"): lossy;
* ``ResampleFromTarget``: on a rejection draws the replacement from p instead of
  the residual max(0, p - q), a bug reported in several research repositories: lossy;
* ``RawQUnderTopK``: drafts from the top-k-processed q but computes the ratio
  p/q and the residual with the raw q (the shape of transformers issue 47932):
  lossy whenever top-k cuts q, visible on this vocabulary at a small k
  (``--top-k 5``);
* ``SampleAndMatch``: llama.cpp's server verification: the drafter proposes its
  argmax, the target samples its own token at each position and the draft is
  kept while the two match; the first mismatch emits the target's sample.
  Every emitted token is a sample of p, so it is exact, though its acceptance
  is lower than the ratio rule's.
"""
from __future__ import annotations

import torch

from specsim.gpt.rule import adjust  # absolute: the audit loads this file as a user would write it

GAMMA = 4


class _Engine:
    def __init__(self, target, drafter, temperature: float = 1.0, top_k=None, top_p=None):
        self.target, self.drafter = target, drafter
        self.temperature, self.top_k, self.top_p = temperature, top_k, top_p

    def row(self, model, ids, top_k="same") -> torch.Tensor:
        """The sampling row (V,) after ``ids``, float64, with this engine's settings (or another top_k)."""
        logits = model(torch.tensor([ids]))[0, -1].double()
        return adjust(logits, self.temperature, self.top_k if top_k == "same" else top_k, self.top_p)

    @staticmethod
    def draw(row, generator) -> int:
        return int(torch.multinomial(row, 1, generator=generator))

    def generate(self, ids: list, n: int, generator: torch.Generator) -> list:
        out = []
        with torch.inference_mode():
            while len(out) < n:
                out += self.round(list(ids) + out, generator)
        return out[:n]

    def round(self, ids, generator) -> list:
        raise NotImplementedError


class Textbook(_Engine):
    """Speculative sampling: accept x with probability min(1, p(x)/q(x)), else draw from max(0, p - q)."""

    def q_for_draft(self, ids):
        return self.row(self.drafter, ids)

    def q_for_ratio(self, ids, q_draft):
        return q_draft

    def replacement(self, p, q):
        r = (p - q).clamp(min=0)
        return r / r.sum()

    def propose(self, q, generator) -> tuple:
        """(the drafted token, the uniform it was drawn with or None)."""
        return self.draw(q, generator), None

    def test_uniform(self, drawn_with, generator) -> float:
        """The uniform that tests a draft: a fresh one."""
        return float(torch.rand(1, generator=generator, dtype=torch.float64))

    def correct(self, residual, drawn_with, generator) -> int:
        """The token that replaces a rejected draft: a fresh draw from the residual."""
        return self.draw(residual, generator)

    def p_rows(self, ids, drafts) -> torch.Tensor:
        """(GAMMA + 1, V): p after ids and after each draft, one target pass."""
        logits = self.target(torch.tensor([ids + drafts]))[0, len(ids) - 1:].double()
        return adjust(logits, self.temperature, self.top_k, self.top_p)

    def round(self, ids, generator) -> list:
        drafts, qs, noise = [], [], []
        for _ in range(GAMMA):  # step 1: draft
            q = self.q_for_draft(ids + drafts)
            qs.append(self.q_for_ratio(ids + drafts, q))
            x, u = self.propose(q, generator)
            drafts.append(x)
            noise.append(u)
        ps = self.p_rows(ids, drafts)  # step 2: one pass, (GAMMA + 1, V)
        for i, x in enumerate(drafts):  # steps 3-4: accept, or correct and stop
            u = self.test_uniform(noise[i], generator)
            if u * float(qs[i][x]) < float(ps[i][x]):  # u < p/q, without dividing by a zero q
                continue
            return drafts[:i] + [self.correct(self.replacement(ps[i], qs[i]), noise[i], generator)]
        return drafts + [self.draw(ps[GAMMA], generator)]  # step 5: bonus


class EmitDraft(Textbook):
    """Every draft kept: the drafter's distribution, not the target's."""

    def round(self, ids, generator) -> list:
        drafts = []
        for _ in range(GAMMA):
            drafts.append(self.draw(self.row(self.drafter, ids + drafts), generator))
        return drafts


class ResampleFromTarget(Textbook):
    """On a rejection, the replacement is drawn from p, not from the residual."""

    def replacement(self, p, q):
        return p


class RawQUnderTopK(Textbook):
    """Drafts from the top-k-processed q; the ratio and the residual read the raw q (no top-k). Run it with a
    small ``--top-k`` (5): at a large k the shipped 96-character drafter puts almost no mass outside its top
    k, so the bug moves the output too little for any affordable audit to see."""

    def q_for_ratio(self, ids, q_draft):
        return self.row(self.drafter, ids, top_k=None)


class SampleAndMatch(_Engine):
    """llama.cpp's server: greedy drafts, the target's own samples kept while they match the drafts."""

    def round(self, ids, generator) -> list:
        drafts = []
        with torch.inference_mode():
            for _ in range(GAMMA):
                logits = self.drafter(torch.tensor([ids + drafts]))[0, -1]
                drafts.append(int(logits.argmax()))
            logits = self.target(torch.tensor([ids + drafts]))[0, len(ids) - 1:].double()
        ps = adjust(logits, self.temperature, self.top_k, self.top_p)
        out = []
        for i in range(GAMMA + 1):
            x = self.draw(ps[i], generator)
            out.append(x)
            if i == GAMMA or x != drafts[i]:
                return out
        return out
