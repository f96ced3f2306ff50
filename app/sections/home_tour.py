"""Home's first tour: what each step of a round does, in words, for a newcomer who has seen no formula.

Each step of the tour is one event of a seeded round (``RoundTrace.events()``) and then "the other
ending" (the round that ends the other way: a bonus after a rejection, or the reverse). A concept is
explained one step BEFORE it appears in the chart: the uniform draw u on the step before the first
test, the residual r on the step before the replacement, the bonus on the step before it. The numbers
come from the trace (``event_text.describe_event``) and the model; nothing is typed.
"""
from __future__ import annotations

from parts.tokens import md
from specsim import rule, sampling

NOW = {
    "draft": ("**The drafter guesses.** A small, cheap model (the **drafter**) proposes the next token. Its "
              "chances for each token are the orange bars, called **q**; the outlined bar is the token it "
              "drew. It guesses γ tokens in a row, each after the ones before."),
    "verify": ("**The target checks all guesses in one pass.** The big model (the **target**) reads the "
               "context and every guess at once, and gives its own chances, the blue bars **p**, at each "
               "guessed position and one position more. On a GPU one pass over a few positions costs little "
               "more than writing one token (lesson 1): that is where the time is saved."),
    "accept": ("**Kept.** The uniform draw u (the ◆) fell below the bar: the guess stays, and the next guess "
               "is tested."),
    "reject": ("**Rejected.** u (the ◆) landed above the bar: this guess is dropped, and every guess after "
               "it is thrown away unchecked (it was made after a token that is no longer there)."),
    "correct": ("**A replacement from the residual.** The red bars are r: the target's chances left over "
                "where the drafter offered less than the target wanted. The token drawn from r takes the "
                "rejected guess's place; the picture below the tour shows why every token then comes out "
                "exactly as often as the target alone would write it."),
    "bonus": ("**A free token.** Every guess was kept, and the target's one pass already gave its chances at "
              "the next position: one more token is drawn from p, at no extra cost."),
    "emit": ("**The round's output.** The kept guesses plus one token (a replacement or a bonus): at least "
             "one token, at most γ + 1, for one pass of the target."),
}

NEXT = {
    "u": ("**Next: the test, with a uniform draw u.** For each guess, left to right, specsim draws u, a random "
          "number between 0 and 1 (every value equally likely). The guess is kept when u falls below p/q, "
          "the target's chance of that token over the drafter's, capped at 1: a token the target likes at "
          "least as much as the drafter is always kept; one the drafter over-rates is kept only in "
          "proportion. The chart will show u as a ◆ against that bar."),
    "r": ("**Next: the residual r.** The rejected guess is replaced, but not by a draw from p itself: the "
          "tokens the drafter likes have already had their share through the guesses that were kept, so a "
          "draw from p would give them too much. The replacement comes from what is left of p where q fell "
          "short, scaled to add up to 1: the **residual r**, drawn as red bars."),
    "bonus": ("**Next: a bonus.** Every guess survived, so the target's pass has one position left over: "
              "the round gets one more token from it."),
}


def teaser(events: list, i: int) -> str | None:
    """What the step after event ``i`` will introduce, said before it appears (None when nothing new)."""
    if i + 1 >= len(events):
        return None
    now, then = events[i]["kind"], events[i + 1]["kind"]
    if then in ("accept", "reject") and now == "verify":
        return NEXT["u"]
    if then == "correct":
        return NEXT["r"]
    if then == "bonus":
        return NEXT["bonus"]
    return None


def other_seed(model, context, gamma: int, seed: int, bonus: bool, tries: int = 64) -> int | None:
    """The first seed after ``seed`` whose round ends with a bonus (``bonus``) or with a replacement."""
    for s in range(seed + 1, seed + 1 + tries):
        if (sampling.trace_round(model, context, gamma, seed=s).bonus is not None) == bonus:
            return s
    return None


def other_ending(trace) -> str:
    """The last step's words, for ``trace``: a round that ends the other way from the tour's."""
    if trace.bonus is not None:
        return ("**The other ending: a bonus.** In this round every guess was kept, so the target's one pass "
                "had a position left over, and one more token came from p (purple), free. Every round ends one "
                "of these two ways: a replacement or a bonus.")
    return ("**The other ending: a replacement.** In this round a guess was rejected: the draw u landed above "
            "p/q, and the replacement was drawn from the residual r (red), what the target wanted beyond what "
            "the drafter offered. Every round ends one of these two ways: a replacement or a bonus.")


def two_ways(vocab, p, q) -> list:
    """One line per token: how often it comes out kept as drafted, how often from the residual, and p."""
    kept, rest = rule.overlap(p, q), rule.excess(p, q)
    return [f"**{md(x)}**: {k} drafted and kept + {r} rejected, then drawn from the residual = {t}, "
            f"the target's p({md(x)})" for x, k, r, t in zip(vocab, kept, rest, p)]
