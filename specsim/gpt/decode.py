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
from ..schemes import Tree, as_scheme, masks
from .drafters import as_drafter
from .rule import adjust
from .specs import check_rule
from .trace import Generation, Round
from . import tree_decode

__all__ = ["Sampling", "Round", "Generation", "plain_generate", "speculative_generate", "check_rule"]


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
    cache, out = ctx.caches[0], []
    for _ in range(n_tokens):
        since = watch.now()
        if ctx.make_room(1):
            watch.prefilled(since)
        logits = target(ctx.pending, cache, last_only=True)[0, -1]  # (V,)
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
    brought to the host, and the rest) and the generation splits its time
    into prefill and decoding (``Generation.seconds``) -- what the benchmark
    times the costs c and v with, inside the rounds they are costs of. The
    trace does not depend on it.

    ``draft`` is any ``specsim.gpt.drafters.Drafter`` (a small GPT, early exit,
    prompt lookup) or a bare GPT. A chain drafter may propose fewer than gamma
    tokens in a round, even none (then the round is one plain target step).
    """
    scheme = as_scheme(scheme)
    check_rule(scheme, rule)
    tree = isinstance(scheme, Tree)
    tree_decode.flatten([], order)  # a bad order is refused before anything runs
    if tree and not crop:
        raise ValueError("crop=False is the chain's pitfall; a tree always keeps its accepted path")
    drafter = tree_decode.tree_drafter(draft) if tree else as_drafter(draft)
    device = target.wte.weight.device
    watch = Stopwatch(clock, device)
    rng = toy_sampling.make_rng(seed)
    since = watch.now()
    ctx = Context([target], prompt_ids, device, window=drafter.window)
    need = scheme.drafted_tokens + 2  # root, drafts, and the closing token
    if need > ctx.window // 2:
        raise ValueError(f"{scheme.name} drafts {scheme.drafted_tokens} tokens: too many for the context window "
                         f"of {ctx.window}")
    if hasattr(drafter, "attach"):  # early exit shares the target's cache
        drafter.attach(ctx.caches[0])
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
    if the drafter reads them (``features``: the EAGLE drafter), else None)."""
    if hasattr(drafter, "features"):
        return target(idx, cache, hidden=True, **layout)
    return target(idx, cache, **layout), None


def one_round(target, drafter, ctx, scheme, sampling, rng, rule=CORRECT, crop=True, order="dfs",
              slid=False, clock=None) -> Round:
    """One round on the decoding state ``ctx`` (its ids and the target's cache) and the drafter;
    ``clock`` (optional) times its steps (``Round.seconds``)."""
    stamps = [clock()] if clock else None
    t_cache, tree = ctx.caches[0], isinstance(scheme, Tree)
    n, last = t_cache.length, int(ctx.pending)
    d_len = lambda: getattr(getattr(drafter, "cache", None), "length", None)  # noqa: E731
    start = {"target": n, "draft": d_len()}
    # step 1: draft the whole layout, the scheme's draws on the drafter's rows
    if tree:
        u_draft, u_test, u_final = toy_sampling.uniforms(rng, scheme)
        drafted = tree_decode.draft_tree(drafter, ctx.view, scheme, sampling, u_draft, rule)
        drafts, parents, q_dev, q_host = drafted.tokens, drafted.parents, drafted.q_rows, drafted.q_host
        used = scheme
    else:
        g = drafter.budget(ctx.view, scheme.gamma)  # prompt lookup may propose fewer, even none
        used = scheme if g == scheme.gamma else (scheme.capped(g) if hasattr(scheme, "capped") else type(scheme)(g)) \
            if g else None
        u_draft, u_test, u_final = toy_sampling.uniforms(rng, used) if used else ([], [], float(rng.random()))
        q_dev, q_host = [], []

        def q_at(path):  # Chain.draft asks after (), then after each draft in turn
            q_dev.append(drafter.row(ctx.view, path, sampling))
            q_host.append(q_dev[-1].tolist())
            return q_host[-1]

        drafts, parents = used.draft(q_at, u_draft, rule) if used else ([], [])
        drafter.done()
    if clock:
        sync_device(ctx.device)
        stamps.append(clock())
    before = {"target": n, "draft": d_len()}
    # step 2: one target pass over [last, drafts]
    if tree:
        seq = tree_decode.flatten(parents, order)  # the nodes in the pass's order
        where = {j: i for i, j in enumerate(seq)}
        flat = [-1 if parents[j] < 0 else where[parents[j]] for j in seq]
        idx = torch.tensor([[last] + [drafts[j] for j in seq]], device=ctx.device)  # (1, N + 1)
        pos = torch.tensor(masks.tree_positions(flat, n), device=ctx.device)  # (N + 1,)
        mask = tree_decode.tree_mask(flat, n, ctx.device)
        logits, feats = verify_pass(target, idx, t_cache, drafter, pos=pos, mask=mask)
        p_pass = sampling.row(logits[0])
        p_dev = p_pass[[0] + [where[j] + 1 for j in range(len(drafts))]]  # (N + 1, V) back in node order
    else:
        idx = torch.tensor([[last] + drafts], device=ctx.device)  # (1, g + 1)
        logits, feats = verify_pass(target, idx, t_cache, drafter)
        p_dev = sampling.row(logits[0])  # (g + 1, V): lower-right causal mask
    p_host = p_dev.tolist()  # the rows the walk reads, on the host (as the drafts' q rows are)
    if clock:
        stamps.append(clock())
    after = {"target": t_cache.length, "draft": d_len()}
    # steps 3-5: the scheme's verify on the host, the same walk as the toy sampler's
    verdict = (used or scheme).verify(drafts, p_host, q_host, u_test, u_final, rule, parents=parents)
    path = verdict.path
    # step 6: keep the prefix, the last token and the accepted path in both caches
    emitted = [drafts[j] for j in path] + ([] if verdict.closing is None else [verdict.closing])
    if tree:
        t_cache.keep(list(range(n + 1)) + [n + 1 + where[j] for j in path])
        tree_decode.keep_path(drafter, drafted, path)
    elif crop:
        t_cache.crop(n + len(path) + (verdict.closing is not None))  # no closing token: the last draft is next
    if emitted:
        ctx.pending = torch.tensor([[emitted[-1]]], device=ctx.device)
        ctx.ids.extend(emitted)
    if not tree:
        drafter.keep(ctx.view, len(ctx.view) - 1, crop)
    if feats is not None:  # the EAGLE drafter re-reads the kept positions with the target's features
        kept = [0] + [where[j] + 1 for j in path] if tree else list(range(t_cache.length - n))
        drafter.features(ctx.view, feats[0, kept])
    ends = {"target": t_cache.length, "draft": d_len()}
    cache = {m: {"start": start[m], "before_verify": before[m], "after_verify": after[m], "after_crop": ends[m]}
             for m in start}
    q_rows = torch.stack([r for r in q_dev if r is not None]) if any(r is not None for r in q_dev) else \
        p_dev[:0]  # (rows drawn from, V)
    seconds = None
    if clock:
        sync_device(ctx.device)
        stamps.append(clock())
        seconds = dict(zip(("draft", "verify", "decide"), (b - a for a, b in zip(stamps, stamps[1:]))))
    return Round((used or scheme).name if drafts else "none", n, last, drafts, parents, q_rows, p_dev, u_test,
                 verdict, emitted, cache, slid, seconds=seconds)


def sync_device(device) -> None:
    """Wait for an accelerator's queued work (a no-op on the CPU), so that a clock reads finished work."""
    if device.type == "cuda":
        torch.cuda.synchronize()
