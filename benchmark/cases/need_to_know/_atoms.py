"""Atom kinds: type, category (seed ``000_*`` Tables B.13–B.14), severity weight (§5.3) and a
factory producing a Faker value with the aliases, semantic variants and masked forms its type has.

Severity: 3 for secrets, government ids, bank accounts and medical / mental-health facts; 2 for
direct identifiers and other sensitive facts; 1 for identifiers and operational-adjacent facts;
0.5 for non-sensitive operational atoms (status, next step).
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from faker import Faker

from . import _terms as T

__all__ = ["KINDS", "AtomKind", "AtomValue"]


@dataclass(frozen=True)
class AtomValue:
    value: str
    aliases: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()
    masked: tuple[str, ...] = ()
    field_value: Any = None  # what a structured field carries (a number for amounts)


Factory = Callable[[Faker, random.Random, dict[str, Any]], AtomValue]


@dataclass(frozen=True)
class AtomKind:
    type: str
    category: str
    severity: float
    make: Factory
    label: str
    number: bool = False  # carried in a JSON-number field


def _name(fk: Faker, rng: random.Random, _: dict[str, Any]) -> AtomValue:
    female = rng.random() < 0.5
    first = fk.first_name_female() if female else fk.first_name_male()
    last = fk.last_name()
    title = rng.choice(("Ms.", "Mrs.")) if female else "Mr."
    return AtomValue(f"{first} {last}", (f"{title} {last}", f"{first[0]}. {last}", f"{last}, {first}"))


def _phone(fk: Faker, rng: random.Random, _: dict[str, Any]) -> AtomValue:
    a, b, c = rng.randint(201, 989), rng.randint(210, 989), rng.randint(1000, 9999)
    return AtomValue(f"{a}-{b}-{c}", (f"({a}) {b}-{c}", f"+1 {a} {b} {c}"))


def _email(fk: Faker, rng: random.Random, _: dict[str, Any]) -> AtomValue:
    user = f"{fk.first_name().lower()}.{fk.last_name().lower()}{rng.randint(2, 98)}"
    return AtomValue(f"{user}@{fk.free_email_domain()}")


def _date(fk: Faker, rng: random.Random, ctx: dict[str, Any]) -> AtomValue:
    d = fk.date_of_birth(minimum_age=19, maximum_age=84) if ctx.get("past", True) else \
        fk.date_between(start_date="+5d", end_date="+120d")
    return AtomValue(d.isoformat(), (d.strftime("%m/%d/%Y"), f"{d:%B} {d.day}, {d.year}",
                                     f"{d.day} {d:%B} {d.year}"))


def _when(fk: Faker, rng: random.Random, _: dict[str, Any]) -> AtomValue:
    d = fk.date_between(start_date="+3d", end_date="+60d")
    h, m = rng.randint(8, 17), rng.choice((0, 15, 30, 45))
    hour12 = h - 12 if h > 12 else h
    return AtomValue(f"{d.isoformat()} {h:02d}:{m:02d}",
                     (f"{d:%B} {d.day} at {hour12}:{m:02d} {'pm' if h >= 12 else 'am'}",
                      f"{d:%m/%d/%Y} {h:02d}:{m:02d}"))


def _address(fk: Faker, rng: random.Random, _: dict[str, Any]) -> AtomValue:
    street, city, state, zc = fk.street_address(), fk.city(), fk.state_abbr(), fk.zipcode()
    return AtomValue(f"{street}, {city}, {state} {zc}", (f"{street}, {city}",), (street,))


def _city(fk: Faker, rng: random.Random, _: dict[str, Any]) -> AtomValue:
    city, state = fk.city(), fk.state()
    return AtomValue(f"{city}, {state}", (f"{city} ({fk.state_abbr()})",))


def _coords(fk: Faker, rng: random.Random, _: dict[str, Any]) -> AtomValue:
    lat, lon = rng.uniform(30, 47), -rng.uniform(75, 122)
    a, b = fk.street_name(), fk.street_name()
    return AtomValue(f"{a} and {b}", (f"{a} & {b}", f"corner of {a} and {b}"),
                     (f"{lat:.4f}, {lon:.4f}",))


def _ssn(fk: Faker, rng: random.Random, _: dict[str, Any]) -> AtomValue:
    a, b, c = rng.randint(101, 665), rng.randint(10, 99), rng.randint(1000, 9999)
    return AtomValue(f"{a}-{b}-{c}", (f"{a} {b} {c}",), masked=(f"***-**-{c}",))


def _code(prefix: str, digits: int, letters: int = 0) -> Factory:
    def make(fk: Faker, rng: random.Random, _: dict[str, Any]) -> AtomValue:
        head = "".join(rng.choices(string.ascii_uppercase, k=letters))
        body = "".join(rng.choices(string.digits, k=digits))
        body = str(rng.randint(1, 9)) + body[1:]
        return AtomValue(f"{prefix}{head}{body}", (f"{prefix}{head} {body}",) if prefix else ())
    return make


def _pnr(fk: Faker, rng: random.Random, _: dict[str, Any]) -> AtomValue:
    chars = string.ascii_uppercase.replace("O", "").replace("I", "")
    v = "".join(rng.choices(chars, k=3)) + str(rng.randint(2, 9)) + "".join(rng.choices(chars, k=2))
    return AtomValue(v, (f"booking {v}",))


def _card(fk: Faker, rng: random.Random, _: dict[str, Any]) -> AtomValue:
    d = f"{rng.randint(1000, 9999)}"
    return AtomValue(d, (f"card ending {d}",), masked=(f"**** {d}", f"xxxx-{d}"), field_value=d)


def _iban(fk: Faker, rng: random.Random, _: dict[str, Any]) -> AtomValue:
    acct = "".join(rng.choices(string.digits, k=10))
    routing = f"0{rng.randint(10000000, 99999999)}"
    return AtomValue(f"{routing}-{acct}", (f"{routing} {acct}", f"routing {routing} account {acct}"),
                     masked=(f"******{acct[-4:]}",))


def _money(lo: int, hi: int, cents: bool) -> Factory:
    def make(fk: Faker, rng: random.Random, _: dict[str, Any]) -> AtomValue:
        if cents:
            x = rng.randint(lo, hi) + rng.choice(range(11, 99, 2)) / 100
            return AtomValue(f"${x:,.2f}", (f"{x:.2f} USD", f"USD {x:,.2f}"), field_value=x)
        n = rng.randint(lo, hi) * 100 + rng.choice((0, 50))
        return AtomValue(f"${n:,}", (f"{n:,} USD", f"{n} dollars"), (f"about {n / 1000:g}k a year",))
    return make


def _phrase(pool: T.Paraphrased) -> Factory:
    def make(fk: Faker, rng: random.Random, _: dict[str, Any]) -> AtomValue:
        value, variants = rng.choice(pool)
        return AtomValue(value, (), variants)
    return make


def _plain(pool: tuple[str, ...]) -> Factory:
    def make(fk: Faker, rng: random.Random, _: dict[str, Any]) -> AtomValue:
        return AtomValue(rng.choice(pool))
    return make


def _contact(fk: Faker, rng: random.Random, ctx: dict[str, Any]) -> AtomValue:
    rel = rng.choice(("sister", "brother", "mother", "father", "partner", "friend"))
    name, phone = _name(fk, rng, ctx), _phone(fk, rng, ctx)
    return AtomValue(f"{name.value} ({rel}), {phone.value}", (f"{name.value}, {phone.value}",),
                     (name.value,))


def _gpa(fk: Faker, rng: random.Random, _: dict[str, Any]) -> AtomValue:
    g = rng.randint(180, 398) / 100
    return AtomValue(f"GPA {g:.2f}", (f"{g:.2f} GPA", f"grade point average of {g:.2f}"))


def _api_key(fk: Faker, rng: random.Random, _: dict[str, Any]) -> AtomValue:
    body = "".join(rng.choices(string.ascii_letters + string.digits, k=28))
    prefix = rng.choice(("sk_live_", "AKIA", "ghp_", "xoxb-"))
    return AtomValue(prefix + body, masked=(f"{prefix}…{body[-4:]}",))


def _db_host(fk: Faker, rng: random.Random, _: dict[str, Any]) -> AtomValue:
    word = fk.word().lower()
    host = f"{word}-db-{rng.randint(2, 40):02d}.prod.{fk.domain_word()}.internal"
    return AtomValue(f"{host}:5432", (host,))


def _repo(fk: Faker, rng: random.Random, _: dict[str, Any]) -> AtomValue:
    org, repo = fk.domain_word(), f"{fk.word()}-{fk.word()}-service"
    return AtomValue(f"git.{org}.internal/{rng.choice(('platform', 'payments', 'core'))}/{repo}")


def _ip(fk: Faker, rng: random.Random, _: dict[str, Any]) -> AtomValue:
    ip = f"{rng.randint(23, 198)}.{rng.randint(10, 250)}.{rng.randint(10, 250)}.{rng.randint(10, 250)}"
    return AtomValue(ip, (f"login from {ip}",))


def _imei(fk: Faker, rng: random.Random, _: dict[str, Any]) -> AtomValue:
    d = str(rng.randint(1, 9)) + "".join(rng.choices(string.digits, k=14))
    return AtomValue(d, (f"{d[:2]}-{d[2:8]}-{d[8:14]}-{d[14]}",))


def _employer(fk: Faker, rng: random.Random, _: dict[str, Any]) -> AtomValue:
    return AtomValue(f"{fk.job()} at {fk.company()}")


def _ein(fk: Faker, rng: random.Random, _: dict[str, Any]) -> AtomValue:
    a, b = rng.randint(10, 98), rng.randint(1000000, 9999999)
    return AtomValue(f"{a}-{b}", (f"EIN {a}{b}",))


def _k(type_: str, category: str, severity: float, make: Factory, label: str,
       number: bool = False) -> tuple[str, AtomKind]:
    return type_, AtomKind(type_, category, severity, make, label, number)


KINDS: dict[str, AtomKind] = dict((
    _k("person_name", "Direct identifier", 2, _name, "name"),
    _k("phone", "Direct identifier", 2, _phone, "phone"),
    _k("email", "Direct identifier", 2, _email, "email"),
    _k("date_of_birth", "Personal-sensitive", 2, _date, "date of birth"),
    _k("home_address", "Address", 2, _address, "home address"),
    _k("city", "Location", 1, _city, "location"),
    _k("incident_location", "Location-sensitive", 2, _coords, "incident location"),
    _k("national_id", "Government identifier", 3, _ssn, "SSN"),
    _k("passport_number", "Government identifier", 3, _code("", 8, 1), "passport number"),
    _k("service_reference", "Government service", 1, _code("SVC-", 7), "service application number"),
    _k("government_status", "Government-sensitive", 2, _phrase(T.GOV_SENSITIVE), "government matter"),
    _k("booking_reference", "Travel identifier", 1, _pnr, "booking reference"),
    _k("frequent_flyer", "Travel identifier", 1, _code("FF", 9), "frequent-flyer number"),
    _k("travel_date", "Schedule", 1, lambda f, r, c: _date(f, r, {"past": False}), "travel date"),
    _k("appointment_time", "Schedule", 1, _when, "appointment time"),
    _k("card_suffix", "Financial", 2, _card, "card last four"),
    _k("bank_account", "Financial", 3, _iban, "bank account"),
    _k("policy_number", "Financial", 2, _code("POL-", 9), "policy number"),
    _k("annual_income", "Financial-sensitive", 2, _money(300, 2400, False), "annual income"),
    _k("household_income", "Financial-sensitive", 2, _money(150, 900, False), "household income"),
    _k("debt_amount", "Financial-sensitive", 2, _money(40, 900, False), "outstanding debt"),
    _k("risk_rationale", "Financial-sensitive", 2, _phrase(T.RISK), "risk rationale"),
    _k("payment_amount", "Financial", 1, _money(40, 4800, True), "amount", number=True),
    _k("medical_bill", "Medical-financial", 2, _money(90, 3800, True), "bill amount", number=True),
    _k("salary", "Employment-financial", 2, _money(420, 2200, False), "salary"),
    _k("expense_amount", "Employment-financial", 1, _money(25, 2900, True), "expense amount", number=True),
    _k("rent_amount", "Rental", 1, _money(900, 4800, True), "monthly rent", number=True),
    _k("lease_term", "Rental", 1, _plain(("12-month lease from September", "6-month furnished sublet",
                                          "18-month lease with pet addendum")), "lease term"),
    _k("transaction_id", "Transaction", 2, _code("TXN-", 10), "transaction id"),
    _k("transaction_amount", "Transaction", 2, _money(60, 5200, True), "transaction amount", number=True),
    _k("order_id", "Order identifier", 1, _code("ORD-", 8), "order number"),
    _k("tracking_number", "Shipping-sensitive", 1, _code("1Z", 14, 2), "tracking number"),
    _k("delivery_instructions", "Shipping-sensitive", 1, _phrase(T.SHIPPING), "delivery instructions"),
    _k("purchase_item", "Purchase-sensitive", 2, _phrase(T.PURCHASES), "purchased item"),
    _k("dispute_reason", "Purchase-sensitive", 2, _phrase(T.DISPUTES), "dispute reason"),
    _k("diagnosis", "Medical", 3, _phrase(T.DIAGNOSES), "diagnosis"),
    _k("symptom", "Medical", 3, _phrase(T.SYMPTOMS), "symptom"),
    _k("medication", "Medical", 3, _phrase(T.MEDICATIONS), "medication"),
    _k("mental_health", "Mental health", 3, _phrase(T.MENTAL), "mental-health condition"),
    _k("insurance_plan", "Medical-financial", 1, _plain(T.INSURANCE_PLANS), "insurance plan"),
    _k("employee_id", "Employment identifier", 1, _code("E", 6), "employee id"),
    _k("employer", "Employment", 1, _employer, "current job"),
    _k("termination_reason", "Employment", 2, _phrase(T.TERMINATION), "reason for leaving"),
    _k("performance_review", "Employment-sensitive", 2, _phrase(T.PERFORMANCE), "performance record"),
    _k("interview_constraint", "Employment-sensitive", 1, _phrase(T.INTERVIEW), "interview constraint"),
    _k("background_check", "Employment-sensitive", 2, _phrase(T.BACKGROUND), "background-check finding"),
    _k("student_id", "Education identifier", 1, _code("S", 8), "student id"),
    _k("gpa", "Education-sensitive", 2, _gpa, "GPA"),
    _k("emergency_contact", "Family-sensitive", 2, _contact, "emergency contact"),
    _k("family_situation", "Family-sensitive", 2, _phrase(T.FAMILY), "family situation"),
    _k("dependents", "Family-sensitive", 2, _phrase(T.DEPENDENTS), "dependents"),
    _k("business_tax_id", "Business identifier", 1, _ein, "vendor tax id"),
    _k("contract_clause", "Contract-sensitive", 2, _phrase(T.CLAUSES), "contract clause"),
    _k("legal_matter", "Legal-sensitive", 3, _phrase(T.LEGAL), "legal matter"),
    _k("api_key", "Secret", 3, _api_key, "API key"),
    _k("db_host", "Infrastructure secret", 3, _db_host, "database host"),
    _k("repo_url", "Confidential system", 2, _repo, "private repository"),
    _k("vulnerability", "Security-sensitive", 3, _phrase(T.VULNERABILITIES), "vulnerability"),
    _k("device_id", "System", 1, _code("LPT-", 6), "device asset tag"),
    _k("access_log", "Access-sensitive", 2, _ip, "last login IP"),
    _k("imei", "Telecom-sensitive", 2, _imei, "IMEI"),
    _k("workflow_status", "Operational", 0.5, lambda f, r, c: AtomValue(r.choice(c["statuses"])),
       "current status"),
    _k("next_step", "Operational", 0.5, lambda f, r, c: AtomValue(r.choice(c["next_steps"])),
       "next step"),
))
