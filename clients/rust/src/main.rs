//! dizhu-bot plays a seat of a dizhu table at random among the legal choices, through the
//! referee's gRPC API (docs/api.md), until the table closes.
//!
//!   dizhu-bot --create [--variant 3p|4p] [--rounds 1]     create a table, print {"table_id", "creator_token"}
//!   dizhu-bot --table ID [--name NAME | --token TOKEN]   take a seat (or play a token's) to the end
//!
//! Joining prints {"table_id", "seat", "seat_token"} at once: --token plays that seat again
//! (after a crash, say), where joining anew would find the table full. --target is host:port or
//! unix:/path/to/socket.
//!
//! Without flags it reads DIZHU_TARGET, DIZHU_TABLE_ID and DIZHU_SEAT_TOKEN (and DIZHU_TLS,
//! DIZHU_TLS_CA), as `dizhu tournament` starts a gRPC entrant. At the end it prints
//! {"table_id", "seat", "decisions", "reads", "balances"} as one line of JSON.

mod facts;
mod referee;

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::process::ExitCode;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tokio::sync::watch;
use tonic::{Code, Status};

use referee::{describe, Referee, RETRY_HORIZON};

/// Silence after which a WatchTable stream counts as lost: the referee sends a heartbeat on an
/// idle stream every 20 s, so a longer silence is a dead connection nobody told the bot about.
const IDLE_STREAM: Duration = Duration::from_secs(45);

pub mod dizhu {
    pub mod v1 {
        tonic::include_proto!("dizhu.v1");
    }
}

use dizhu::v1::table_event::Payload;
use dizhu::v1::{
    BidRequest, CardSet, CreateTableRequest, GetTableRequest, JoinTableRequest,
    ListLegalMovesRequest, Phase, PlayRequest, SettleRequest, TableEvent, TableSettings, TableView,
    Variant, WatchTableRequest,
};

/// What the WatchTable task tells the player: the latest version seen, and whether the stream
/// ended (with the error that ended it, if any).
#[derive(Clone, Default)]
struct Followed {
    version: u64,
    ended: bool,
    error: Option<Status>,
}

/// Whether the change `event` is part of may ask something of `seat` (a turn, a deal, the end of
/// the auction or the round, the close): anything but a bid or play that hands the turn to another
/// seat (its next_seat), another seat's Settle or clock, or a presence. Unknown: yes (the seat not
/// known yet, a move without next_seat, a kind of event this bot does not know).
fn concerns(event: &TableEvent, seat: Option<u32>) -> bool {
    let Some(seat) = seat else { return true };
    match &event.payload {
        Some(Payload::BidMade(bid)) => bid.next_seat.is_none_or(|next| next == seat),
        Some(Payload::CardsPlayed(play)) => play.next_seat.is_none_or(|next| next == seat),
        Some(Payload::SeatSettled(settled)) => settled.seat == seat,
        Some(Payload::TurnDeadline(deadline)) => deadline.seat == seat,
        Some(Payload::SeatPresence(_)) => false,
        _ => true,
    }
}

/// Plays one seat of one table at random among the legal choices.
struct Bot {
    referee: Referee,
    table_id: String,
    random: StdRng,
    decisions: u32,
    /// Its GetTable calls.
    reads: u32,
    settled_round: u32,
}

impl Bot {
    async fn read(&mut self) -> Result<TableView, Status> {
        self.reads += 1;
        let request = GetTableRequest {
            table_id: self.table_id.clone(),
        };
        let response = self
            .referee
            .call("GetTable", request, |r| {
                let mut tables = self.referee.tables.clone();
                async move { tables.get_table(r).await }
            })
            .await?;
        Ok(response.table.unwrap_or_default())
    }

