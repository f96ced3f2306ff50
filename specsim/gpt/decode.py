"""Plain and speculative decoding with a KV cache, batch size 1, with a full trace.

Both start the same way: the prompt minus its last character is prefilled
into the cache(s); the last character is the first token to feed. A cache of
length n then always means "positions 0 .. n-1 are cached, the last token
(at position n) is not yet".

One speculative round (the steps the lessons refer to):

1. draft: the drafter, fed the last token, proposes gamma tokens one by one
   from q (its cache grows to n + gamma: the last draft is never fed);
2. verify: one target pass over [last token, drafts] (gamma + 1 queries after
   n cached keys, lower-right mask) gives the gamma + 1 rows of p; row i
   scores draft i + 1, row gamma is the bonus row;
3. accept: draft i is kept when u_i < min(1, p_i(x) / q_i(x)), left to right;
4. correct: at the first rejection (position k) a replacement is drawn from
   the residual max(0, p_k - q_k) normalized;
5. bonus: if all gamma are accepted, one more token is drawn from p_gamma;
6. crop: both caches keep n + k + 1 entries (prefix, last token, accepted
   drafts). After a full acceptance the drafter holds only n + gamma, and its
   missing last draft is fed together with the next round's last token.

Generation past the context window slides it: both caches are rebuilt from
the last ``block_size // 2`` tokens (marked ``slid`` in the round).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from .drafters import as_drafter
from .rule import accept_block, accept_drafts, adjust, block_residual, residual


@dataclass(frozen=True)
class Sampling:
    """How logits become the rows p and q are sampled from (identical for both)."""

    temperature: float = 1.0
    top_k: int | None = None
    top_p: float | None = None
    greedy: bool = False

    def row(self, logits: torch.Tensor) -> torch.Tensor:
        return adjust(logits, self.temperature, self.top_k, self.top_p, self.greedy)


@dataclass
class Round:
    """Everything one speculative round did. Token ids index the vocabulary.

    Field names are those of the toy trace (``specsim.sampling.RoundTrace``);
    see ``specsim/TRACE_FORMAT.md``. ``to_dict`` keeps the JSON keys of the
    ``specsim gpt`` commands (``k``, ``accepted`` for the flags, ``accept_prob``,
    ``correction_token``).
    """

    start: int  # position of the last token in the whole sequence (prompt included)
    last_token: int  # the token fed first (the last one of the sequence so far)
    drafts: list  # gamma drafted ids
    q_rows: torch.Tensor  # (gamma, V): q at each draft position
    p_rows: torch.Tensor  # (gamma + 1, V): p row i scores draft i + 1; row gamma is the bonus row
    u: list  # gamma uniforms; u[i] is compared only if draft i is checked
    acceptance: list  # min(1, p_i(d_i) / q_i(d_i)) for each draft
    accepted_flags: list  # for the checked drafts: K Trues, then one False unless K == gamma
    accepted: int  # K, drafts accepted
    correction: str  # "residual" (step 4) or "bonus" (step 5)
    closing_token: int  # the replacement (K < gamma) or the bonus (K == gamma) token
    cache: dict  # {"target"|"draft": {"start", "before_verify", "after_verify", "after_crop"}}
    slid: bool = False
    replacement_row: torch.Tensor | None = None  # (V,) the row the replacement was drawn from
    verify: str = "token"  # or "block": then ``acceptance`` holds the stop probabilities h_i
    block: dict | None = None  # block verification: {"w": [w_0..w_gamma], "h": [...], "stops": [eta_i]}

    @property
    def replacement(self) -> int | None:
        """The token drawn from ``replacement_row`` after a rejection (None without one)."""
        return self.closing_token if self.accepted < len(self.drafts) else None

    @property
    def bonus(self) -> int | None:
        """The token drawn from the last p row after full acceptance (None otherwise)."""
        return self.closing_token if self.accepted == len(self.drafts) else None

    @property
    def emitted(self) -> list:
        return self.drafts[:self.accepted] + [self.closing_token]

    def scored_by(self) -> list:
        """Which logit row of the verify pass scored which token, and what it decided."""
        rows = []
        for i in range(len(self.drafts) + 1):
            fed = self.last_token if i == 0 else self.drafts[i - 1]
            role = f"draft {i + 1}" if i < len(self.drafts) else "bonus"
            rows.append({"row": i, "query_token": fed, "query_position": self.start + i,
                         "scores": role, "used": i <= self.accepted})
        return rows

    def to_dict(self, vocab: str | None = None, top: int | None = 5) -> dict:
        name = (lambda t: vocab[t]) if vocab else (lambda t: t)
        d = {"start": self.start, "last_token": name(self.last_token),
             "drafts": [name(t) for t in self.drafts], "u": self.u,
             "accept_prob": self.acceptance, "accepted": self.accepted_flags, "k": self.accepted,
             "correction": self.correction, "correction_token": name(self.closing_token),
             "emitted": [name(t) for t in self.emitted], "cache": self.cache, "slid": self.slid,
             "scored_by": [dict(r, query_token=name(r["query_token"])) for r in self.scored_by()],
             "p_rows": [_row(r, name, top) for r in self.p_rows],
             "q_rows": [_row(r, name, top) for r in self.q_rows]}
        if self.verify != "token":
            d.update(verify=self.verify, **(self.block or {}))
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
    gamma: int | None = None
    rounds: list = field(default_factory=list)
    text: str | None = None  # the generated characters, set by ``specsim.gpt.api``
    verify: str = "token"  # "token" or "block" (chain verification)

    @property
    def accepted_per_round(self) -> list:
        return [r.accepted for r in self.rounds]

    @property
    def alpha(self) -> float | None:
        """Measured acceptance rate: accepted drafts / checked drafts."""
        checked = sum(len(r.accepted_flags) for r in self.rounds)
        return sum(self.accepted_per_round) / checked if checked else None

    def to_dict(self, vocab: str | None = None, top: int | None = 5) -> dict:
        text = "".join(vocab[t] for t in self.tokens) if vocab else self.text
        return {"text": text, "tokens": self.tokens, "mode": self.mode, "gamma": self.gamma,
                "target_passes": self.target_passes, "draft_passes": self.draft_passes,
                "accepted_per_round": self.accepted_per_round, "alpha": self.alpha,
                "rounds": [r.to_dict(vocab, top) for r in self.rounds]} | (
                    {"verify": self.verify} if self.verify != "token" else {})


def _sample(row: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    return torch.multinomial(row, 1, generator=gen)  # (1,) or (B, 1)


class _Context:
    """Token ids generated so far plus the cache bookkeeping shared by both decoders."""

    def __init__(self, models, prompt_ids, device, window: int | None = None):
        if not prompt_ids:
            raise ValueError("the prompt is empty")
        self.window = min([m.config.block_size for m in models] + ([window] if window else []))
        if len(prompt_ids) > self.window:
            raise ValueError(f"the prompt is {len(prompt_ids)} tokens; the context window is {self.window}")
        self.models, self.device = models, device
        self.ids = list(prompt_ids)
        self.offset = 0  # ids[offset:] are in the window (the rest slid out)
        self.caches = [m.new_cache() for m in models]
        self.prefill(self.ids)

    @property
    def view(self) -> list:
        return self.ids[self.offset:]

    def prefill(self, ids):
        self.offset = len(self.ids) - len(ids)
        for m, c in zip(self.models, self.caches):
            c.reset()
            if len(ids) > 1:
                m(torch.tensor([ids[:-1]], device=self.device), c, last_only=True)
        self.pending = torch.tensor([[ids[-1]]], device=self.device)  # (1, 1): next token(s) to feed

    def make_room(self, need: int) -> bool:
        """Slide the window if ``need`` more positions would not fit; True when it slid."""
        if self.caches[0].length + need <= self.window:
            return False
        self.prefill(self.ids[-(self.window // 2):])
        return True


def _token_wise(p_rows, q_rows, drafts, u):
    """Step 3-4 token-wise: (acceptance, flags, K, replacement row or None, None)."""
    acceptance, flags, k = accept_drafts(p_rows, q_rows, drafts, u)
    row = None
    if k < drafts.numel():
        row = residual(p_rows[k], q_rows[k])
        if row is None:  # p <= q everywhere: float rounding rejected a sure draft
            row = p_rows[k]
    return acceptance, flags, k, row, None


def _block(p_rows, q_rows, drafts, u):
    """Step 3-4 by block verification: h as the acceptance, the flags K Trues then one False."""
    w, h, stops, tau = accept_block(p_rows, q_rows, drafts, u)
    flags = torch.arange(drafts.numel(), device=drafts.device) < tau  # (gamma,)
    row = None
    if tau < drafts.numel():
        row = block_residual(w[tau], p_rows[tau], q_rows[tau])
        if row is None:  # empty in exact arithmetic only with probability 0: float rounding
            row = p_rows[tau]
    return h, flags, tau, row, {"w": w.tolist(), "h": h.tolist(), "stops": stops.tolist()}


VERIFY = {"token": _token_wise, "block": _block}


@torch.inference_mode()
def plain_generate(target, prompt_ids, n_tokens: int, sampling: Sampling = Sampling(),
                   seed: int = 0) -> Generation:
    """Autoregressive decoding with the cache: one target pass per token."""
    device = target.wte.weight.device
    gen = torch.Generator(device).manual_seed(seed)
    ctx = _Context([target], prompt_ids, device)
    cache, out = ctx.caches[0], []
    for _ in range(n_tokens):
        ctx.make_room(1)
        logits = target(ctx.pending, cache, last_only=True)[0, -1]  # (V,)
        ctx.pending = _sample(sampling.row(logits), gen).view(1, 1)
        out.append(int(ctx.pending))
        ctx.ids.append(out[-1])
    return Generation(list(prompt_ids), out, "plain", target_passes=n_tokens)


@torch.inference_mode()
def speculative_generate(target, draft, prompt_ids, n_tokens: int, gamma: int,
                         sampling: Sampling = Sampling(), seed: int = 0,
                         crop: bool = True, verify: str = "token") -> Generation:
    """Speculative decoding; ``crop=False`` skips step 6 (the pitfall: output changes).

    ``verify``: "token" (token-wise, step 3 as above) or "block" (block
    verification, ``specsim.schemes.block``: the same u's are the coins eta_i = u_i < h_i,
    K = tau, and the replacement comes from the block residual).

    ``draft`` is any ``specsim.gpt.drafters.Drafter`` (a small GPT, early exit,
    prompt lookup) or a bare GPT. A drafter may propose fewer than gamma
    tokens in a round, even none (then the round is one plain target step).
    """
    if gamma < 1:
        raise ValueError(f"gamma must be >= 1, got {gamma}")
    if verify not in VERIFY:
        raise ValueError(f"verify must be one of {', '.join(VERIFY)}, got {verify!r}")
    drafter = as_drafter(draft)
    device = target.wte.weight.device
    gen = torch.Generator(device).manual_seed(seed)
    ctx = _Context([target], prompt_ids, device, window=drafter.window)
    t_cache = ctx.caches[0]
    if hasattr(drafter, "attach"):  # early exit shares the target's cache
        drafter.attach(t_cache)
    drafter.start(ctx.view)
    passes_before = drafter.passes
    out, rounds, t_passes = [], [], 0
    while len(out) < n_tokens:
        slid = ctx.make_room(gamma + 2)
        if slid:
            drafter.start(ctx.view)
        n, last = t_cache.length, ctx.pending  # last: (1, 1)
        d_len = lambda: getattr(getattr(drafter, "cache", None), "length", None)
        start = {"target": n, "draft": d_len()}
        # step 1: draft up to gamma tokens (with their rows q)
        d_list, q_rows = drafter.propose(ctx.view, gamma, sampling, gen)  # q_rows: (g, V)
        g = len(d_list)
        d_ids = torch.tensor([d_list], dtype=torch.long, device=device).view(1, g)  # (1, g)
        before = {"target": n, "draft": d_len()}
        # step 2: verify [last, drafts] in one target pass
        p_rows = sampling.row(target(torch.cat([last, d_ids], dim=1), t_cache)[0])  # (g + 1, V)
        t_passes += 1
        after = {"target": t_cache.length, "draft": d_len()}
        # step 3: accept left to right (token-wise) or the longest prefix the block allows
        u = torch.rand(g, generator=gen, device=device)  # (g,)
        acceptance, flags, k, replacement_row, block = VERIFY[verify](p_rows, q_rows, d_ids[0], u)
        if k < g:  # step 4: replacement from the (block) residual at position k
            tok = _sample(replacement_row, gen)
            correction = "residual"
        else:  # step 5: bonus token from the last row
            replacement_row = None
            tok = _sample(p_rows[g], gen)
            correction = "bonus"
        # step 6: roll both caches back to prefix + last token + k accepted drafts
        if crop:
            t_cache.crop(n + k + 1)
        ctx.pending = tok.view(1, 1)
        emitted = d_list[:k] + [int(tok)]
        ctx.ids.extend(emitted)
        drafter.keep(ctx.view, len(ctx.view) - 1, crop)
        out.extend(emitted)
        ends = {"target": t_cache.length, "draft": d_len()}
        cache = {m: {"start": start[m], "before_verify": before[m], "after_verify": after[m],
                     "after_crop": ends[m]} for m in start}
        rounds.append(Round(n, int(last), d_list, q_rows, p_rows, u.tolist(), acceptance.tolist(),
                            flags[:k + 1].tolist(), k, correction, int(tok), cache, slid, replacement_row,
                            verify, block))
    return Generation(list(prompt_ids), out[:n_tokens], "speculative", t_passes,
                      drafter.passes - passes_before, gamma, rounds, verify=verify)
