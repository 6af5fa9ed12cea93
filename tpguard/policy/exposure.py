"""Recipients, the authorization relation ``Auth(r, e)`` and visible exits (ASLEval, seed ``002_*`` §3).

Access authorization is not disclosure authorization (§3.1): the agent may read a record that the
person it answers may not receive. The exposure stage therefore asks, at every *visible exit* —
a channel whose content reaches a recipient — whether each atom in it may reach *that* recipient:

* a :class:`Recipient` is a declared party (``requester`` — whoever reads the agent's answers and
  console — or ``external``, e.g. an e-mail address outside the organisation);
* a :class:`Disclosure` is one entry of ``Auth``: an explicit ``(atom, recipient)`` pair, or a
  type rule ``atom_type`` (``"*"`` for every type) → a recipient id or a ``recipient_kind``;
* channels are visible exits unless declared *internal* (:data:`INTERNAL_CHANNELS`: tool arguments
  and raw returns are evidence, §3.2 — the request and result stages guard them). A channel listed
  in ``exits`` is visible even if it is internal by default (a UI that shows raw returns); an
  undeclared channel counts as a visible exit (fail closed). ``exits`` (default
  :data:`VISIBLE_EXITS`) is the declared visible boundary ``C_vis``.

``Auth`` resolves most specific first — (atom, recipient) → (atom, kind) → (type, recipient) →
(type, kind) → (``*``, recipient) → (``*``, kind) — and **defaults to forbidden** for a registered atom. Unregistered
PII (found by the PII detector, known by its type only) is forbidden only by a type rule, as at the
request stage. The requester's own atoms are authorized by a pair per atom
(:meth:`Disclosure.allow`) or, when every atom of the task is theirs, by one rule
``{atom_type: "*", recipient: requester, allow: true}``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from email.utils import getaddresses
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "INTERNAL_CHANNELS",
    "RECIPIENT_ARGS",
    "VISIBLE_EXITS",
    "Disclosure",
    "ExitBinding",
    "Exposure",
    "Recipient",
    "RecipientKind",
]

RecipientKind = Literal["requester", "external"]
#: the visible exits of the paper's environments (§4): response, console, e-mail actions, file share
VISIBLE_EXITS: tuple[str, ...] = ("final_response", "console", "email", "send", "reply", "forward",
                                  "file_share")
#: evaluator-only evidence (§3.2): never blocked at the exit stage, only recorded
INTERNAL_CHANNELS: tuple[str, ...] = ("tool_arguments", "raw_return")
#: the recipient an undeclared address stands for (its address is never shown)
UNDECLARED = "undeclared"
#: the implicit requester when a policy declares none (so ``recipient: requester`` always works)
REQUESTER = "requester"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Recipient(_Model):
    """A declared recipient: ``id``, ``kind`` and the ``addresses`` that stand for it (e-mail
    addresses, handles), so a tool's ``to`` argument maps to it."""

    id: str = Field(min_length=1)
    kind: RecipientKind = "external"
    addresses: tuple[str, ...] = ()


class Disclosure(_Model):
    """One entry of ``Auth``: exactly one of ``atom``/``atom_type`` and one of
    ``recipient``/``recipient_kind``; ``allow`` says whether it may be received."""

    atom: str | None = None
    atom_type: str | None = None
    recipient: str | None = None
    recipient_kind: RecipientKind | None = None
    allow: bool

    @model_validator(mode="after")
    def _one_each(self) -> Disclosure:
        if (self.atom is None) == (self.atom_type is None):
            raise ValueError("a disclosure names exactly one of 'atom' or 'atom_type'")
        if (self.recipient is None) == (self.recipient_kind is None):
            raise ValueError("a disclosure names exactly one of 'recipient' or 'recipient_kind'")
        return self

    @classmethod
    def allow_atoms(cls, recipient: str, atoms: Iterable[Any]) -> tuple[Disclosure, ...]:
        """``(atom, recipient)`` pairs that let ``recipient`` receive each of ``atoms`` (ids or
        :class:`~tpguard.PrivateAtom`)."""
        return tuple(cls(atom=getattr(a, "id", a), recipient=recipient, allow=True) for a in atoms)


