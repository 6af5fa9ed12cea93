"""Hand-written mapping of the τ²-bench retail and airline tools to purposes, sinks and
backend primitives, and of each task's first state-changing action to a business domain."""

from __future__ import annotations

__all__ = ["DOMAIN_OF_ACTION", "FREE_TEXT", "TOOLS"]

_R, _P, _C, _H = ("record", "records"), ("payment", "payments"), ("console", "console"), (
    "handoff", "handoffs")

#: (domain, tool) → (purpose, (sink, primitive), operation).
TOOLS: dict[tuple[str, str], tuple[str, tuple[str, str], str]] = {
    ("retail", "find_user_id_by_name_zip"): ("identify the customer from name and zip code", _R, "lookup"),
    ("retail", "find_user_id_by_email"): ("identify the customer from their email address", _R, "lookup"),
    ("retail", "get_user_details"): ("read the customer's profile", _R, "lookup"),
    ("retail", "get_order_details"): ("read an order's status, items and payments", _R, "lookup"),
    ("retail", "get_product_details"): ("read a product's variants, prices and stock", _R, "lookup"),
    ("retail", "get_item_details"): ("read one catalog item", _R, "lookup"),
    ("retail", "return_delivered_order_items"): (
        "return delivered items and refund them to a payment method", _P, "create"),
    ("retail", "exchange_delivered_order_items"): (
        "exchange delivered items and settle the price difference", _P, "create"),
    ("retail", "modify_pending_order_items"): (
        "change the items of a pending order and settle the difference", _P, "create"),
    ("retail", "modify_pending_order_payment"): (
        "change the payment method of a pending order", _P, "create"),
    ("retail", "cancel_pending_order"): ("cancel a pending order", _R, "create"),
    ("retail", "modify_pending_order_address"): (
        "change the shipping address of a pending order", _R, "create"),
    ("retail", "modify_user_address"): ("update the customer's default address", _R, "create"),
    ("airline", "get_user_details"): ("read the traveler's profile", _R, "lookup"),
    ("airline", "get_reservation_details"): ("read a reservation", _R, "lookup"),
    ("airline", "search_direct_flight"): (
        "search direct flights between two airports on a date", _R, "lookup"),
    ("airline", "search_onestop_flight"): (
        "search one-stop flights between two airports on a date", _R, "lookup"),
    ("airline", "book_reservation"): ("book and pay for a reservation", _P, "create"),
    ("airline", "update_reservation_flights"): (
        "change a reservation's flights or cabin and settle the fare difference", _P, "create"),
    ("airline", "update_reservation_baggages"): (
        "change a reservation's baggage and pay for extra bags", _P, "create"),
    ("airline", "update_reservation_passengers"): (
        "change the passengers of a reservation", _R, "create"),
    ("airline", "cancel_reservation"): ("cancel a reservation and refund it", _P, "create"),
    ("airline", "send_certificate"): ("send a travel certificate as compensation", _P, "create"),
    ("retail", "calculate"): ("evaluate an arithmetic expression", _C, "lookup"),
    ("airline", "calculate"): ("evaluate an arithmetic expression", _C, "lookup"),
    ("retail", "transfer_to_human_agents"): (
        "transfer the customer to a human agent with a summary", _H, "create"),
    ("airline", "transfer_to_human_agents"): (
        "transfer the traveler to a human agent with a summary", _H, "create"),
}

#: Free-text arguments of τ² tools.
FREE_TEXT: dict[str, tuple[str, ...]] = {"transfer_to_human_agents": ("summary",)}

#: The first state-changing gold action names the business process (the case's domain).
DOMAIN_OF_ACTION: dict[str, str] = {
    "return_delivered_order_items": "retail returns",
    "exchange_delivered_order_items": "retail exchanges",
    "modify_pending_order_items": "retail order changes",
    "modify_pending_order_payment": "retail order changes",
    "modify_pending_order_address": "retail order changes",
    "cancel_pending_order": "retail cancellations",
    "modify_user_address": "retail account updates",
    "book_reservation": "airline booking",
    "update_reservation_flights": "airline changes",
    "update_reservation_baggages": "airline changes",
    "update_reservation_passengers": "airline changes",
    "cancel_reservation": "airline cancellations",
    "send_certificate": "airline compensation",
}
