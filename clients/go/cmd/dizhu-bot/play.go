package main

import (
	"context"
	"errors"
	"io"
	"log"
	"math/rand/v2"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	dizhuv1 "dizhu/clients/go/gen/dizhu/v1"
)

// Bot plays one seat of one table at random among the legal choices.
type Bot struct {
	referee *Referee
	tableID string
	random  *rand.Rand
	// Decisions counts the bids, plays and settlements the referee accepted from the bot.
	Decisions int
	// Reads counts its GetTable calls.
	Reads int
}

// idleStream is the silence after which a WatchTable stream counts as lost: the referee sends a
// heartbeat on an idle stream every 20 s (events.proto, Heartbeat), so a longer silence is a
// dead connection nobody told the bot about.
const idleStream = 45 * time.Second

// changes follows the table with WatchTable and tells of every new version of a change that
// may ask something of the seat (concerns); it closes `closed` once the table is (the stream
// ends with OK after TableClosed). A lost or silent stream is opened again after the last
// event received (after_sequence, after_write_id), with a capped backoff, for up to
// retryHorizon without a message.
type changes struct {
	mu      sync.Mutex
	version uint64
	signal  chan struct{}
	closed  chan struct{}
	err     error
}

// concerns reports whether the change `event` is part of may ask something of `seat` (a turn,
// a deal, the end of the auction or the round, the close): anything but a bid or play that
// hands the turn to another seat (its next_seat), another seat's Settle or clock, or a
// presence. Unknown: yes (the seat not known yet, a move without next_seat, a kind of event
// this bot does not know).
func concerns(event *dizhuv1.TableEvent, seat *uint32) bool {
	if seat == nil {
		return true
	}
	switch payload := event.GetPayload().(type) {
	case *dizhuv1.TableEvent_BidMade:
		return payload.BidMade.NextSeat == nil || payload.BidMade.GetNextSeat() == *seat
	case *dizhuv1.TableEvent_CardsPlayed:
		return payload.CardsPlayed.NextSeat == nil || payload.CardsPlayed.GetNextSeat() == *seat
	case *dizhuv1.TableEvent_SeatSettled:
		return payload.SeatSettled.GetSeat() == *seat
	case *dizhuv1.TableEvent_TurnDeadline:
		return payload.TurnDeadline.GetSeat() == *seat
	case *dizhuv1.TableEvent_SeatPresence:
		return false
	}
	return true
}

func (b *Bot) follow(ctx context.Context, c *changes) {
	defer close(c.closed)
	request := &dizhuv1.WatchTableRequest{TableId: b.tableID}
	// The seat, from the stream's snapshot (the stream is opened with its token).
	var seat *uint32
	delay := policy.InitialBackoff
	lostSince := time.Time{}
	for ctx.Err() == nil {
		streamCtx, cancel := context.WithCancel(b.referee.withToken(ctx))
		watchdog := time.AfterFunc(idleStream, cancel)
		stream, err := b.referee.Tables.WatchTable(streamCtx, request)
		for err == nil {
			var message *dizhuv1.WatchTableResponse
			message, err = stream.Recv()
			if err == nil {
				watchdog.Reset(idleStream)
				lostSince, delay = time.Time{}, policy.InitialBackoff
				event := message.GetEvent()
				request.AfterSequence, request.AfterWriteId = &event.Sequence, event.GetWriteId()
				if snapshot := event.GetSnapshot(); snapshot != nil && snapshot.YourSeat != nil {
					seat = snapshot.YourSeat
				}
				if concerns(event, seat) {
					c.mu.Lock()
					c.version = max(c.version, event.GetVersion())
					c.mu.Unlock()
				}
				select {
				case c.signal <- struct{}{}:
				default:
				}
			}
		}
		watchdog.Stop()
		cancel()
		if errors.Is(err, io.EOF) {
			return // OK: after TableClosed
		}
		code := status.Code(err)
		if code == codes.OutOfRange {
			// Resumed beyond the table's latest event (a recreated or restored table): start over with a snapshot.
			request.AfterSequence, request.AfterWriteId = nil, 0
			continue
		}
		if lostSince.IsZero() {
			lostSince = time.Now()
		}
		if decide(DetailsOf(err)) != decisionRetry || time.Since(lostSince) > retryHorizon {
			c.err = err
			return
		}
		log.Printf("WatchTable: %s; opening it again in %s", DetailsOf(err), delay)
		time.Sleep(delay)
		delay = policy.next(delay)
	}
}