class ExitBinding(_Model):
    """A tool whose calls are an exit (``ToolSpec.exit``): its ``channel`` and who receives it —
    every argument in ``recipient_args`` (default :data:`RECIPIENT_ARGS`: ``to``, ``cc``, ``bcc``,
    ``reply_to``, attendees, share lists, …; names matched like fields, so ``replyTo`` and
    ``Reply-To`` are ``reply_to``), the one-argument form ``recipient_arg`` (added to them), and a
    fixed ``recipient``. Each argument may hold an address, a declared id, a list of them, an
    ``"Name <address>"`` string or records with an address. Every recipient they name must be
    authorized for every atom in the *whole* call, the recipient arguments included (the other
    recipients read the ``to`` and ``cc`` lines); none at all is the undeclared external recipient."""

    channel: str = "email"
    recipient_arg: str | None = None
    recipient_args: tuple[str, ...] | None = None
    recipient: str | None = None

    @model_validator(mode="after")
    def _where(self) -> ExitBinding:
        if self.recipient_args == () and self.recipient_arg is None and self.recipient is None:
            raise ValueError("an exit binding with 'recipient_args: []' names 'recipient_arg' or "
                             "'recipient'")
        return self

    def recipient_keys(self) -> frozenset[str]:
        """The folded names of every argument that names a recipient."""
        names = RECIPIENT_ARGS if self.recipient_args is None else self.recipient_args
        extra = () if self.recipient_arg is None else (self.recipient_arg,)
        return frozenset(map(_fold_key, (*names, *extra)))

    def names_recipients(self, argument: Any) -> bool:
        """Whether the argument ``argument`` is one of the recipient arguments."""
        return _fold_key(str(argument)) in self.recipient_keys()

    def named(self, arguments: Mapping[str, Any]) -> list[Any]:
        """What the call's recipient arguments (and the fixed ``recipient``) name, as written."""
        keys = self.recipient_keys()
        out: list[Any] = [] if self.recipient is None else [self.recipient]
        out += [v for k, v in arguments.items() if _fold_key(str(k)) in keys and v not in (None, "", [], ())]
        return out


#: the recipient-bearing arguments of e-mail-, calendar- and share-shaped tools (an exit binding's
#: default ``recipient_args``)
RECIPIENT_ARGS: tuple[str, ...] = (
    "to", "cc", "bcc", "reply_to", "recipient", "recipients", "attendees", "guests", "invitees",
    "participants", "share_with", "shared_with", "collaborators", "forward_to", "send_to",
)
#: keys of a recipient record (``{"name": …, "email": …}``) that hold its address
_ADDRESS_KEYS = frozenset({"email", "mail", "address", "emailaddress", "id", "user", "handle",
                           "login", "upn"})  # folded (see _key)


_Key = tuple[str, str]