    /// Follows the table with WatchTable and tells of every new version of a change that may ask
    /// something of the seat (`concerns`). A lost or silent stream is opened again after the last
    /// event received (after_sequence, after_write_id), with a capped backoff, for up to
    /// RETRY_HORIZON without a message.
    fn follow(&self) -> watch::Receiver<Followed> {
        let (sender, receiver) = watch::channel(Followed::default());
        let referee = self.referee.clone();
        let mut resume = WatchTableRequest {
            table_id: self.table_id.clone(),
            ..Default::default()
        };
        tokio::spawn(async move {
            let mut delay = facts::initial_backoff();
            let mut lost_since: Option<tokio::time::Instant> = None;
            // The seat, from the stream's snapshot (the stream is opened with its token).
            let mut seat = None;
            let error = loop {
                let request = referee.request(resume.clone(), None);
                let mut tables = referee.tables.clone();
                let outcome = match tables.watch_table(request).await {
                    Ok(response) => {
                        let mut stream = response.into_inner();
                        loop {
                            match tokio::time::timeout(IDLE_STREAM, stream.message()).await {
                                Ok(Ok(Some(message))) => {
                                    lost_since = None;
                                    delay = facts::initial_backoff();
                                    let event = message.event.unwrap_or_default();
                                    resume.after_sequence = Some(event.sequence);
                                    resume.after_write_id = event.write_id;
                                    if let Some(Payload::Snapshot(view)) = &event.payload {
                                        seat = view.your_seat.or(seat);
                                    }
                                    if concerns(&event, seat) {
                                        sender.send_modify(|state| {
                                            state.version = state.version.max(event.version)
                                        });
                                    }
                                }
                                Ok(Ok(None)) => break Ok(()), // OK: after TableClosed
                                Ok(Err(status)) => break Err(status),
                                Err(_) => {
                                    break Err(Status::cancelled(
                                        "no message, not even a heartbeat",
                                    ))
                                }
                            }
                        }
                    }
                    Err(status) => Err(status),
                };
                match outcome {
                    Ok(()) => break None,
                    Err(status) if status.code() == Code::OutOfRange => {
                        // Resumed beyond the table's latest event (a recreated or restored
                        // table): start over with a snapshot.
                        resume.after_sequence = None;
                        resume.after_write_id = 0;
                    }
                    Err(status) => {
                        let lost = facts::decide_status(&status) == facts::Decision::Retry;
                        let since = *lost_since.get_or_insert_with(tokio::time::Instant::now);
                        if !lost || since.elapsed() > RETRY_HORIZON {
                            break Some(status);
                        }
                        eprintln!(
                            "WatchTable: {}; opening it again in {delay:?}",
                            describe(&status)
                        );
                        tokio::time::sleep(delay).await;
                        delay = facts::next_backoff(delay);
                    }
                }
            };
            sender.send_modify(|state| {
                state.ended = true;
                state.error = error;
            });
        });
        receiver
    }

    /// Plays the seat until the table closes; the closed table's view.
    async fn play(&mut self) -> Result<TableView, Status> {
        let mut followed = self.follow();
        let mut view = self.read().await?;
        while view.phase() != Phase::Closed {
            match self.act(&view).await {
                Ok(Some(after)) => {
                    self.decisions += 1;
                    view = after;
                }
                Ok(None) => {
                    let seen = view.version;
                    let state = followed
                        .wait_for(|state| state.version > seen || state.ended)
                        .await
                        .map_err(|_| Status::internal("the WatchTable task stopped"))?
                        .clone();
                    if state.version <= seen {
                        if let Some(error) = state.error {
                            return Err(error);
                        }
                    }
                    view = self.read().await?;
                }
                // Moved on (the clock acted, a round ended): read the table, decide again. Any
                // other refusal ends the bot, unless the table has closed meanwhile (a refusal of
                // a closed table ends the game).
                Err(status) => {
                    eprintln!(
                        "seat {:?}: {}; reading the table again",
                        view.your_seat,
                        describe(&status)
                    );
                    view = self.read().await?;
                    if facts::decide_status(&status) != facts::Decision::MovedOn
                        && view.phase() != Phase::Closed
                    {
                        return Err(status);
                    }
                }
            }
        }
        Ok(view)
    }

