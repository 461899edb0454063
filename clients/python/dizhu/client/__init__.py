"""dizhu.client: the Python SDK of the dizhu referee (gRPC contract ``dizhu.v1``).

* :class:`TableClient` -- a typed async client for one caller of one table (retries with
  request ids, ``expected_version`` tracking, errors as :class:`DizhuError`);
* :class:`Bot`, :class:`BotRunner`, :func:`run_bot` -- write a bot as two decisions, let the
  runner play it (following the table's ``WatchTable`` stream, :class:`StreamingViews`, or
  polling, :class:`PollingViews`); :class:`RandomBot` and :class:`HeuristicBot` come bundled;
* :mod:`dizhu.client.cards` -- the card notation (``"3 3 4 T J Q K A 2 BJ RJ"``);
* :mod:`dizhu.client.errors` -- the exception hierarchy;
* ``python -m dizhu.client`` (:mod:`dizhu.client.command`) -- play a bundled or your own bot
  for one seat of a table from the command line.

The generated messages live in :mod:`dizhu.v1` (``cards_pb2``, ``table_pb2``, ...).
To test a bot against a real referee, see ``dizhu.testing.local_referee`` (server package).
"""

from dizhu.client.bot import Bot, BotRunner, Decision, PollingViews, StreamingViews, ViewSource, run_bot, to_beat
from dizhu.client.bots import HeuristicBot, RandomBot
from dizhu.client.cards import NotationError, format_cards, parse_cards, pick
from dizhu.client.client import (
    CHANNEL_OPTIONS,
    RetryPolicy,
    TableClient,
    new_request_id,
    open_channel,
    tls_credentials,
)
from dizhu.client.errors import (
    BidTooLow,
    CardsNotInHand,
    DeadlineExceeded,
    DizhuError,
    DoesNotBeat,
    IllegalCombination,
    Internal,
    InvalidArgument,
    MoveRefused,
    MustLead,
    NotYourTurn,
    OutOfTurn,
    PermissionDenied,
    QuotaExceeded,
    RateLimited,
    RequestIdReused,
    RetryableError,
    SeatTaken,
    SequenceOutOfRange,
    StaleState,
    StoreFull,
    TableClosed,
    TableFull,
    TableNotFound,
    Unauthenticated,
    Unavailable,
    WrongPhase,
    from_rpc_error,
)

__all__ = [
    "CHANNEL_OPTIONS",
    "BidTooLow",
    "Bot",
    "BotRunner",
    "CardsNotInHand",
    "DeadlineExceeded",
    "Decision",
    "DizhuError",
    "DoesNotBeat",
    "HeuristicBot",
    "IllegalCombination",
    "Internal",
    "InvalidArgument",
    "MoveRefused",
    "MustLead",
    "NotYourTurn",
    "NotationError",
    "OutOfTurn",
    "PermissionDenied",
    "PollingViews",
    "QuotaExceeded",
    "RandomBot",
    "RateLimited",
    "RequestIdReused",
    "RetryPolicy",
    "RetryableError",
    "SeatTaken",
    "SequenceOutOfRange",
    "StaleState",
    "StoreFull",
    "StreamingViews",
    "TableClient",
    "TableClosed",
    "TableFull",
    "TableNotFound",
    "Unauthenticated",
    "Unavailable",
    "ViewSource",
    "WrongPhase",
    "format_cards",
    "from_rpc_error",
    "new_request_id",
    "open_channel",
    "parse_cards",
    "pick",
    "run_bot",
    "tls_credentials",
    "to_beat",
]