class Exposure:
    """``Auth`` and the channel split of one policy or session, indexed for O(1) lookups.

    Built from the policy's ``recipients``/``disclosures``/``internal_channels`` and a session's
    own (a session's entries come first: they are more specific to the task).
    """

    __slots__ = ("_addresses", "_by_atom", "_by_type", "_internal", "exits", "recipients")

    def __init__(self, recipients: Iterable[Recipient] = (), disclosures: Iterable[Disclosure] = (),
                 exits: Iterable[str] | None = None, internal: Iterable[str] | None = None) -> None:
        self.recipients: dict[str, Recipient] = {}
        self._addresses: dict[str, str] = {}
        for r in recipients:
            self.recipients.setdefault(r.id, r)
            for a in (r.id, *r.addresses):
                self._addresses.setdefault(_fold(a), r.id)
        if not any(r.kind == "requester" for r in self.recipients.values()) and REQUESTER not in self.recipients:
            self.recipients[REQUESTER] = Recipient(id=REQUESTER, kind="requester")
            self._addresses.setdefault(REQUESTER, REQUESTER)
        self._by_atom: dict[_Key, bool] = {}
        self._by_type: dict[_Key, bool] = {}
        for d in disclosures:  # the first entry written wins
            who = d.recipient if d.recipient is not None else f"kind:{d.recipient_kind}"
            if d.atom is not None:
                self._by_atom.setdefault((d.atom, who), d.allow)
            else:
                self._by_type.setdefault((str(d.atom_type), who), d.allow)
        self.exits: tuple[str, ...] = VISIBLE_EXITS if exits is None else tuple(exits)
        self._internal = frozenset(INTERNAL_CHANNELS if internal is None else internal) - set(self.exits)

    def is_exit(self, channel: str) -> bool:
        """A visible exit: declared in ``exits``, or simply not declared internal."""
        return channel not in self._internal

    def requester(self) -> str:
        """The id of the first declared recipient of kind ``requester`` (else ``"requester"``)."""
        return next((r.id for r in self.recipients.values() if r.kind == "requester"), REQUESTER)

    def resolve(self, recipient: str) -> Recipient:
        """A declared recipient by id or address; anything else is an undeclared external one."""
        rid = self._addresses.get(_fold(recipient))
        if rid is not None:
            return self.recipients[rid]
        return Recipient(id=UNDECLARED, kind="external")

    def named(self, names: Any) -> tuple[Recipient, ...]:
        """Every recipient ``names`` stands for: an id or address, an ``"Ann <ann@x>, b@y"``
        string, a list of those or records holding an address (``{"email": …}``). Whatever names
        nobody readable — an empty set, a number, a record without an address — is the undeclared
        external recipient (fail closed)."""
        found: dict[str, Recipient] = {}
        for r in self._walk_names(names, 0):
            found.setdefault(r.id, r)
        return tuple(found.values()) or (_NOBODY,)

    def _walk_names(self, value: Any, depth: int) -> Iterator[Recipient]:
        if isinstance(value, str):
            yield from self._in_text(value)
        elif isinstance(value, Mapping) and depth < _DEPTH:
            hits = [v for k, v in value.items() if _fold_key(str(k)) in _ADDRESS_KEYS or isinstance(v, Mapping)]
            for v in hits:
                yield from self._walk_names(v, depth + 1)
            if not hits:
                yield _NOBODY
        elif isinstance(value, list | tuple | set | frozenset) and depth < _DEPTH:
            for v in value:
                yield from self._walk_names(v, depth + 1)
            if not value:
                yield _NOBODY
        else:
            yield _NOBODY

    def _in_text(self, text: str) -> Iterator[Recipient]:
        """A declared id or address as a whole, else each ``,``/``;``/line-separated piece: as a
        whole, or every address in it — what ``getaddresses`` reads *and* anything address-shaped
        elsewhere in the piece (a display name ``"evil@x" <ann@…>`` names both)."""
        rid = self._addresses.get(_fold(text))
        if rid is not None:
            yield self.recipients[rid]
            return
        for piece in _PIECES.split(text):
            if not piece.strip():
                continue
            rid = self._addresses.get(_fold(piece))
            if rid is not None:
                yield self.recipients[rid]
                continue
            found = ({addr for _, addr in getaddresses([piece]) if addr} | set(_ADDRESS.findall(piece))
                     if "@" in piece else {addr for _, addr in getaddresses([piece]) if addr})
            if not found:
                yield _NOBODY
            for addr in sorted(found):
                yield self.resolve(addr)

    def auth(self, atom_id: str, atom_type: str, recipient: Recipient, *, registered: bool = True) -> bool:
        """``Auth(r, e)``, most specific first (module docstring); O(1)."""
        who, kind = recipient.id, f"kind:{recipient.kind}"
        known = recipient.id != UNDECLARED
        for table, key in ((self._by_atom, (atom_id, who)), (self._by_atom, (atom_id, kind)),
                           (self._by_type, (atom_type, who)), (self._by_type, (atom_type, kind)),
                           (self._by_type, ("*", who)), (self._by_type, ("*", kind))):
            if key[1] == who and not known:
                continue  # an undeclared address never matches a rule written for an id
            hit = table.get(key)
            if hit is not None:
                return hit
        return not registered

    @classmethod
    def layered(cls, layers: Iterable[Mapping[str, Any]]) -> Exposure:
        """Innermost layer first: recipients and disclosures concatenated (first wins), the
        innermost declared ``exits`` and ``internal_channels`` used."""
        recipients: list[Recipient] = []
        disclosures: list[Disclosure] = []
        exits: tuple[str, ...] | None = None
        internal: tuple[str, ...] | None = None
        for layer in layers:
            recipients += layer.get("recipients") or ()
            disclosures += layer.get("disclosures") or ()
            if exits is None and layer.get("exits") is not None:
                exits = tuple(layer["exits"])
            if internal is None and layer.get("internal_channels") is not None:
                internal = tuple(layer["internal_channels"])
        return cls(recipients, disclosures, exits, internal)


_NOBODY = Recipient(id=UNDECLARED, kind="external")
_PIECES = re.compile(r"[,;\n]+")
# anchored at a token start: unanchored, a long run without "@" was retried from every position
_ADDRESS = re.compile(r"(?<![^\s<>,;:()\"'\[\]])[^\s<>,;:()\"'\[\]]+@[^\s<>,;:()\"'\[\]]+")
_DEPTH = 4  # how deep a recipient argument is read (a list of records of lists of addresses)


def _fold_key(name: str) -> str:
    """An argument name folded the way fields are matched: ``Reply-To`` = ``replyTo`` = ``reply_to``."""
    return "".join(c for c in name.casefold() if c.isalnum())


def _fold(text: str) -> str:
    return " ".join(str(text).casefold().split())
