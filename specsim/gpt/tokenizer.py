"""Characters to token ids and back, with errors that name the offending character.

The vocabulary is a string: token id i is ``vocab[i]``. The shipped one is
a newline plus the 95 printable ASCII characters, stored in the weights
manifest so it never depends on the local Python or corpus.

>>> tok = CharTokenizer(ASCII_VOCAB)
>>> tok.encode("def f")
[69, 70, 71, 1, 71]
>>> tok.decode([69, 70, 71])
'def'
>>> tok.encode("x\\u00e9")
Traceback (most recent call last):
...
specsim.gpt.tokenizer.UnknownCharacterError: character 'é' (U+00E9) at position 1 is not in the vocabulary (newline and printable ASCII)
"""
from __future__ import annotations

ASCII_VOCAB = "\n" + "".join(chr(i) for i in range(32, 127))


class UnknownCharacterError(ValueError):
    """A character the models have never seen."""


class CharTokenizer:
    def __init__(self, vocab: str):
        if len(set(vocab)) != len(vocab):
            raise ValueError("the vocabulary repeats a character")
        self.vocab = vocab
        self.index = {ch: i for i, ch in enumerate(vocab)}

    def __len__(self) -> int:
        return len(self.vocab)

    def describe(self) -> str:
        return "newline and printable ASCII" if self.vocab == ASCII_VOCAB else f"{len(self.vocab)} characters"

    def encode(self, text: str) -> list[int]:
        try:
            return [self.index[ch] for ch in text]
        except KeyError:
            pos = next(i for i, ch in enumerate(text) if ch not in self.index)
            ch = text[pos]
            raise UnknownCharacterError(
                f"character {ch!r} (U+{ord(ch):04X}) at position {pos} is not in the vocabulary "
                f"({self.describe()})") from None

    def decode(self, ids) -> str:
        return "".join(self.vocab[i] for i in ids)
