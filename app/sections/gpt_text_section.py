"""The Tiny GPT page's generated text, each character tinted by how it was made (an accepted draft, a
replacement from the residual, a bonus from p), with its legend. Every character passes ``tokens.html_text``."""
import streamlit as st

from parts.tokens import TOKEN_STYLE, html_text, legend_html
from specsim.plots.colors import BONUS_COLOR, DARK_GREY, MUTED, OVERLAP_COLOR, RESIDUAL_COLOR, tint

TEXT_TINT = {"draft": tint(OVERLAP_COLOR), "correct": tint(RESIDUAL_COLOR), "bonus": tint(BONUS_COLOR)}


def pieces(gen, vocab) -> list:
    """(characters, status) of each round: its accepted drafts, then its closing token."""
    out = []
    for r in gen.rounds:
        out.append(("".join(vocab[t] for t in r.drafts[:r.accepted]), "draft"))
        out.append((vocab[r.closing_token], "correct" if r.correction == "residual" else "bonus"))
    return out


def text_html(prompt: str, pieces) -> str:
    """Generated text with each character tinted by how it was made.

    ``pieces`` is a sequence of (characters, status) with status "draft" (accepted
    draft), "correct" (replacement) or "bonus"; the prompt is shown plain.
    """
    def show(text):
        return html_text(text).replace("\n", "↵<br>")

    out = [f'<span style="color:{DARK_GREY}">{show(prompt)}</span>']
    for chars, status in pieces:
        out.append(f'<span title="{TOKEN_STYLE[status][1]}" style="background:{TEXT_TINT[status]}">{show(chars)}</span>')
    return ('<div style="font-family:monospace;font-size:1.05rem;white-space:pre-wrap;line-height:1.6;'
            f'border:1px solid {MUTED};border-radius:0.4rem;padding:0.6rem">' + "".join(out) + "</div>")



def show(prompt: str, gen, vocab) -> None:
    st.markdown(text_html(prompt, pieces(gen, vocab)), unsafe_allow_html=True)
    st.markdown(legend_html(["draft", "correct", "bonus"]), unsafe_allow_html=True)
