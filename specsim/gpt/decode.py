"""Plain and speculative decoding with a KV cache, batch size 1: one decoder for every scheme.

Both start the same way: the prompt minus its last character is prefilled
into the cache(s); the last character is the first token to feed. A cache of
length n then always means "positions 0 .. n-1 are cached, the last token
(at position n) is not yet".

One speculative round, for a chain, a block or a tree (``specsim.schemes``):

1. draft: the scheme draws the whole layout (``scheme.draft``) from the
   drafter's rows q, which the drafter computes with its cache: a chain fed
   token by token (a confidence-stopped chain stops when its rule says so), a
   tree level by level (``specsim.gpt.tree_decode``; a dynamic tree grows its
   layout from those rows). The last drafts (the leaves) are never fed;
2. verify: one target pass over [last token, drafts] after the n cached keys
   (a chain: the lower-right causal mask; a tree: ``scheme.mask`` and
   ``scheme.positions``) gives p at the root and after every draft;
3-5. decide: ``scheme.verify`` -- the same walk the toy sampler and the exact
   engine use, with the rule as a parameter -- on the rows as Python floats:
   the accepted path, then the closing token (a replacement from the residual,
   or the bonus);
6. keep: both caches keep the prefix, the last token and the accepted path
   (a chain crops; a tree gathers the path's slots, then crops). After a full
   chain acceptance the drafter holds one position less: its last draft is
   fed with the next round's last token.

Uniforms: ``specsim.sampling.uniforms`` on ``numpy.random.default_rng(seed)``,
the toy sampler's layout (one per drafted token to draw it, one per test, one
for the closing token), so one seed gives one trace.

Generation past the context window slides it: both caches are rebuilt from
the last ``block_size // 2`` tokens (marked ``slid`` in the round).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from .. import sampling as toy_sampling
from ..rule import CORRECT
from ..schemes import as_scheme
from .model import one_position
from .rounds import gpt_round
from .rule import adjust
from .trace import Generation, Round

__all__ = ["Sampling", "Round", "Generation", "plain_generate", "speculative_generate"]


@dataclass(frozen=True)
class Sampling:
    """How logits become the rows p and q are sampled from (identical for both)."""

    temperature: float = 1.0
    top_k: int | None = None
    top_p: float | None = None
    greedy: bool = False

    def row(self, logits: torch.Tensor) -> torch.Tensor:
        return adjust(logits, self.temperature, self.top_k, self.top_p, self.greedy)


def _sample(row: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    return torch.multinomial(row, 1, generator=gen)  # (1,) or (B, 1)


class Context:
    """Token ids generated so far plus the cache bookkeeping shared by both decoders."""

    def __init__(self, pair, prompt_ids, device, window: int | None = None):
        if not prompt_ids:
            raise ValueError("the prompt is empty")
        self.window = min([m.config.block_size for m in pair] + ([window] if window else []))
        if len(prompt_ids) > self.window:
            raise ValueError(f"the prompt is {len(prompt_ids)} tokens; the context window is {self.window}")
        self.pair, self.device = pair, device
        self.ids = list(prompt_ids)
        self.offset = 0  # ids[offset:] are in the window (the rest slid out)
        self.caches = [m.new_cache() for m in pair]
        self.prefill(self.ids)

    @property
    def view(self) -> list:
        return self.ids[self.offset:]

    def prefill(self, ids):
        self.offset = len(self.ids) - len(ids)
        for m, c in zip(self.pair, self.caches):
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


class Stopwatch:
    """Splits a generation's time into filling the caches (the prompt, and any slide of the window) and
    decoding; with no clock it records nothing. ``seconds()``: {"prefill", "decode"}, or None."""

    def __init__(self, clock, device):
        self.clock, self.device = clock, device
        self.prefill = 0.0
        self.t0 = self.mark() if clock else None

    def mark(self) -> float:
        sync_device(self.device)
        return self.clock()

    def prefilled(self, since: float | None) -> None:
        """Count the time from ``since`` (a ``now()``) to now as filling the caches."""
        if self.clock:
            self.prefill += self.mark() - since

    def now(self) -> float | None:
        return self.mark() if self.clock else None

    def seconds(self) -> dict | None:
        if not self.clock:
            return None
        total = self.mark() - self.t0
        return {"prefill": self.prefill, "decode": total - self.prefill}


@torch.inference_mode()
def plain_generate(target, prompt_ids, n_tokens: int, sampling: Sampling = Sampling(),
                   seed: int = 0, clock=None) -> Generation:
    """Autoregressive decoding with the cache: one target pass per token.
    ``clock`` (optional): split the time into prefill and decoding (``Generation.seconds``)."""
    device = target.wte.weight.device
    watch = Stopwatch(clock, device)
    gen = torch.Generator(device).manual_seed(seed)
    since = watch.now()
    ctx = Context([target], prompt_ids, device)
    watch.prefilled(since)
    cache, out, step = ctx.caches[0], [], one_position(target)
    for _ in range(n_tokens):
        since = watch.now()
        if ctx.make_room(1):
            watch.prefilled(since)
        logits = step(int(ctx.pending), cache)  # (V,): target(pending, cache, last_only=True)[0, -1], same bits
        ctx.pending = _sample(sampling.row(logits), gen).view(1, 1)
        out.append(int(ctx.pending))
        ctx.ids.append(out[-1])
    return Generation(list(prompt_ids), out, "plain", target_passes=n_tokens, seconds=watch.seconds())


@torch.inference_mode()
def speculative_generate(target, draft, prompt_ids, n_tokens: int, scheme=4, sampling: Sampling = Sampling(),
                         seed: int = 0, crop: bool = True, rule=CORRECT, order: str = "dfs",
                         clock=None) -> Generation:
    """Speculative decoding of ``n_tokens`` with any scheme and rule; same seed, same trace.

    ``scheme``: a ``specsim.schemes`` value (``Chain(4)``, ``Block(4)``,
    ``Tree((2, 1))``), its grammar string, or an int G for ``chain:G``.
    ``rule``: a ``RoundRule`` for a chain (``specsim.labs.pitfalls``), a
    ``TreeRule`` for a tree. ``crop=False`` skips step 6 on a chain (the
    pitfall: the output changes). ``order``: how a tree is flattened for the
    verify pass (``dfs`` or ``bfs``; the tokens do not depend on it).
    ``clock``: a function returning seconds (``time.perf_counter``,
    ``time.process_time``); when given, every round records how long its
    steps took (``Round.seconds``: drafting, the verify pass with its rows
    brought to the host, the scheme's walk, keeping the caches) and the generation splits its time
    into prefill and decoding (``Generation.seconds``) -- what the benchmark
    times the costs c and v with, inside the rounds they are costs of. The
    trace does not depend on it.

    ``draft`` is any ``specsim.gpt.drafters.Drafter`` (a small GPT, early exit,
    prompt lookup) or a bare GPT. A chain drafter may propose fewer than gamma
    tokens in a round, even none (then the round is one plain target step).
    """
    scheme = as_scheme(scheme)
    scheme.check_rule(rule)
    drafter = gpt_round(scheme, crop, order).drafter(draft)  # a bad order or crop is refused first
    device = target.wte.weight.device
    watch = Stopwatch(clock, device)
    rng = toy_sampling.make_rng(seed)
    since = watch.now()
    ctx = Context([target], prompt_ids, device, window=drafter.window)
    scheme.check_window(ctx.window)  # a round fits in half the window (slides keep the other half)
    need = scheme.round_positions() + 1  # the last token, and what the round adds
    drafter.attach(ctx.caches[0])  # early exit shares the target's cache (others ignore it)
    drafter.start(ctx.view)
    watch.prefilled(since)
    passes_before = drafter.passes
    out, rounds = [], []
    while len(out) < n_tokens:
        since = watch.now()
        slid = ctx.make_room(need)
        if slid:
            drafter.start(ctx.view)
            watch.prefilled(since)
        r = one_round(target, drafter, ctx, scheme, sampling, rng, rule, crop, order, slid, clock)
        if not r.emitted:
            raise ValueError(f"rule {rule.name!r} emitted nothing in a round without drafts: the generation "
                             "would never end")
        rounds.append(r)
        out.extend(r.emitted)
    return Generation(list(prompt_ids), out[:n_tokens], "speculative", len(rounds),
                      drafter.passes - passes_before, rounds, scheme.name, seconds=watch.seconds())


def verify_pass(target, idx, cache, drafter, **layout) -> tuple:
    """The target's pass over [last, drafts]: (logits (1, T, V), and its final hidden states (1, T, C)
    if the drafter reads them (``reads_features``: the EAGLE drafter), else None)."""
    if drafter.reads_features():
        return target(idx, cache, hidden=True, **layout)
    return target(idx, cache, **layout), None


def one_round(target, drafter, ctx, scheme, sampling, rng, rule=CORRECT, crop=True, order="dfs",
              slid=False, clock=None) -> Round:
    """One round on the decoding state ``ctx`` (its ids and the target's cache) and the drafter; the
    scheme's part (``specsim.gpt.rounds``) drafts, lays out the verify pass and keeps, this driver does
    the rest. ``clock`` (optional) times its steps (``Round.seconds``)."""
    part = gpt_round(scheme, crop, order)
    stamps = [clock()] if clock else None
    t_cache = ctx.caches[0]
    n, last = t_cache.length, int(ctx.pending)
    d_len = drafter.cache_length
    start = {"target": n, "draft": d_len()}
    # step 1: draft the whole layout, the scheme's draws on the drafter's rows
    d = part.draft(drafter, ctx, sampling, rng, rule)
    if clock:
        sync_device(ctx.device)
        stamps.append(clock())
    before = {"target": n, "draft": d_len()}
    # step 2: one target pass over [last, drafts], laid out as the scheme says
    idx, layout, order_rows = part.pass_inputs(d, last, n, ctx.device)
    logits, feats = verify_pass(target, idx, t_cache, drafter, **layout)
    p_dev = sampling.row(logits[0])  # (rows of the pass, V)
    if order_rows is not None:
        p_dev = p_dev[order_rows]  # (N + 1, V): the root's row, then each node's, in node order
    p_host = p_dev.tolist()  # the rows the walk reads, on the host (as the drafts' q rows are)
    if clock:
        stamps.append(clock())
    after = {"target": t_cache.length, "draft": d_len()}
    # steps 3-5: the scheme's verify on the host, the same walk as the toy sampler's
    verified = d.scheme or scheme
    verdict = verified.verify(d.tokens, p_host, d.q_host, d.u_test, d.u_final, rule, parents=d.parents)
    path = verdict.path
    if clock:
        stamps.append(clock())
    emitted = [d.tokens[j] for j in path] + ([] if verdict.closing is None else [verdict.closing])
    if emitted:
        ctx.pending = torch.tensor([[emitted[-1]]], device=ctx.device)
        ctx.ids.extend(emitted)
    # step 6: keep the prefix, the last token and the accepted path in both caches
    kept = part.keep(t_cache, drafter, ctx, d, path, verdict.closing is not None, n)
    if feats is not None:  # the EAGLE drafter re-reads the kept positions with the target's features
        drafter.features(ctx.view, feats[0, kept])
    ends = {"target": t_cache.length, "draft": d_len()}
    cache = {m: {"start": start[m], "before_verify": before[m], "after_verify": after[m], "after_crop": ends[m]}
             for m in start}
    q_rows = [r for r in d.q_dev if r is not None]
    q_rows = torch.stack(q_rows) if q_rows else p_dev[:0]  # (rows drawn from, V)
    seconds = None
    if clock:
        sync_device(ctx.device)
        stamps.append(clock())
        seconds = dict(zip(("draft", "verify", "decide", "keep"), (b - a for a, b in zip(stamps, stamps[1:]))))
    return Round(verified.name if d.tokens else "none", n, last, d.tokens, d.parents, q_rows, p_dev, d.u_test,
                 verdict, emitted, cache, slid, seconds=seconds)


def sync_device(device) -> None:
    """Wait for an accelerator's queued work (a no-op on the CPU), so that a clock reads finished work."""
    if device.type == "cuda":
        torch.cuda.synchronize()
