"""``dizhu.v1.TableService``: thin handlers that convert, delegate to the referee, convert back."""

from __future__ import annotations

import collections
from collections.abc import AsyncIterator, Collection

from dizhu.referee import commands
from dizhu.referee import events as ev
from dizhu.referee.auth import Principal, Role
from dizhu.referee.commands import Context, Created, Mint, Outcome
from dizhu.referee.errors import InvalidArgument, WrongPhase
from dizhu.referee.flow import table_standings
from dizhu.referee.limits import check_seeds, check_settings
from dizhu.referee.table import TableState
from dizhu.rules import MAX_BID, VARIANTS
from dizhu.service import convert
from dizhu.service.admission import Admission, AdmissionLimits
from dizhu.service.answers import Answers
from dizhu.service.errors import ServicerContext, guarded, guarded_stream
from dizhu.service.feeds import TableFeeds
from dizhu.service.metadata import Credentials, api_principal, credentials
from dizhu.service.presence import mark_presence
from dizhu.service.signatures import keys_response, replay_signature
from dizhu.service.table_reads import TableReads
from dizhu.service.unit_of_work import UnitOfWork
from dizhu.service.watch import watch
from dizhu.store import TableStore
from dizhu.v1 import table_pb2, table_service_pb2_grpc
from dizhu.v1 import table_service_pb2 as pb

__all__ = ["TableServicer"]

#: The most cards a Play may list before the table (and so its variant) is known.
_MAX_PLAY_CARDS = max(variant.landlord_hand_size for variant in VARIANTS.values())

#: How each response is recorded for retries: the ones that hand out tokens keep recipes instead.
_CREATED = Answers(
    pb.CreateTableResponse,
    lambda response: [(response, "creator_token"), *((seat, "token") for seat in response.seat_tokens)],
)
_JOINED = Answers(pb.JoinTableResponse, lambda response: [(response, "seat_token")])
_LEFT = Answers(pb.LeaveTableResponse)
_CLOSED = Answers(pb.CloseTableResponse)
_BID = Answers(pb.BidResponse)
_PLAYED = Answers(pb.PlayResponse)
_SETTLED = Answers(pb.SettleResponse)


def _require_version(expected_version: int) -> None:
    if not expected_version:
        raise InvalidArgument("expected_version", "Bid and Play need the table version the decision was made on")


def _require_amount(amount: int) -> None:
    # A malformed request is reported before anything about the table (errors.proto, fault order).
    if amount > MAX_BID:
        raise InvalidArgument("amount", f"0 passes; a bid is 1..{MAX_BID}")


class _Replays:
    """The latest GetReplay answers: a replay never changes, and building one from its JSON costs
    milliseconds (33 deals at most). An answer is reused only for the very same stored text."""

    def __init__(self, size: int = 64) -> None:
        self._size = size
        self._answers: collections.OrderedDict[tuple[str, int], tuple[str, pb.GetReplayResponse]] = (
            collections.OrderedDict()
        )

    def response(self, table_id: str, round_number: int, text: str) -> pb.GetReplayResponse:
        key = (table_id, round_number)
        known = self._answers.get(key)
        if known is not None and known[0] == text:
            self._answers.move_to_end(key)
            return known[1]
        response = pb.GetReplayResponse(
            replay=convert.replay_from_json(text), json=text, signature=replay_signature(text)
        )
        self._answers[key] = (text, response)
        if len(self._answers) > self._size:
            self._answers.popitem(last=False)
        return response


def _viewed(outcome: Outcome, principal: Principal) -> table_pb2.TableView:
    return convert.table_view(outcome.table, principal)


#: ListTables: the page size when none is asked for, and the largest one served.
_TABLES_PER_PAGE = 20
_MAX_TABLES_PER_PAGE = 50


def _page_start(token: str) -> int:
    """Where a ListTables page starts: its token is the position, in the activity index, of its first table."""
    if not token:
        return 0
    if len(token) > 9 or not token.isascii() or not token.isdecimal():
        raise InvalidArgument("page_token", "not a next_page_token of ListTables")
    return int(token)