    /// Makes the seat's decision if the table waits for one; None if it does not.
    async fn act(&mut self, view: &TableView) -> Result<Option<TableView>, Status> {
        let request_id = referee::new_request_id();
        let table_id = self.table_id.clone();
        let settled_round = view
            .last_settlement
            .as_ref()
            .map_or(0, |settlement| settlement.round);
        if view.phase() == Phase::RoundOver && settled_round > self.settled_round {
            let request = SettleRequest {
                table_id,
                request_id,
                ..Default::default()
            };
            let settled = self
                .referee
                .call("Settle", request, |r| {
                    let mut tables = self.referee.tables.clone();
                    async move { tables.settle(r).await }
                })
                .await?;
            self.settled_round = settled
                .settlement
                .as_ref()
                .map_or(settled_round, |settlement| settlement.round);
            return Ok(settled.table);
        }
        // turn_seat and your_seat are `optional`: prost makes them Option<u32>, so an unset
        // seat cannot pass for seat 0 here.
        let (Some(turn), Some(mine)) = (view.turn_seat, view.your_seat) else {
            return Ok(None);
        };
        if turn != mine {
            return Ok(None);
        }
        match view.phase() {
            Phase::Auction => {
                // 0 (a pass), then every amount above the highest bid.
                let amounts = &view.legal_bids;
                if amounts.is_empty() {
                    return Ok(None);
                }
                let amount = amounts[self.random.random_range(0..amounts.len())];
                let request = BidRequest {
                    table_id,
                    request_id,
                    expected_version: view.version,
                    amount,
                };
                let response = self
                    .referee
                    .call("Bid", request, |r| {
                        let mut tables = self.referee.tables.clone();
                        async move { tables.bid(r).await }
                    })
                    .await?;
                Ok(response.table)
            }
            Phase::Play => {
                let ask = ListLegalMovesRequest {
                    variant: view
                        .settings
                        .as_ref()
                        .map_or(0, |settings| settings.variant),
                    hand: Some(CardSet {
                        cards: view.your_hand.clone(),
                        ..Default::default()
                    }),
                    to_beat: to_beat(view),
                };
                let legal = self
                    .referee
                    .call("ListLegalMoves", ask, |r| {
                        let mut rules = self.referee.rules.clone();
                        async move { rules.list_legal_moves(r).await }
                    })
                    .await?;
                let mut choices: Vec<_> = legal
                    .moves
                    .into_iter()
                    .map(|legal_move| legal_move.cards)
                    .collect();
                if legal.can_pass || choices.is_empty() {
                    choices.push(Vec::new()); // a pass
                }
                let cards = choices.swap_remove(self.random.random_range(0..choices.len()));
                let request = PlayRequest {
                    table_id,
                    request_id,
                    expected_version: view.version,
                    cards,
                };
                let response = self
                    .referee
                    .call("Play", request, |r| {
                        let mut tables = self.referee.tables.clone();
                        async move { tables.play(r).await }
                    })
                    .await?;
                Ok(response.table)
            }
            _ => Ok(None),
        }
    }
}

/// The view's play to beat; None when the bot leads (the view leaves it unset then).
fn to_beat(view: &TableView) -> Option<CardSet> {
    let play = view.to_beat.as_ref()?;
    Some(CardSet {
        cards: play.cards.clone(),
        ..Default::default()
    })
}

struct Options {
    target: String,
    table_id: String,
    token: String,
    name: String,
    api_key: String,
    variant: String,
    rounds: u32,
    create: bool,
    seed: Option<u64>,
}

fn usage() -> ExitCode {
    eprintln!("usage: dizhu-bot --create [--variant 3p|4p] [--rounds N] | --table ID [--name NAME | --token TOKEN]");
    ExitCode::from(2)
}

fn parse() -> Option<Options> {
    let env = |name: &str, fallback: &str| {
        std::env::var(name)
            .ok()
            .filter(|v| !v.is_empty())
            .unwrap_or(fallback.into())
    };
    let mut options = Options {
        target: env("DIZHU_TARGET", "127.0.0.1:50051"),
        table_id: env("DIZHU_TABLE_ID", ""),
        token: env("DIZHU_SEAT_TOKEN", ""),
        name: env("DIZHU_ENTRANT", "rust-bot"),
        api_key: env("DIZHU_API_KEY", ""),
        variant: "3p".into(),
        rounds: 1,
        create: false,
        seed: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        if flag == "--create" {
            options.create = true;
            continue;
        }
        if flag == "--print-reason-facts" {
            facts::print();
            std::process::exit(0);
        }
        let value = args.next()?;
        match flag.as_str() {
            "--target" => options.target = value,
            "--table" => options.table_id = value,
            "--token" => options.token = value,
            "--name" => options.name = value,
            "--api-key" => options.api_key = value,
            "--variant" => options.variant = value,
            "--rounds" => options.rounds = value.parse().ok()?,
            "--seed" => options.seed = Some(value.parse().ok()?),
            _ => return None,
        }
    }
    let known_variant = matches!(options.variant.as_str(), "3p" | "4p");
    (known_variant && (options.create || !options.table_id.is_empty())).then_some(options)
}

