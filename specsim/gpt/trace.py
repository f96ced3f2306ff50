"""The torch trace: one ``Round`` per speculative round of any scheme, and the ``Generation``.

A round keeps what the decoder computed (the rows of both models, as
tensors) and what ``scheme.verify`` decided (its ``Verdict``); every other
field is read from those two. Field names are those of the toy trace
(``specsim.sampling.RoundTrace``); the JSON (``to_dict``, ``specsim gpt
generate --json``) is trace format 2, described in ``specsim/TRACE_FORMAT.md``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from ..schemes import masks

TRACE_FORMAT = 2


@dataclass
class Round:
    """Everything one speculative round did. Token ids index the vocabulary; node j is row j + 1 of p."""

    scheme: str  # the round's scheme (a lookup round with fewer drafts: chain:G for its G; "none": no drafts)
    start: int  # n: cached target positions before the pass (the last token sits at position n)
    last_token: int  # the token fed first (the last one of the sequence so far): the root
    drafts: list  # N drafted ids, node j the j-th draw
    parents: list  # N parent indices (-1: a child of the root); a chain is a path
    q_rows: torch.Tensor  # (R, V): q at the root and at every node with children, in node order (a chain: (N, V))
    p_rows: torch.Tensor  # (N + 1, V): p at the root, then after node j at j + 1
    u: list  # N test uniforms: u[j] decides node j if it is tested (a block: the stop coin of position j + 1)
    verdict: object  # the scheme's ``Verdict``: path, closing token, its kind and row, the tests
    emitted: list  # the accepted drafts plus the closing token
    cache: dict  # {"target"|"draft": {"start", "before_verify", "after_verify", "after_crop"}}
    slid: bool = False
    text: str | None = None  # the emitted characters, set by ``specsim.gpt.api``
    seconds: dict | None = None  # with a clock: {"draft", "verify", "decide", "keep"}: steps 1, 2, 3-5 and 6

    @property
    def accepted(self) -> int:
        """K: drafts accepted (the depth reached in a tree)."""
        return len(self.verdict.path)

    @property
    def accepted_nodes(self) -> list:
        return list(self.verdict.path)

    @property
    def tried(self) -> list:
        """The nodes tested, in order."""
        return [t["node"] for t in self.verdict.tests]

    @property
    def acceptance(self) -> list:
        """Per test: min(1, p'(x) / q'(x)) (or the rule's value); a block's stop probabilities h."""
        return [t["acceptance"] if "acceptance" in t else t["h"] for t in self.verdict.tests]

    @property
    def accepted_flags(self) -> list:
        """Per tested node, accepted or not (a chain or a block: K Trues, then one False unless K = N)."""
        if self.block is None:
            return [t["accepted"] for t in self.verdict.tests]
        return [i < self.accepted for i in range(min(self.accepted + 1, len(self.drafts)))]

    @property
    def block(self) -> dict | None:
        """Block verification: {"w": weights, "h": stop probabilities, "stops": the coins}; else None."""
        if "w" not in self.verdict.extra:
            return None
        return {"w": [float(w) for w in self.verdict.extra["w"]], "h": [float(h) for h in self.verdict.extra["h"]],
                "stops": [t["stop"] for t in self.verdict.tests]}

    @property
    def closing_token(self) -> int | None:
        return self.verdict.closing

    @property
    def closing_kind(self) -> str:
        """"correct" (after a rejection or a stop: a replacement) or "bonus" (after the whole depth)."""
        return self.verdict.closing_kind

    @property
    def correction(self) -> str:
        """The format-1 name of ``closing_kind``: "residual" or "bonus" (kept for older callers)."""
        return "residual" if self.closing_kind == "correct" else "bonus"

    @property
    def closing_row(self) -> torch.Tensor | None:
        row = self.verdict.closing_row
        return None if row is None else torch.tensor([float(v) for v in row], dtype=torch.float64)

    @property
    def replacement_row(self) -> torch.Tensor | None:
        """The row the replacement was drawn from (None after full acceptance)."""
        return self.closing_row if self.closing_kind == "correct" else None

    @property
    def replacement(self) -> int | None:
        return self.closing_token if self.closing_kind == "correct" else None

    @property
    def bonus(self) -> int | None:
        return self.closing_token if self.closing_kind == "bonus" else None

    def q_layout(self) -> list:
        """The rows q in the scheme's layout: N + 1 entries, the root's first, None for a leaf (never fed)."""
        has_kids = {-1} | set(self.parents)
        nodes = [j for j in range(-1, len(self.drafts)) if j in has_kids][:len(self.q_rows)]
        out = [None] * (len(self.drafts) + 1)
        for j, row in zip(nodes, self.q_rows):
            out[j + 1] = row
        return out

    def scored_by(self) -> list:
        """Which logit row of the verify pass scored which draft, and whether the accepted path used it."""
        depths = masks.tree_depths(self.parents) if self.parents else []
        kids = {}
        for j, a in enumerate(self.parents):
            kids.setdefault(a, []).append(j + 1)
        on_path = {-1} | set(self.verdict.path)
        rows = []
        for i in range(len(self.drafts) + 1):
            fed = self.last_token if i == 0 else self.drafts[i - 1]
            mine = kids.get(i - 1, [])
            role = ("bonus" if not mine else f"draft {mine[0]}" if len(mine) == 1
                    else "drafts " + ", ".join(map(str, mine)))
            rows.append({"row": i, "query_token": fed, "query_position": self.start + (depths[i - 1] if i else 0),
                         "scores": role, "used": (i - 1) in on_path})
        return rows

    def to_dict(self, vocab: str | None = None, top: int | None = 5) -> dict:
        """Trace format 2 (``specsim/TRACE_FORMAT.md``); rows as the ``top`` largest {token: p}."""
        name = (lambda t: vocab[t]) if vocab else (lambda t: t)
        d = {"scheme": self.scheme, "start": self.start, "last_token": name(self.last_token),
             "drafts": [name(t) for t in self.drafts], "parents": self.parents,
             "depths": masks.tree_depths(self.parents) if self.parents else [], "u": self.u,
             "tried": self.tried, "acceptance": [float(a) for a in self.acceptance],
             "accepted_flags": self.accepted_flags, "accepted": self.accepted, "accepted_nodes": self.accepted_nodes,
             "closing_kind": self.closing_kind,
             "closing_token": None if self.closing_token is None else name(self.closing_token),
             "emitted": [name(t) for t in self.emitted], "cache": self.cache, "slid": self.slid,
             "mask_shape": [len(self.drafts) + 1, self.start + len(self.drafts) + 1],
             "scored_by": [dict(r, query_token=name(r["query_token"])) for r in self.scored_by()],
             "p_rows": [_row(r, name, top) for r in self.p_rows],
             "q_rows": [None if r is None else _row(r, name, top) for r in self.q_layout()]}
        if self.block is not None:
            d["block"] = self.block
        return d


def _row(row: torch.Tensor, name, top):
    """A probability row as {token: p}, the ``top`` largest only when ``top`` is set."""
    row = row.float().cpu()
    k = row.numel() if top is None else min(top, row.numel())
    vals, idx = torch.topk(row, k)
    return {str(name(i)): round(v, 6) for v, i in zip(vals.tolist(), idx.tolist()) if v > 0}


@dataclass
class Generation:
    prompt_ids: list
    tokens: list  # generated ids (exactly n_tokens)
    mode: str  # "plain" or "speculative"
    target_passes: int
    draft_passes: int = 0
    rounds: list = field(default_factory=list)
    scheme: str | None = None  # the scheme's grammar string (None: plain decoding)
    text: str | None = None  # the generated characters, set by ``specsim.gpt.api``
    seconds: dict | None = None  # with a clock: {"prefill": filling the caches (and any slide), "decode": the rest}

    @property
    def gamma(self) -> int | None:
        """A chain's or a block's G (None for plain decoding, a tree and a confidence-stopped chain)."""
        from ..schemes import parse
        try:
            scheme = parse(self.scheme) if self.scheme else None
        except ValueError:  # a trace read from elsewhere may name anything
            return None
        return scheme.iid_gamma if scheme is not None else None

    @property
    def accepted_per_round(self) -> list:
        return [r.accepted for r in self.rounds]

    @property
    def alpha(self) -> float | None:
        """Measured acceptance rate: accepted drafts / tested drafts."""
        tested = sum(len(r.accepted_flags) for r in self.rounds)
        return sum(self.accepted_per_round) / tested if tested else None

    def to_dict(self, vocab: str | None = None, top: int | None = 5) -> dict:
        text = "".join(vocab[t] for t in self.tokens) if vocab else self.text
        return {"trace_format": TRACE_FORMAT, "text": text, "tokens": self.tokens, "mode": self.mode,
                "scheme": self.scheme, "gamma": self.gamma, "target_passes": self.target_passes,
                "draft_passes": self.draft_passes, "accepted_per_round": self.accepted_per_round,
                "alpha": self.alpha, "rounds": [r.to_dict(vocab, top) for r in self.rounds]}
