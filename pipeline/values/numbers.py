"""Numbers as people write them: digits with separators, `2k`, `a grand`, `five hundred`."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from pipeline.values.lexicon import alternation, any_of, lexicon_file, words_of

NUMBER_WORDS = {w: i for i, w in enumerate(words_of("value_words", "number_words"))}  # "zero" 0 ... "nineteen" 19
_TENS = {w: 10 * (i + 2) for i, w in enumerate(words_of("value_words", "tens_words"))}
_SCALES = {"hundred": 100, "thousand": 1000, "grand": 1000, "k": 1000, "million": 1_000_000,
           "mil": 1_000_000, "m": 1_000_000}


def parse_number_words(text: str) -> Decimal | None:
    """'five hundred' -> 500, 'a grand' -> 1000, '4.5k' -> 4500, '1,200' -> 1200; None if not a number."""
    text = text.lower().replace(",", "").replace("-", " ").strip()
    text = re.sub(r"(\d)\s*(k|m)\b", r"\1 \2", text)
    tokens = [t for t in text.split() if t != "and"]
    if not tokens:
        return None
    total, current, seen = Decimal(0), Decimal(0), False
    if tokens[0] in {"a", "an"} and len(tokens) > 1 and re.match(r"[\d.]", tokens[1]):
        tokens = tokens[1:]  # "a $62.40 charge": an article before a number
    for token in tokens:
        if token in {"a", "an", "one"} and not seen:
            current, seen = Decimal(1), True
            continue
        if re.fullmatch(r"\d+(?:\.\d+)?|\.\d+", token):
            current += Decimal(token)
        elif token in NUMBER_WORDS:
            current += NUMBER_WORDS[token]
        elif token in _TENS:
            current += _TENS[token]
        elif token == "half" and seen and current == 1:
            current = Decimal("0.5")
        elif token in _SCALES and seen:
            scale = _SCALES[token]
            if scale == 100:
                current = (current or 1) * 100
            else:
                total += (current or 1) * scale
                current = Decimal(0)
        else:
            return None
        seen = True
    if tokens[-1] in {"a", "an"} or (len(tokens) == 1 and tokens[0] in {"a", "an"}):
        return None  # "a" alone is an article, not a number ("a charge"); "a grand" is one
    return total + current if seen else None


# A currency's code or its words (`lexicon/currencies.yaml`), longest first
_CURRENCY_WORDS = rf"\b{alternation(sorted({w for code, words in lexicon_file('currencies').items() for w in [code, *words]}))}\b"
CURRENCY_SYMBOLS = "$€£"
_MONEY_MARK = re.compile(rf"[{re.escape(CURRENCY_SYMBOLS)}]|{_CURRENCY_WORDS}", re.IGNORECASE)


def written_as_money(text: str) -> bool:
    """Whether the words say they are money: a currency's symbol or its word or code ("$40", "45 dollars",
    "89.50 EUR").

    >>> written_as_money("45 dollars"), written_as_money("89.50 EUR"), written_as_money("€12"), written_as_money("45 kg")
    (True, True, True, False)
    """
    return bool(_MONEY_MARK.search(text))


_FILLERS = re.compile(rf"\b{any_of('value_words', 'amount_fillers')}\b")  # "about", "a total of"


def parse_amount(text: str, whole: bool = False) -> Decimal | None:
    """An amount of money: the words as one amount ("$4,500", "a grand"), else (unless `whole`) the only
    number written among other words."""
    cleaned = re.sub(rf"[{re.escape(CURRENCY_SYMBOLS)}]", " $ ", text.lower()).replace("’", "'")
    cleaned = _FILLERS.sub(" ", cleaned)
    cents = re.fullmatch(r"\s*(\d+)\s*cents?\s*", cleaned)
    if cents:
        return Decimal(cents[1]) / 100
    cleaned = re.sub(_CURRENCY_WORDS, " ", cleaned).replace("$", " ")
    cleaned = re.sub(r"\s+", " ", cleaned).strip(" .")
    # "2k" and "4.5 k" stay together; separate numbers ("3 invoices of 200") are ambiguous.
    value = parse_number_words(cleaned)
    if value is not None or whole:
        return value
    numbers = re.findall(r"\d[\d,]*(?:\.\d+)?\s*(?:k|m)?\b", cleaned)
    if len(numbers) == 1:
        return parse_number_words(numbers[0])
    return None


def format_amount(value: Decimal) -> str:
    try:
        return f"{value.quantize(Decimal('0.01')):f}"
    except InvalidOperation:
        return str(value)
