"""Deterministic workload of ``tpguard bench perf``: atoms, the typical call, long texts, nested calls.

Atoms are a realistic customer-database mix — person names, phone numbers, e-mail addresses,
customer ids and street addresses — because names and addresses are *fuzzy candidates* (word-like
values whose word prefixes occur in ordinary text), and the fuzzy path is what grows with the atom
count. Filler atoms that are never fuzzy candidates would prove nothing.

The vocabulary (first and last names, street names, e-mail domains, prose paragraphs) comes from
Faker with a fixed seed; records are combined from those pools with :class:`random.Random` of the
same seed. Faker's ``name()``/``street_address()`` cost ~100 µs each, which would spend ~1 minute
of the run on building 100,000 atoms; combining pools gives the same realistic values in ~0.3 s.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cache
from typing import Any

from tpguard import PolicyKB, PrivateAtom, Rule, ToolSpec

__all__ = [
    "NESTED_SPEC",
    "SEED",
    "SIZES",
    "SPEC",
    "Sizes",
    "case_atoms",
    "count_label",
    "create_ticket",
    "long_text",
    "make_atoms",
    "nested_arguments",
    "policy",
    "size_label",
    "typical_arguments",
]

SEED = 20240917
KB = 1024

SPEC = ToolSpec(name="create_ticket", purpose="open a delivery ticket for a customer", sink="ticket",
                free_text=("note",))
NESTED_SPEC = ToolSpec(name="bulk_update_tickets", purpose="update delivery tickets", sink="ticket",
                       free_text=("comment",))
#: Names, addresses and customer ids may go into tickets; phones and e-mails may not.
_RULES = tuple(Rule(atom_type=t, sink="ticket", allow=True)
               for t in ("person_name", "street_address", "customer_id"))


def count_label(n: int) -> str:
    """``10`` → ``10``, ``1000`` → ``1k``, ``100000`` → ``100k`` (figure names)."""
    return f"{n // 1000}k" if n >= 1000 and n % 1000 == 0 else str(n)


def size_label(n: int) -> str:
    """``1024`` → ``1kb``, ``1048576`` → ``1mb``."""
    return f"{n // (KB * KB)}mb" if n % (KB * KB) == 0 else f"{n // KB}kb"


@dataclass(frozen=True)
class Sizes:
    """The sizes one run measures. ``length_small``/``length_big`` play the roles of 10 KB/100 KB
    in the ratios; the atom, leaf and length series' first and last sizes play 10/100k atoms,
    1k/10k leaves."""

    name: str
    atoms: tuple[int, ...]
    lengths: tuple[int, ...]
    leaves: tuple[int, ...]
    length_small: int
    length_big: int
    register: int
    budget_s: float  # soft: keep repeating a measurement until this much time was spent
    cap_s: float  # hard: one call longer than this is stopped and reported as timed out
    adversarial: int = 1024 * KB  # characters of each text of the adversarial series

    @property
    def policy_atoms(self) -> int:
        return self.atoms[-1]


SIZES = {
    "full": Sizes("full", (10, 1_000, 10_000, 100_000), (KB, 10 * KB, 100 * KB, 1024 * KB),
                  (1_000, 10_000), 10 * KB, 100 * KB, 1_000, 0.25, 10.0),
    "quick": Sizes("quick", (10, 1_000, 10_000), (KB, 10 * KB, 100 * KB), (1_000, 5_000),
                   10 * KB, 100 * KB, 1_000, 0.1, 3.0, 100 * KB),
    # Test-only: a whole run in a few seconds.
    "tiny": Sizes("tiny", (10, 200), (KB, 4 * KB), (100, 400), KB, 4 * KB, 50, 0.01, 5.0, 4 * KB),
}


@dataclass(frozen=True)
class _Pools:
    first: tuple[str, ...]
    last: tuple[str, ...]
    streets: tuple[str, ...]
    domains: tuple[str, ...]
    paragraphs: tuple[str, ...]


@cache
def _pools() -> _Pools:
    from faker import Faker

    fake = Faker("en_US")
    fake.seed_instance(SEED)

    def pool(make: Any, n: int) -> tuple[str, ...]:
        return tuple(dict.fromkeys(make() for _ in range(n)))  # unique, in a fixed order

    return _Pools(pool(fake.first_name, 1500), pool(fake.last_name, 1500),
                  pool(fake.street_name, 1500), pool(fake.free_email_domain, 200),
                  tuple(fake.paragraph(nb_sentences=4) for _ in range(300)))


def _record(rng: random.Random, p: _Pools, rid: str) -> list[PrivateAtom]:
    first, last = rng.choice(p.first), rng.choice(p.last)
    phone = f"{rng.randint(201, 989)}-{rng.randint(200, 999)}-{rng.randint(0, 9999):04d}"
    street = f"{rng.randint(1, 9999)} {rng.choice(p.streets)}"
    if rng.random() < 0.3:
        street += f" Apt. {rng.randint(1, 999)}"
    email = f"{first}.{last}{rng.randint(1, 99)}@{rng.choice(p.domains)}".lower()
    return [
        PrivateAtom(id=f"{rid}-name", type="person_name", value=f"{first} {last}"),
        PrivateAtom(id=f"{rid}-phone", type="phone", value=phone),
        PrivateAtom(id=f"{rid}-email", type="email", value=email),
        PrivateAtom(id=f"{rid}-id", type="customer_id", value=f"CUS-{rng.randint(0, 9_999_999):07d}"),
        PrivateAtom(id=f"{rid}-address", type="street_address", value=street),
    ]


def make_atoms(n: int, prefix: str = "c", seed: int = SEED) -> list[PrivateAtom]:
    """``n`` atoms, five per customer record (name, phone, e-mail, id, address), deterministic.

    Ids carry ``prefix`` so session and registered atoms never collide with the policy's."""
    rng, pools = random.Random(f"{seed}:{prefix}"), _pools()
    out: list[PrivateAtom] = []
    i = 0
    while len(out) < n:
        out.extend(_record(rng, pools, f"{prefix}{i}"))
        i += 1
    return out[:n]


