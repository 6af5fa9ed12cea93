"""Implied steps made explicit: the look-ups and identity checks a source's policy requires but its
gold action list leaves out (seed ``000_*`` §6.1: workflows keep the source's call structure; the
paper's cases carry the verification and look-up stages, Table 3's ``verify_identity``).

τ-bench / τ² retail policy: "authenticate the user identity by locating their user id via email,
or via name + zip code … even when the user already provides the user id", then read the user
and the orders (and, for item changes, the products) the writes touch. τ² airline: read the
user's profile and the reservations touched. The implied calls carry the gold arguments from the
customer's record; a call the source already lists is not added twice.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ._common import SourceCall

__all__ = ["AUTH_TOOLS", "READ_PREFIXES", "airline_lookups", "is_read", "retail_lookups",
           "with_implied"]

READ_PREFIXES = ("find_", "get_", "search_", "list_", "calculate", "verify_", "check_", "can_",
                 "run_speed_test")
#: Tools that authenticate the customer; any one of them satisfies the authentication step.
AUTH_TOOLS = frozenset({"find_user_id_by_email", "find_user_id_by_name_zip",
                        "get_customer_by_phone", "get_customer_by_id", "verify_identity"})


def is_read(tool: str) -> bool:
    return tool.startswith(READ_PREFIXES)


def _key(call: SourceCall) -> tuple[str, str]:
    return call.tool, json.dumps(call.arguments, sort_keys=True, default=str)


def with_implied(calls: list[SourceCall], implied: Iterable[SourceCall]
                 ) -> tuple[list[SourceCall], int]:
    """``calls`` with the implied look-ups it lacks inserted before its first write; returns the
    new list and how many calls were added."""
    have = {_key(c) for c in calls}
    authenticated = any(c.tool in AUTH_TOOLS for c in calls)
    missing = []
    for c in implied:
        if _key(c) in have or (c.tool in AUTH_TOOLS and authenticated):
            continue
        have.add(_key(c))
        missing.append(c)
    first_write = next((i for i, c in enumerate(calls) if not is_read(c.tool)), len(calls))
    return calls[:first_write] + missing + calls[first_write:], len(missing)


def _referenced(calls: Iterable[SourceCall], key: str) -> list[str]:
    return list(dict.fromkeys(str(c.arguments[key]) for c in calls if c.arguments.get(key)))


def retail_lookups(calls: list[SourceCall], uid: str, user: Mapping[str, Any],
                   product_of_item: Mapping[str, str], by_email: bool) -> list[SourceCall]:
    """Authentication (e-mail, or name + zip), the user's profile, each order the writes touch,
    and the product of each new item of an exchange or item change."""
    name = user.get("name") or {}
    if by_email and user.get("email"):
        auth = SourceCall("find_user_id_by_email", {"email": user["email"]})
    else:
        auth = SourceCall("find_user_id_by_name_zip", {
            "first_name": name.get("first_name", ""), "last_name": name.get("last_name", ""),
            "zip": (user.get("address") or {}).get("zip", "")})
    out = [auth, SourceCall("get_user_details", {"user_id": uid})]
    writes = [c for c in calls if not is_read(c.tool)]
    out += [SourceCall("get_order_details", {"order_id": o}) for o in _referenced(writes, "order_id")]
    products = [product_of_item[i] for c in writes for i in c.arguments.get("new_item_ids") or []
                if i in product_of_item]
    out += [SourceCall("get_product_details", {"product_id": p}) for p in dict.fromkeys(products)]
    return out


def _searches(legs: list[dict[str, Any]], flights: Mapping[str, Any]) -> list[SourceCall]:
    """The flight search that finds each leg: direct, or one-stop when two flights of one date
    connect (τ² airline ``search_direct_flight`` / ``search_onestop_flight``)."""
    out: list[SourceCall] = []
    i = 0
    while i < len(legs):
        a = flights.get(str(legs[i].get("flight_number"))) or {}
        b = flights.get(str(legs[i + 1].get("flight_number"))) or {} if i + 1 < len(legs) else {}
        date = legs[i].get("date")
        if not a:
            i += 1
            continue
        if b and legs[i + 1].get("date") == date and a.get("destination") == b.get("origin"):
            out.append(SourceCall("search_onestop_flight", {
                "origin": a["origin"], "destination": b["destination"], "date": date}))
            i += 2
        else:
            out.append(SourceCall("search_direct_flight", {
                "origin": a["origin"], "destination": a["destination"], "date": date}))
            i += 1
    return out


def airline_lookups(calls: list[SourceCall], uid: str, flights: Mapping[str, Any] | None = None,
                    reservations: Mapping[str, Any] | None = None) -> list[SourceCall]:
    """The traveler's profile, each reservation the writes touch, and the search that finds each
    new flight of a booking or flight change (τ² airline policy)."""
    writes = [c for c in calls if not is_read(c.tool)]
    out = [SourceCall("get_user_details", {"user_id": uid})] + [
        SourceCall("get_reservation_details", {"reservation_id": r})
        for r in _referenced(writes, "reservation_id")]
    for c in writes if flights else ():
        if c.tool not in ("book_reservation", "update_reservation_flights"):
            continue
        legs = [f for f in c.arguments.get("flights") or [] if isinstance(f, dict)]
        old = ((reservations or {}).get(str(c.arguments.get("reservation_id"))) or {}).get("flights")
        if old and [f.get("flight_number") for f in old] == [f.get("flight_number") for f in legs]:
            continue  # a cabin change keeps the flights: nothing to search
        out += _searches(legs, flights or {})
    return out