class TableServicer(table_service_pb2_grpc.TableServiceServicer):
    """Table lifecycle and moves; every table lives in the store, none in this process."""

    def __init__(
        self,
        changes: UnitOfWork,
        reads: TableReads,
        store: TableStore,
        feeds: TableFeeds,
        *,
        admission: Admission | None = None,
        api_keys: Collection[str] = (),
        anonymous_create: bool = True,
    ) -> None:
        self._changes = changes
        self._reads = reads
        self._store = store
        self._feeds = feeds
        self._admission = admission or Admission(AdmissionLimits.of())
        self._api_keys = frozenset(api_keys)
        self._anonymous_create = anonymous_create
        self._replays = _Replays()

    @guarded
    async def CreateTable(self, request: pb.CreateTableRequest, context: ServicerContext) -> pb.CreateTableResponse:
        principal = api_principal(context, self._api_keys, anonymous=self._anonymous_create)
        # Bounded before any work: the seeds first (there may be many), then the settings.
        check_seeds(request.seeds)
        settings = convert.settings_from_proto(request.settings)
        check_settings(settings)
        owner = self._admission.owner(context)
        unattended = self._changes.policy.unattended_rounds

        def build(table_id: str, now_ms: int, mint: Mint) -> Created:
            return commands.create_table(
                table_id,
                settings,
                list(request.seeds),
                list(request.player_names),
                now_ms,
                mint,
                owner=owner,
                unattended_limit=unattended,
            )

        def respond(created: Created) -> pb.CreateTableResponse:
            return pb.CreateTableResponse(
                table_id=created.outcome.table.table_id,
                creator_token=created.creator_token,
                seat_tokens=[pb.SeatToken(seat=s, player_name=n, token=t) for s, n, t in created.seat_tokens],
                table=convert.table_view(created.outcome.table, Principal(Role.CREATOR)),
            )

        return await self._changes.create(request, principal, owner, build, respond, _CREATED)

    @guarded
    async def JoinTable(self, request: pb.JoinTableRequest, context: ServicerContext) -> pb.JoinTableResponse:
        commands.check_name("player_name", request.player_name)  # malformed before anything about the table
        seat = request.seat if request.HasField("seat") else None
        joined: list[commands.Joined] = []

        def command(table: TableState, ctx: Context) -> Outcome:
            result = commands.join(table, ctx, request.player_name, seat)
            joined.append(result)
            return result.outcome

        def respond(outcome: Outcome, _: Principal) -> pb.JoinTableResponse:
            result = joined[-1]
            return pb.JoinTableResponse(
                seat=result.seat,
                seat_token=result.token,
                table=convert.table_view(outcome.table, Principal(Role.SEAT, result.seat)),
            )

        # Joining needs no token: the answer is keyed by the request id alone, which makes it a secret.
        return await self._changes.mutate(
            "JoinTable",
            request,
            request.table_id,
            Credentials(),
            request.expected_version,
            command,
            respond,
            _JOINED,
            secret_request_id=True,
        )

    @guarded
    async def GetTable(self, request: pb.GetTableRequest, context: ServicerContext) -> pb.GetTableResponse:
        table, principal, _, presence, _ = await self._reads.snapshot(request.table_id, credentials(context))
        response = pb.GetTableResponse(table=convert.table_view(table, principal))
        mark_presence(response, presence)
        return response

    @guarded
    async def LeaveTable(self, request: pb.LeaveTableRequest, context: ServicerContext) -> pb.LeaveTableResponse:
        return await self._changes.mutate(
            "LeaveTable",
            request,
            request.table_id,
            credentials(context),
            request.expected_version,
            commands.leave,
            lambda outcome, _: pb.LeaveTableResponse(table=_viewed(outcome, Principal(Role.SPECTATOR))),
            _LEFT,
        )

    @guarded
    async def CloseTable(self, request: pb.CloseTableRequest, context: ServicerContext) -> pb.CloseTableResponse:
        return await self._changes.mutate(
            "CloseTable",
            request,
            request.table_id,
            credentials(context),
            request.expected_version,
            commands.close,
            lambda outcome, principal: pb.CloseTableResponse(
                standings=convert.standings_to_proto(table_standings(outcome.table)),
                table=_viewed(outcome, principal),
            ),
            _CLOSED,
        )

    @guarded
    async def Bid(self, request: pb.BidRequest, context: ServicerContext) -> pb.BidResponse:
        _require_version(request.expected_version)
        _require_amount(request.amount)
        return await self._changes.mutate(
            "Bid",
            request,
            request.table_id,
            credentials(context),
            request.expected_version,
            lambda table, ctx: commands.bid(table, ctx, request.amount),
            lambda outcome, principal: pb.BidResponse(table=_viewed(outcome, principal)),
            _BID,
        )

    @guarded
    async def Play(self, request: pb.PlayRequest, context: ServicerContext) -> pb.PlayResponse:
        _require_version(request.expected_version)
        # Malformed cards are refused before the table is read, and the list is bounded first.
        if len(request.cards) > _MAX_PLAY_CARDS:
            raise InvalidArgument("cards", f"a play has at most {_MAX_PLAY_CARDS} cards (a landlord's hand)")
        cards = convert.cards_from_proto(request.cards, None)

        def command(table: TableState, ctx: Context) -> Outcome:
            return commands.play(table, ctx, convert.cards_of_variant(cards, table.variant))

        def respond(outcome: Outcome, principal: Principal) -> pb.PlayResponse:
            response = pb.PlayResponse(table=_viewed(outcome, principal))
            for event in outcome.events:
                if isinstance(event, ev.CardsPlayed) and event.combination is not None:
                    response.combination.CopyFrom(convert.combination_to_proto(event.combination))
                    break
            return response

        return await self._changes.mutate(
            "Play",
            request,
            request.table_id,
            credentials(context),
            request.expected_version,
            command,
            respond,
            _PLAYED,
        )

    @guarded
    async def Settle(self, request: pb.SettleRequest, context: ServicerContext) -> pb.SettleResponse:
        def respond(outcome: Outcome, principal: Principal) -> pb.SettleResponse:
            result = outcome.table.last_result
            if result is None:  # settle_round refuses before this can happen
                raise WrongPhase("no round has ended yet")
            return pb.SettleResponse(
                settlement=convert.settlement_to_proto(result),
                reveal=convert.reveal_to_proto(result.reveal),
                standings=convert.standings_to_proto(table_standings(outcome.table)),
                table=_viewed(outcome, principal),
            )

        return await self._changes.mutate(
            "Settle",
            request,
            request.table_id,
            credentials(context),
            request.expected_version,
            commands.settle_round,
            respond,
            _SETTLED,
        )

    @guarded
    async def GetReplay(self, request: pb.GetReplayRequest, context: ServicerContext) -> pb.GetReplayResponse:
        if request.round < 1:
            raise InvalidArgument("round", "rounds are numbered from 1")
        text = await self._reads.read_replay(request.table_id, request.round)
        return self._replays.response(request.table_id, request.round, text)

    @guarded
    async def ListTables(self, request: pb.ListTablesRequest, context: ServicerContext) -> pb.ListTablesResponse:
        size = min(request.page_size or _TABLES_PER_PAGE, _MAX_TABLES_PER_PAGE)
        start = _page_start(request.page_token)
        tables, more = await self._reads.open_tables(start, size)
        return pb.ListTablesResponse(
            tables=[convert.table_summary(table) for table in tables], next_page_token=str(start + size) if more else ""
        )

    async def GetRefereeKeys(
        self, request: pb.GetRefereeKeysRequest, context: ServicerContext
    ) -> pb.GetRefereeKeysResponse:
        return keys_response(self._changes.signing)

    @guarded_stream
    async def WatchTable(
        self, request: pb.WatchTableRequest, context: ServicerContext
    ) -> AsyncIterator[pb.WatchTableResponse]:
        after = request.after_sequence if request.HasField("after_sequence") else None
        events = watch(
            self._reads,
            self._store,
            self._feeds,
            request.table_id,
            credentials(context),
            after,
            request.after_write_id,
        )
        async for event in events:
            yield pb.WatchTableResponse(event=event)
