"""The speculative round in one function: start reading the tiny GPT here.

``reference_round`` is one round of speculative sampling for a chain of
gamma drafts on the tiny GPT pair, written top to bottom: draft, verify,
accept, correct or bonus, roll back. It runs the project's own model
(``model.GPT`` and its ``KVCache``), its sampling row (``rule.adjust``) and
its rule (``specsim.rule``: min(1, p/q) and the residual, written once), and
draws every token by inverse CDF (``specsim.schemes.base.draw``) from
uniforms laid out as the decoder lays them out. So it emits, for the same
seed, the same tokens as the decoder every page and command runs
(``specsim.gpt.decode.speculative_generate`` with a small-GPT drafter):
``tests/test_reference_round.py`` pins the two token for token.

What the decoder adds, and this file leaves out: other schemes (blocks,
trees), other drafters (early exit on the target's cache, EAGLE, prompt
lookup), other rules (the pitfalls), top-k and top-p, sliding the context
window, the trace of every round and the timings.

Notation: p is the target's row, q the drafter's; ids is the whole sequence
so far; V the vocabulary size; n the number of positions in the target's
cache.
"""
from __future__ import annotations

import torch

from ..rule import acceptance_probability, residual
from ..sampling import make_rng
from ..schemes.base import draw
from ..schemes.chain import check_gamma
from .rule import adjust


@torch.inference_mode()
def reference_round(target, draft, target_cache, draft_cache, ids: list, gamma: int, temperature: float,
                    rng) -> list:
    """One round: appends the tokens it emits to ``ids`` and returns them (1 to gamma + 1 tokens).

    Before it, ``target_cache`` holds ids[:-1] and ``draft_cache`` the same or one position less (after a
    full acceptance); ``temperature`` 0 is greedy; ``rng`` is a numpy Generator.
    """
    check_gamma(gamma)  # one line for a bad gamma
    device = target.wte.weight.device
    row = lambda logits: adjust(logits, temperature, greedy=temperature == 0)  # noqa: E731  (..., V) -> (..., V)
    n = target_cache.length  # positions 0 .. n-1 are cached; ids[n], the last token, is not fed yet
    # the decoder's uniforms, in its order: gamma to draw the drafts, gamma to test them, 1 to close
    u_draft, u_test, u_final = rng.random(gamma).tolist(), rng.random(gamma).tolist(), float(rng.random())

    # step 1: draft. The drafter feeds what its cache lacks, then each draft; the last draft is never fed
    drafts, q = [], []  # x_1 .. x_gamma; q[i]: the drafter's row before x_{i+1}, as floats
    feed = ids[draft_cache.length:]  # the last token (or the last draft and the last token: one behind)
    for i in range(gamma):
        logits = draft(torch.tensor([feed], device=device), draft_cache, last_only=True)  # (1, 1, V)
        q.append(row(logits[0, -1]).tolist())  # (V,) -> V floats
        drafts.append(draw(q[i], u_draft[i]))  # x_{i+1} ~ q by inverse CDF
        feed = [drafts[i]]

    # step 2: verify. One target pass over [last, x_1 .. x_gamma] after the n cached keys
    idx = torch.tensor([[ids[-1]] + drafts], device=device)  # (1, gamma + 1)
    logits = target(idx, target_cache)  # (1, gamma + 1, V): the lower-right causal mask; cache length n + gamma + 1
    p = row(logits[0]).tolist()  # (gamma + 1, V): p[i] is the target's row before x_{i+1}, p[gamma] after x_gamma

    # step 3: accept. Keep x_{k+1} while u < min(1, p(x) / q(x)); stop at the first rejection
    k = 0  # drafts accepted
    while k < gamma and u_test[k] < acceptance_probability(p[k][drafts[k]], q[k][drafts[k]]):
        k += 1
    if k < gamma:
        # step 4: correct. x_{k+1} was rejected: draw its replacement from norm(max(0, p - q)) at that position
        closing = draw(residual(p[k], q[k]), u_final)
    else:
        # step 5: bonus. All gamma accepted: one more token from p after x_gamma, which the pass already gave
        closing = draw(p[gamma], u_final)
    emitted = drafts[:k] + [closing]

    # step 6: roll back. Keep the prefix, the last token and the k accepted drafts in both caches; the
    # closing token is the next round's last token, fed then
    target_cache.crop(n + 1 + k)
    draft_cache.crop(min(n + 1 + k, draft_cache.length))  # all accepted: x_gamma was never fed, one behind
    ids.extend(emitted)
    return emitted


@torch.inference_mode()
def generate(target, draft, prompt_ids: list, n_tokens: int, gamma: int, temperature: float = 1.0,
             seed: int = 0) -> list:
    """``n_tokens`` new token ids after ``prompt_ids``, round after round (the decoder's, for the same seed).

    Both caches are filled with the prompt but its last token; the window never slides here, so the
    prompt, the tokens and one round must fit in it."""
    check_gamma(gamma)
    window = min(target.config.block_size, draft.config.block_size)
    if not prompt_ids:
        raise ValueError("the prompt is empty")
    if len(prompt_ids) + n_tokens + gamma > window:
        raise ValueError(f"the prompt ({len(prompt_ids)}), {n_tokens} tokens and gamma = {gamma} must fit "
                         f"in the context window of {window} (the reference round does not slide it)")
    ids, rng, caches = list(prompt_ids), make_rng(seed), (target.new_cache(), draft.new_cache())
    for model, cache in zip((target, draft), caches):
        if len(ids) > 1:  # prefill: every token but the last, which the first round feeds
            model(torch.tensor([ids[:-1]], device=target.wte.weight.device), cache, last_only=True)
    while len(ids) < len(prompt_ids) + n_tokens:
        reference_round(target, draft, *caches, ids, gamma, temperature, rng)
    return ids[len(prompt_ids):len(prompt_ids) + n_tokens]
