"""The fast pattern search: given any pattern and text, then it finds exactly what
`re.search(pattern, text, re.IGNORECASE)` finds — only faster."""

from __future__ import annotations

import random
import re

import pytest

from h0.triage.textmatch import compile_pattern

PATTERNS = [
    r"\basap\b",
    r"\ba\.?s\.?a\.?p\b",
    r"\bby (the )?end of (the )?day\b",
    r"\bby eod\b",
    r"\?(?=\s|$|<)",
    r"\b(no-?reply|news)@",
    r"\bfoo|bar",
    r"\b\w*",
    r"\b",
    r"\b-x",
    r"\b[A-Z]{3}\b",
    r"\S+@\S+",
    r"\bZoë\b",
    r"(?:^|(?<=\.))example\.com$",
    r"\d{1,2}\s?% off\b",
    r"\bstraße\b",
    r"(?-i:ABC)",
    r"\b[^a-z ]+\b",
]
TEXTS = [
    "",
    "ASAP please",
    "Greetings from Asaph",
    "a.s.a.p!",
    "xasap asap",
    "Send it BY END OF THE DAY.",
    "by eod",
    "hobby eod",
    "Is it? Yes",
    "<p>Free?</p>",
    "url?id=3",
    "noreply@x.com",
    "mynoreply@x.com",
    "foo",
    "xbar",
    "-x and a-x",
    "ABC abc AbC",
    "Zoë and zoë",
    "mail.example.com",
    "notexample.com",
    "30% off",
    "Die Straße",
    "STRASSE",
    "  ",
    "İstanbul ASAP",
    "x_asap",
    "3 ASAP",
]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_given_a_pattern_then_results_equal_re_with_ignorecase(pattern: str) -> None:
    compiled = compile_pattern(pattern)
    reference = re.compile(pattern, re.IGNORECASE)
    for text in TEXTS:
        expected = reference.search(text)
        found = compiled.search(text, text.lower())
        assert (found is None) == (expected is None), (pattern, text, found, expected)
        if found is not None and expected is not None:
            assert found.lower() == expected.group(0).lower(), (pattern, text)


def test_given_random_text_then_boundary_patterns_agree_with_re() -> None:
    rng = random.Random(3)
    alphabet = "asp.AS_- ?é1"
    for pattern in (r"\basap\b", r"\bs\.?p", r"\b-s", r"\b\.a"):
        compiled, reference = compile_pattern(pattern), re.compile(pattern, re.IGNORECASE)
        for _ in range(2000):
            text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
            expected = reference.search(text)
            found = compiled.search(text, text.lower())
            assert (found is None) == (expected is None), (pattern, text)
            if expected is not None:
                assert found == expected.group(0).lower() or found == expected.group(0), (pattern, text)


def test_lowercase_patterns_skip_ignorecase_and_leading_boundaries_move_out() -> None:
    fast = compile_pattern(r"\bby eod\b")
    assert fast.lowered and fast.boundary and not fast.compiled.flags & re.IGNORECASE
    careful = compile_pattern(r"\bNo\S+")
    assert not careful.lowered and careful.boundary
    assert not compile_pattern(r"\bfoo|bar").boundary  # \b binds to foo only
