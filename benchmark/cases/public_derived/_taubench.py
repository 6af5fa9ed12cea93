"""τ-bench retail (train, dev, test) and airline (test) tasks → drafts (sierra-research/tau-bench
@ 59a200c6, MIT).

Per task: ``instruction`` is the prompt (the simulated user's whole brief, so runs are
deterministic); ``actions`` (``name`` + ``kwargs``) are the gold writes; the customer's record in
``users.json`` gives the atoms, exactly as for τ² retail (:mod:`._tau2`). The retail policy's
implied steps are added (:mod:`._implied`): authentication by e-mail or by name + zip code — the
one the instruction gives —, the user's profile, each order and each new item's product the
writes touch; for airline the profile, the reservations and the flight searches. The *test*
splits hold τ²'s retail and airline scenarios: :mod:`._dedupe` counts them once (with τ²) unless
τ² changed the gold writes.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from ._common import AtomBag, Draft, SourceCall
from ._implied import airline_lookups, retail_lookups, with_implied
from ._tau2 import (
    airline_atoms,
    domain_of,
    product_index,
    profile_atoms,
    scenario_key,
    tools_from_calls,
)

__all__ = ["TAUBENCH_AIRLINE_FILES", "TAUBENCH_RETAIL_FILES", "taubench_drafts"]

TAUBENCH_RETAIL_FILES = ("tau-bench/retail/tasks_train.json", "tau-bench/retail/tasks_dev.json",
                         "tau-bench/retail/tasks_test.json", "tau-bench/retail/users.json",
                         "tau-bench/retail/products.json")
TAUBENCH_AIRLINE_FILES = ("tau-bench/airline/tasks_test.json", "tau-bench/airline/users.json",
                          "tau-bench/airline/reservations.json", "tau-bench/airline/flights.json")
_SPLITS = {"retail": ("train", "dev", "test"), "airline": ("test",)}
_ZIP = re.compile(r"zip code is", re.IGNORECASE)


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def taubench_drafts(source: Path, domain: str) -> tuple[list[Draft], Counter[str]]:
    """Drafts of the ``domain`` (retail / airline) task splits, and counts of tasks skipped."""
    root = source / "tau-bench" / domain
    users = _load(root / "users.json")
    if domain == "retail":
        products = product_index(_load(root / "products.json"))
    else:
        reservations = _load(root / "reservations.json")
        flights = _load(root / "flights.json")
    staged: list[tuple[str, int, dict[str, Any], list[SourceCall], AtomBag, int]] = []
    skipped: Counter[str] = Counter()
    for split in _SPLITS[domain]:
        for i, task in enumerate(_load(root / f"tasks_{split}.json")):
            uid = task.get("user_id")
            if uid not in users:
                skipped["customer record not found"] += 1
                continue
            user = users[uid]
            calls = [SourceCall(a["name"], dict(a.get("kwargs") or {})) for a in task["actions"]]
            bag = AtomBag()
            if domain == "retail":
                profile_atoms(bag, uid, user)
                for oid in user.get("orders", []):
                    bag.add("order_id", oid, "order id")
                by_email = not _ZIP.search(task["instruction"])
                implied = retail_lookups(calls, uid, user, products, by_email)
            else:
                airline_atoms(bag, uid, user, calls, reservations)
                implied = airline_lookups(calls, uid, flights, reservations)
            calls, added = with_implied(calls, implied)
            staged.append((split, i, task, calls, bag, added))
    tools = tools_from_calls(domain, (s[3] for s in staged))
    drafts = [
        Draft(case_id=f"taubench_{domain}_{split}_{i}", source=f"taubench_{domain}",
              source_id=f"{split}/{i}", domain=domain_of(domain, calls),
              prompt=task["instruction"], tools={c.tool: tools[c.tool] for c in calls},
              calls=calls, atoms=bag.atoms, labels=bag.labels,
              metadata={"source_domain": domain, "split": split, "implied_calls": added},
              scenario=scenario_key(domain, task["user_id"], calls))
        for split, i, task, calls, bag, added in staged
    ]
    return drafts, skipped
