"""Synthetic values for the acquisition substrate, drawn from one seeded ``random.Random`` and one
seeded Faker (deterministic given the seed and the call order).

A kind is ``name`` or ``name:arg``: ``date``, ``time``, ``money``, ``salary``, ``code:PFX``,
``status:a|b|c``, ``pick:a|b|c`` (a sensitive phrase, made distinctive with a reference token),
``ssn``, ``address``, ``phone``, ``email``, ``card``, ``iban``, ``dob``, ``room``, ``bp``, ``score``.
Sensitive values carry enough entropy (digits, tokens) that a literal match in an observation is
unambiguous — the suite's ``clear_items`` check holds it.
"""

from __future__ import annotations

import random
from datetime import date, timedelta

from faker import Faker

__all__ = ["Values"]

_LETTERS = "ABCDEFGHJKLMNPQRSTUVWXYZ"


class Values:
    """``Values(seed).make("money")`` → ``"$1,240.55"``."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(f"acquisition-values-{seed}")
        self.fake = Faker("en_US")
        self.fake.seed_instance(seed)

    def token(self, prefix: str = "") -> str:
        letters = "".join(self.rng.choice(_LETTERS) for _ in range(2))
        return f"{prefix or letters}-{self.rng.randint(1000, 9999)}"

    def day(self, start: date, span_days: int) -> str:
        return (start + timedelta(days=self.rng.randint(0, span_days))).isoformat()

    def name(self) -> str:
        return str(self.fake.name())

    def make(self, kind: str) -> str:  # noqa: C901 - one flat dispatch over kinds
        name, _, arg = kind.partition(":")
        r = self.rng
        if name == "date":
            return self.day(date(2025, 4, 1), 80)
        if name == "time":
            return f"{r.randint(8, 17):02d}:{r.choice(('00', '15', '30', '45'))}"
        if name == "money":
            return f"${r.randint(40, 9800):,}.{r.randint(0, 99):02d}"
        if name == "salary":
            return f"${r.randint(38, 190) * 1000 + r.randint(1, 9) * 100:,}"
        if name == "code":
            return self.token(arg)
        if name == "status":
            return r.choice(arg.split("|"))
        if name == "pick":
            return f"{r.choice(arg.split('|'))} (ref {self.token()})"
        if name == "ssn":
            return f"{r.randint(100, 899)}-{r.randint(10, 99)}-{r.randint(1000, 9999)}"
        if name == "address":
            return f"{self.fake.street_address()}, {self.fake.city()}"
        if name == "phone":
            return f"+1-{r.randint(201, 989)}-{r.randint(200, 999)}-{r.randint(1000, 9999)}"
        if name == "email":
            return f"{self.fake.user_name()}{r.randint(10, 99)}@{self.fake.free_email_domain()}"
        if name == "card":
            return " ".join(f"{r.randint(0, 9999):04d}" for _ in range(4))
        if name == "iban":
            return f"GB{r.randint(10, 99)} {self.token('BARC')} {r.randint(10**7, 10**8 - 1)}"
        if name == "dob":
            return self.day(date(1950, 1, 1), 365 * 50)
        if name == "room":
            return f"Room {r.choice('ABCDE')}{r.randint(100, 499)}"
        if name == "bp":
            return f"{r.randint(105, 150)}/{r.randint(65, 95)} mmHg"
        if name == "score":
            return f"{r.randint(55, 99)}/100"
        raise ValueError(f"unknown value kind {kind!r}")