// waitBeyond returns once the table's version is past `seen`, or the table closed.
func (c *changes) waitBeyond(ctx context.Context, seen uint64) error {
	for {
		c.mu.Lock()
		latest := c.version
		c.mu.Unlock()
		if latest > seen {
			return nil
		}
		select {
		case <-c.signal:
		case <-c.closed:
			return c.err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (b *Bot) read(ctx context.Context) (*dizhuv1.TableView, error) {
	b.Reads++
	resp, err := call(ctx, b.referee, "GetTable", &dizhuv1.GetTableRequest{TableId: b.tableID}, b.referee.Tables.GetTable)
	return resp.GetTable(), err
}

// Play plays the seat until the table closes and returns the closed table's view.
func (b *Bot) Play(ctx context.Context) (*dizhuv1.TableView, error) {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	follower := &changes{signal: make(chan struct{}, 1), closed: make(chan struct{})}
	go b.follow(ctx, follower)

	view, err := b.read(ctx)
	settled := uint32(0)
	for err == nil && view.GetPhase() != dizhuv1.Phase_PHASE_CLOSED {
		var after *dizhuv1.TableView
		after, err = b.act(ctx, view, &settled)
		switch {
		case err != nil && reasonOf(err) != "":
			// Moved on: read the table and decide again. Any other refusal ends the bot, unless
			// the table has closed meanwhile (a refusal of a closed table ends the game).
			refusal := err
			log.Printf("seat %d: %s; reading the table again", view.GetYourSeat(), DetailsOf(err))
			view, err = b.read(ctx)
			if err == nil && decide(DetailsOf(refusal)) != decisionMovedOn && view.GetPhase() != dizhuv1.Phase_PHASE_CLOSED {
				err = refusal
			}
		case err != nil:
		case after != nil:
			b.Decisions++
			view = after
		default:
			if err = follower.waitBeyond(ctx, view.GetVersion()); err == nil {
				view, err = b.read(ctx)
			}
		}
	}
	return view, err
}

// act makes the seat's decision if the table waits for one; nil, nil if it does not.
func (b *Bot) act(ctx context.Context, view *dizhuv1.TableView, settled *uint32) (*dizhuv1.TableView, error) {
	requestID := NewRequestID()
	if view.GetPhase() == dizhuv1.Phase_PHASE_ROUND_OVER && view.GetLastSettlement().GetRound() > *settled {
		resp, err := call(ctx, b.referee, "Settle", &dizhuv1.SettleRequest{TableId: b.tableID, RequestId: requestID}, b.referee.Tables.Settle)
		if err == nil {
			*settled = resp.GetSettlement().GetRound()
		}
		return resp.GetTable(), err
	}
	// turn_seat and your_seat are optional: unset reads as 0 through the getters, which is
	// seat 0's number. Ask for presence first.
	if view.TurnSeat == nil || view.YourSeat == nil || view.GetTurnSeat() != view.GetYourSeat() {
		return nil, nil
	}
	switch view.GetPhase() {
	case dizhuv1.Phase_PHASE_AUCTION:
		amounts := view.GetLegalBids() // 0 (a pass), then every amount above the highest bid
		if len(amounts) == 0 {
			return nil, nil
		}
		amount := amounts[b.random.IntN(len(amounts))]
		resp, err := call(ctx, b.referee, "Bid", &dizhuv1.BidRequest{
			TableId: b.tableID, RequestId: requestID, ExpectedVersion: view.GetVersion(), Amount: amount,
		}, b.referee.Tables.Bid)
		return resp.GetTable(), err
	case dizhuv1.Phase_PHASE_PLAY:
		legal, err := call(ctx, b.referee, "ListLegalMoves", &dizhuv1.ListLegalMovesRequest{
			Variant: view.GetSettings().GetVariant(),
			Hand:    &dizhuv1.CardSet{Cards: view.GetYourHand()},
			ToBeat:  toBeat(view),
		}, b.referee.Rules.ListLegalMoves)
		if err != nil {
			return nil, err
		}
		choices := make([][]*dizhuv1.Card, 0, len(legal.GetMoves())+1)
		for _, move := range legal.GetMoves() {
			choices = append(choices, move.GetCards())
		}
		if legal.GetCanPass() || len(choices) == 0 {
			choices = append(choices, nil) // a pass
		}
		resp, err := call(ctx, b.referee, "Play", &dizhuv1.PlayRequest{
			TableId: b.tableID, RequestId: requestID, ExpectedVersion: view.GetVersion(),
			Cards: choices[b.random.IntN(len(choices))],
		}, b.referee.Tables.Play)
		return resp.GetTable(), err
	}
	return nil, nil
}

// toBeat is the view's play to beat; nil when the bot leads (the view leaves it unset then).
func toBeat(view *dizhuv1.TableView) *dizhuv1.CardSet {
	last := view.GetToBeat()
	if last == nil {
		return nil
	}
	return &dizhuv1.CardSet{Cards: last.GetCards()}
}
