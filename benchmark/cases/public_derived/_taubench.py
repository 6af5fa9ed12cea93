"""τ-bench retail train and dev tasks → drafts (sierra-research/tau-bench @ 59a200c6, MIT).

Per task: ``instruction`` is the prompt (the simulated user's whole brief, so runs are
deterministic); ``actions`` (``name`` + ``kwargs``) are the gold writes; the customer's record in
``users.json`` gives the atoms, exactly as for τ² retail (:mod:`._tau2`). The retail policy's
implied steps are added (:mod:`._implied`): authentication by e-mail or by name + zip code — the
one the instruction gives —, the user's profile, each order and each new item's product the
writes touch. The τ-bench *test* split is not built: its scenarios are τ² retail's.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from ._common import AtomBag, Draft, SourceCall
from ._implied import retail_lookups, with_implied
from ._tau2 import domain_of, product_index, profile_atoms, scenario_key, tools_from_calls

__all__ = ["TAUBENCH_RETAIL_FILES", "taubench_retail_drafts"]

TAUBENCH_RETAIL_FILES = ("tau-bench/retail/tasks_train.json", "tau-bench/retail/tasks_dev.json",
                         "tau-bench/retail/users.json", "tau-bench/retail/products.json")
_ZIP = re.compile(r"zip code is", re.IGNORECASE)


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def taubench_retail_drafts(source: Path) -> tuple[list[Draft], Counter[str]]:
    """Drafts of the 500 train and 20 dev tasks, and counts of tasks skipped."""
    root = source / "tau-bench" / "retail"
    users = _load(root / "users.json")
    products = product_index(_load(root / "products.json"))
    staged: list[tuple[str, int, dict[str, Any], list[SourceCall], AtomBag, int]] = []
    skipped: Counter[str] = Counter()
    for split in ("train", "dev"):
        for i, task in enumerate(_load(root / f"tasks_{split}.json")):
            uid = task.get("user_id")
            if uid not in users:
                skipped["customer record not found"] += 1
                continue
            user = users[uid]
            calls = [SourceCall(a["name"], dict(a.get("kwargs") or {})) for a in task["actions"]]
            bag = AtomBag()
            profile_atoms(bag, uid, user)
            for oid in user.get("orders", []):
                bag.add("order_id", oid, "order id")
            by_email = not _ZIP.search(task["instruction"])
            calls, added = with_implied(calls, retail_lookups(calls, uid, user, products, by_email))
            staged.append((split, i, task, calls, bag, added))
    tools = tools_from_calls("retail", (s[3] for s in staged))
    drafts = [
        Draft(case_id=f"taubench_retail_{split}_{i}", source="taubench_retail",
              source_id=f"{split}/{i}", domain=domain_of("retail", calls),
              prompt=task["instruction"], tools={c.tool: tools[c.tool] for c in calls},
              calls=calls, atoms=bag.atoms, labels=bag.labels,
              metadata={"source_domain": "retail", "split": split, "implied_calls": added},
              scenario=scenario_key("retail", task["user_id"], calls))
        for split, i, task, calls, bag, added in staged
    ]
    return drafts, skipped