def case_atoms() -> dict[str, PrivateAtom]:
    """The first customer record, by type: the atoms the typical call and the texts mention."""
    return {a.type: a for a in make_atoms(5)}


@cache
def policy(n_atoms: int) -> PolicyKB:
    """A policy with ``n_atoms`` atoms (the first record included) and the ticket rules."""
    return PolicyKB(atoms=tuple(make_atoms(n_atoms)), tools=(SPEC, NESTED_SPEC), rules=_RULES)


def create_ticket(customer_id: str, priority: str, queue: str, due: str, note: str) -> str:
    """Open a delivery ticket for a customer."""
    return "TCK-1"


def typical_arguments() -> dict[str, str]:
    """Five fields; a ~200-character note naming the customer and address (authorized for the
    ticket sink) and the phone number (forbidden)."""
    a = case_atoms()
    note = (f"Customer {a['person_name'].value} asked to move the delivery to "
            f"{a['street_address'].value} next week; please call back at {a['phone'].value} "
            "before noon and confirm the new slot with the courier team and the depot "
            "manager.")
    return {"customer_id": a["customer_id"].value, "priority": "normal", "queue": "deliveries",
            "due": "2026-12-01", "note": note}


def _blocks(mentions: list[PrivateAtom]) -> list[list[str]]:
    """E-mail-like blocks, each a list of lines, with a few atom occurrences per block."""
    paragraphs = _pools().paragraphs
    by_type: dict[str, list[PrivateAtom]] = {}
    for a in mentions:
        by_type.setdefault(a.type, []).append(a)
    blocks = []
    for i, para in enumerate(paragraphs):
        def pick(t: str, i: int = i) -> str:
            return by_type[t][i % len(by_type[t])].value
        blocks.append([f"From: {pick('person_name')} <{pick('email')}>",
                       f"Subject: delivery for {pick('customer_id')}", "", "Hi team,", "", para,
                       f"Ship to: {pick('street_address')}", f"Call me at {pick('phone')}.", "",
                       paragraphs[(i * 7 + 3) % len(paragraphs)], "", "Thanks,",
                       pick("person_name")])
    return blocks


_SEPARATORS = ("\n", "\n", "\n\n", "\n\t", "  ", "\r\n")


def long_text(size: int, *, multiline: bool) -> str:
    """About ``size`` characters of an e-mail thread mentioning the first four customers.

    Single-spaced and multi-line texts have the same words; the multi-line one separates lines by
    newlines, blank lines, tabs, double spaces and CRLF, the way pasted e-mail and documents do."""
    blocks = _blocks(make_atoms(20))
    parts: list[str] = []
    total = i = 0
    while total < size:
        for j, line in enumerate(blocks[i % len(blocks)]):
            if not line and not multiline:  # blank lines exist only in the multi-line text
                continue
            sep = _SEPARATORS[(i + j) % len(_SEPARATORS)] if multiline else " "
            parts.append(line + sep)
            total += len(line) + len(sep)
        i += 1
    text = "".join(parts)[:size]
    cut = text.rfind(" ")  # end on a whole word
    return text[:cut] if cut > 0 else text


def nested_arguments(leaves: int) -> dict[str, Any]:
    """A bulk update of ``leaves // 4`` tickets, four leaves each; every third comment mentions a
    phone number (forbidden), the others an assignee's name (authorized)."""
    people = make_atoms(50)
    names = [a.value for a in people if a.type == "person_name"]
    phones = [a.value for a in people if a.type == "phone"]
    tickets = []
    for i in range(max(1, leaves // 4)):
        mention = (f"customer asked for a call at {phones[i % len(phones)]} before the delivery"
                   if i % 3 == 0 else f"handed over to {names[i % len(names)]} for the next round")
        tickets.append({"id": f"T-{i:06d}", "status": "open" if i % 2 else "pending",
                        "assignee": names[(i + 1) % len(names)],
                        "comment": f"Ticket {i}: {mention}; parcel left at the depot."})
    return {"tickets": tickets}