#[tokio::main]
async fn main() -> ExitCode {
    let Some(mut options) = parse() else {
        return usage();
    };
    let tls = std::env::var_os("DIZHU_TLS").is_some();
    let mut referee =
        match Referee::connect(&options.target, tls, std::env::var("DIZHU_TLS_CA").ok()) {
            Ok(referee) => referee,
            Err(error) => {
                eprintln!("{error}");
                return ExitCode::from(1);
            }
        };
    if options.create {
        let variant = if options.variant == "4p" {
            Variant::FourPlayer
        } else {
            Variant::ThreePlayer
        };
        referee.api_key = Some(options.api_key.clone()).filter(|key| !key.is_empty());
        let request = CreateTableRequest {
            request_id: referee::new_request_id(),
            settings: Some(TableSettings {
                variant: variant.into(),
                round_limit: options.rounds,
                ..Default::default()
            }),
            ..Default::default()
        };
        let created = referee
            .call("CreateTable", request, |r| {
                let mut tables = referee.tables.clone();
                async move { tables.create_table(r).await }
            })
            .await;
        return match created {
            Ok(created) => {
                // The creator token closes the table (`dizhu table close`); keep it.
                println!(
                    "{{\"table_id\":\"{}\",\"creator_token\":\"{}\"}}",
                    created.table_id, created.creator_token
                );
                ExitCode::SUCCESS
            }
            Err(status) => {
                eprintln!("CreateTable: {}", describe(&status));
                ExitCode::from(1)
            }
        };
    }
    if options.token.is_empty() {
        // A JoinTable whose deadline passes may have taken a seat: the same request_id sent
        // again returns that seat instead of taking a second one.
        let request = JoinTableRequest {
            table_id: options.table_id.clone(),
            request_id: referee::new_request_id(),
            player_name: options.name.clone(),
            ..Default::default()
        };
        let joined = referee
            .call("JoinTable", request, |r| {
                let mut tables = referee.tables.clone();
                async move { tables.join_table(r).await }
            })
            .await;
        match joined {
            Ok(joined) => {
                eprintln!(
                    "joined table {} at seat {} as {}",
                    options.table_id, joined.seat, options.name
                );
                println!(
                    "{{\"table_id\":\"{}\",\"seat\":{},\"seat_token\":\"{}\"}}",
                    options.table_id, joined.seat, joined.seat_token
                );
                options.token = joined.seat_token;
            }
            Err(status) => {
                eprintln!("JoinTable: {}", describe(&status));
                return ExitCode::from(1);
            }
        }
    }
    referee.token = Some(options.token.clone());
    let seed = options.seed.unwrap_or_else(|| {
        let mut hasher = DefaultHasher::new();
        (&options.table_id, &options.name, &options.token).hash(&mut hasher);
        hasher.finish()
    });
    let mut bot = Bot {
        referee,
        table_id: options.table_id.clone(),
        random: StdRng::seed_from_u64(seed),
        decisions: 0,
        reads: 0,
        settled_round: 0,
    };
    match bot.play().await {
        Ok(view) => {
            let balances: Vec<String> = view
                .seats
                .iter()
                .map(|seat| seat.balance.to_string())
                .collect();
            println!(
                "{{\"table_id\":\"{}\",\"seat\":{},\"decisions\":{},\"reads\":{},\"balances\":[{}]}}",
                options.table_id,
                view.your_seat.unwrap_or_default(),
                bot.decisions,
                bot.reads,
                balances.join(",")
            );
            ExitCode::SUCCESS
        }
        Err(status) => {
            eprintln!("playing table {}: {}", options.table_id, describe(&status));
            ExitCode::from(1)
        }
    }
}
