"""Hand-written mapping of the BFCL multi-turn API classes to domains, purposes, sinks and
backend primitives, and of their sensitive state keys and arguments to atom types."""

from __future__ import annotations

__all__ = [
    "ARG_TYPES",
    "CLASSES",
    "CONFIG_KEYED",
    "CONFIG_SKIP",
    "CONFIG_TYPES",
    "FUNCTIONS",
    "NOT_NAMES",
    "READS",
    "READ_PREFIXES",
]

#: API class → (func-doc file, domain, purpose of the class, default sink, backend primitive).
CLASSES: dict[str, tuple[str, str, str, str, str]] = {
    "GorillaFileSystem": ("gorilla_file_system.json", "file system",
                          "manage files and folders in the user's workspace",
                          "document", "documents"),
    "MathAPI": ("math_api.json", "calculation", "compute numeric results for the task",
                "console", "console"),
    "MessageAPI": ("message_api.json", "messaging",
                   "exchange direct messages with workspace contacts",
                   "notification", "notifications"),
    "TwitterAPI": ("posting_api.json", "social media",
                   "publish and read posts on the user's social account", "comment", "comments"),
    "TicketAPI": ("ticket_api.json", "IT support ticketing",
                  "file and follow support tickets", "ticket", "tickets"),
    "TradingBot": ("trading_bot.json", "trading",
                   "trade stocks and manage the brokerage account", "record", "records"),
    "TravelAPI": ("travel_booking.json", "travel booking",
                  "book flights and manage travel cards, insurance and budget",
                  "record", "records"),
    "VehicleControlAPI": ("vehicle_control.json", "vehicle control",
                          "operate and monitor the user's car", "external", "records"),
}

#: Function-level overrides: name → (sink, primitive, operation, purpose or "" for the class's).
FUNCTIONS: dict[str, tuple[str, str, str, str]] = {
    "authenticate_twitter": ("record", "records", "lookup", "sign the user in to the social account"),
    "ticket_login": ("record", "records", "lookup", "sign the user in to the ticket system"),
    "message_login": ("record", "records", "lookup", "sign the user in to the messaging workspace"),
    "trading_login": ("record", "records", "lookup", "sign the user in to the brokerage"),
    "authenticate_travel": ("record", "records", "lookup",
                            "authenticate the user with the travel booking service"),
    "verify_traveler_information": ("record", "records", "lookup",
                                    "verify the traveler's identity before travel"),
    "place_order": ("payment", "payments", "create", "place a stock order for the user"),
    "cancel_order": ("payment", "payments", "create", "cancel a pending stock order"),
    "fund_account": ("payment", "payments", "create", "move money into the brokerage account"),
    "withdraw_funds": ("payment", "payments", "create", "withdraw money from the brokerage account"),
    "book_flight": ("payment", "payments", "create", "book and pay for a flight"),
    "cancel_booking": ("payment", "payments", "create", "cancel a flight booking and refund it"),
    "purchase_insurance": ("payment", "payments", "create", "buy travel insurance for a booking"),
    "register_credit_card": ("payment", "payments", "create",
                             "register a payment card for travel purchases"),
    "set_budget_limit": ("record", "records", "create", "set the user's travel budget limit"),
    "get_credit_card_balance": ("payment", "payments", "lookup", "read a payment card's balance"),
    "contact_customer_support": ("handoff", "handoffs", "create",
                                 "hand a booking issue to the airline's support team"),
    "retrieve_invoice": ("document", "documents", "lookup", "retrieve the invoice of a booking"),
    "send_message": ("notification", "notifications", "create", "send a direct message to a contact"),
    "add_contact": ("record", "records", "create", "add a contact to the workspace directory"),
    "delete_message": ("record", "records", "create", "delete the latest message to a contact"),
    "get_user_id": ("record", "records", "lookup", "look up a contact's user id"),
    "comment": ("comment", "comments", "create", "comment on a post"),
    "post_tweet": ("comment", "comments", "create", "publish a post on the social account"),
    "set_navigation": ("external", "records", "create", "set the car's navigation destination"),
}

#: Functions that read or compute without changing business state (binding operation lookup).
READS = frozenset({
    "cat", "cd", "diff", "du", "find", "grep", "ls", "pwd", "sort", "tail", "wc",
    "gallon_to_liter", "liter_to_gallon", "search_messages", "notify_price_change",
})
READ_PREFIXES = ("get_", "list_", "search_", "view_", "display", "check_", "estimate_",
                 "find_", "filter_", "compute_", "posting_get", "message_get", "ticket_get",
                 "travel_get", "trading_get")

#: State keys of ``initial_config`` whose values are private atoms of the task.
CONFIG_TYPES: dict[str, str] = {
    "username": "username", "password": "password", "current_user": "user_id",
    "access_token": "access_token", "user_first_name": "first_name",
    "user_last_name": "last_name", "budget_limit": "budget", "card_number": "card_number",
    "cardholder_name": "person_name", "card_holder_name": "person_name",
    "expiry_date": "card_expiry", "expiration_date": "card_expiry", "expiry": "card_expiry",
    "cvv": "cvv", "card_verification_number": "cvv", "balance": "account_balance",
    "account_id": "account_id", "binding_card": "card_number",
    "passport_number": "passport_number", "user_id": "user_id", "created_by": "person_name",
    "passenger_name": "person_name", "following_list": "username",
}
#: Sub-trees of the state that hold content or market data, not facts about the user.
CONFIG_SKIP = frozenset({
    "root", "tweets", "comments", "retweets", "stocks", "inbox", "transaction_history",
    "watch_list", "message_count",
})
#: State dictionaries keyed by the user's own identifiers (their keys are atoms too).
CONFIG_KEYED: dict[str, str] = {"orders": "order_id", "booking_record": "booking_id"}

#: Gold-call arguments whose values are private atoms (``function.arg`` beats ``arg``).
ARG_TYPES: dict[str, str] = {
    "client_id": "client_id", "client_secret": "client_secret", "refresh_token": "refresh_token",
    "user_first_name": "first_name", "first_name": "first_name",
    "user_last_name": "last_name", "last_name": "last_name", "date_of_birth": "date_of_birth",
    "passport_number": "passport_number", "card_number": "card_number",
    "card_verification_number": "cvv", "cardholder_name": "person_name",
    "expiration_date": "card_expiry", "access_token": "access_token", "card_id": "card_id",
    "username": "username", "password": "password", "user_id": "user_id",
    "receiver_id": "user_id", "add_contact.user_name": "person_name",
    "get_user_id.user": "person_name", "budget_limit": "budget",
    "set_navigation.destination": "street_address", "booking_id": "booking_id",
    "insurance_id": "insurance_id", "order_id": "order_id",
    "mentioned_usernames": "username", "post_tweet.mentions": "username",
}

#: Directory keys that are roles, not people's names.
NOT_NAMES = frozenset({"colleague", "manager", "team", "admin", "support", "boss"})
