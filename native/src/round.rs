//! One round as a state machine, its settlement, and batched random play (docs/rules.md
//! sections 2, 4, 5 and 9): a port of `dizhu.rules.round`, `settlement` and `random_play`.
//!
//! Refusals carry the Python core's machine-readable reason (`Refusal`) and are checked in
//! the same order, so that one wrong action is refused for the same reason by both engines.

use crate::deal::{deal, rank_of, sort_key};
use crate::moves::legal_moves;
use crate::rules::{beats, read, Combo, Counts, Kind, Variant, RANKS};

pub const MAX_BID: u8 = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Auction,
    Play,
    Finished,
    ThrownIn,
}

impl Phase {
    /// The value of the Python `Phase` member.
    pub fn value(self) -> &'static str {
        match self {
            Phase::Auction => "auction",
            Phase::Play => "play",
            Phase::Finished => "finished",
            Phase::ThrownIn => "thrown_in",
        }
    }
}

/// What an accepted action produced, as the Python events (cards left out: the caller has them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    BidMade {
        seat: usize,
        amount: u8,
    },
    ThrownIn,
    LandlordChosen {
        seat: usize,
        bid: u8,
    },
    CardsPlayed {
        seat: usize,
        play: Option<Combo>,
        doubled: bool,
    },
    TrickClosed {
        leader: usize,
    },
    RoundFinished {
        seat: usize,
        landlord_won: bool,
    },
}

/// A refused action: the `Refusal` value of the Python core.
pub type Refused = &'static str;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Round {
    pub variant: Variant,
    pub spring_rule: bool,
    pub phase: Phase,
    pub turn: usize,
    /// Each seat's card ids, sorted as hands are kept.
    pub hands: Vec<Vec<u8>>,
    pub kitty: Vec<u8>,
    pub bid: u8,
    pub bidder: Option<usize>,
    pub passes: usize,
    pub landlord: Option<usize>,
    pub last_play: Option<Combo>,
    pub last_player: Option<usize>,
    pub doublings: u32,
    pub plays_made: Vec<u32>,
}

/// What a finished round pays, as `Settlement`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settlement {
    pub stake: i64,
    pub deltas: Vec<i64>,
    pub landlord: Option<usize>,
    pub landlord_won: Option<bool>,
    pub doublings: u32,
    pub spring: bool,
}

/// The rank counts of some card ids.
pub fn counts_of(cards: &[u8]) -> Counts {
    let mut counts = [0u8; RANKS];
    for &card in cards {
        let count = &mut counts[rank_of(card)];
        *count = count.saturating_add(1);
    }
    counts
}

impl Round {
    /// The state before the first bid: the seat that drew the face-up card bids first.
    pub fn new(
        variant: Variant,
        hands: Vec<Vec<u8>>,
        kitty: Vec<u8>,
        first: usize,
        spring_rule: bool,
    ) -> Round {
        let players = variant.players;
        Round {
            variant,
            spring_rule,
            phase: Phase::Auction,
            turn: first,
            hands,
            kitty,
            bid: 0,
            bidder: None,
            passes: 0,
            landlord: None,
            last_play: None,
            last_player: None,
            doublings: 0,
            plays_made: vec![0; players],
        }
    }

    pub fn is_over(&self) -> bool {
        matches!(self.phase, Phase::Finished | Phase::ThrownIn)
    }

    fn next_seat(&self, seat: usize) -> usize {
        (seat + 1) % self.variant.players
    }

    fn check_turn(&self, seat: i64, phase: Phase) -> Result<usize, Refused> {
        let seat = usize::try_from(seat)
            .ok()
            .filter(|&seat| seat < self.variant.players)
            .ok_or("INVALID_SEAT")?;
        if self.phase != phase {
            return Err("WRONG_PHASE");
        }
        if seat != self.turn {
            return Err("NOT_YOUR_TURN");
        }
        Ok(seat)
    }

    /// The amounts the seat to act may bid (0 = pass); empty outside the auction.
    pub fn legal_bids(&self) -> Vec<u8> {
        if self.phase != Phase::Auction {
            return Vec::new();
        }
        std::iter::once(0).chain(self.bid + 1..=MAX_BID).collect()
    }

    /// The plays the seat to act may make; empty outside the play.
    pub fn legal_plays(&self) -> Vec<Combo> {
        if self.phase != Phase::Play {
            return Vec::new();
        }
        legal_moves(
            &counts_of(&self.hands[self.turn]),
            self.last_play.as_ref(),
            &self.variant,
        )
    }

    pub fn bid(&mut self, seat: i64, amount: i64) -> Result<Vec<Event>, Refused> {
        let seat = self.check_turn(seat, Phase::Auction)?;
        let amount = u8::try_from(amount)
            .ok()
            .filter(|&amount| amount <= MAX_BID)
            .ok_or("INVALID_BID")?;
        if amount != 0 && amount <= self.bid {
            return Err("BID_TOO_LOW");
        }
        let made = Event::BidMade { seat, amount };
        if amount != 0 {
            self.bid = amount;
            self.bidder = Some(seat);
            self.passes = 0;
            if amount == MAX_BID {
                return Ok(self.choose_landlord(made));
            }
            self.turn = self.next_seat(seat);
            return Ok(vec![made]);
        }
        self.passes += 1;
        if self.bidder.is_none() && self.passes == self.variant.players {
            self.phase = Phase::ThrownIn;
            return Ok(vec![made, Event::ThrownIn]);
        }
        if self.bidder.is_some() && self.passes == self.variant.passes_to_close() {
            return Ok(self.choose_landlord(made));
        }
        self.turn = self.next_seat(seat);
        Ok(vec![made])
    }

    fn choose_landlord(&mut self, made: Event) -> Vec<Event> {
        let landlord = self.bidder.unwrap_or(self.turn);
        let hand = &mut self.hands[landlord];
        hand.extend_from_slice(&self.kitty);
        hand.sort_unstable_by_key(|&card| sort_key(card));
        self.phase = Phase::Play;
        self.turn = landlord;
        self.landlord = Some(landlord);
        self.passes = 0;
        vec![
            made,
            Event::LandlordChosen {
                seat: landlord,
                bid: self.bid,
            },
        ]
    }

    pub fn play(&mut self, seat: i64, cards: &[u8]) -> Result<Vec<Event>, Refused> {
        let seat = self.check_turn(seat, Phase::Play)?;
        if cards.is_empty() {
            let Some(last_player) = self.last_player.filter(|_| self.last_play.is_some()) else {
                return Err("MUST_LEAD");
            };
            self.passes += 1;
            let passed = Event::CardsPlayed {
                seat,
                play: None,
                doubled: false,
            };
            if self.passes == self.variant.passes_to_close() {
                self.turn = last_player;
                self.passes = 0;
                self.last_play = None;
                self.last_player = None;
                return Ok(vec![
                    passed,
                    Event::TrickClosed {
                        leader: last_player,
                    },
                ]);
            }
            self.turn = self.next_seat(seat);
            return Ok(vec![passed]);
        }
        let remaining = remove_from_hand(&self.hands[seat], cards).ok_or("CARDS_NOT_IN_HAND")?;
        let play = read(&counts_of(cards), &self.variant).map_err(|_| "ILLEGAL_COMBINATION")?;
        if self.last_play.is_some_and(|last| !beats(&play, &last)) {
            return Err("DOES_NOT_BEAT");
        }
        let doubled = play.kind == Kind::Rocket
            || (play.kind == Kind::Bomb && play.size >= self.variant.min_doubling_bomb_size);
        self.plays_made[seat] += 1;
        let out = remaining.is_empty();
        self.hands[seat] = remaining;
        self.passes = 0;
        self.last_play = Some(play);
        self.last_player = Some(seat);
        self.doublings += u32::from(doubled);
        let played = Event::CardsPlayed {
            seat,
            play: Some(play),
            doubled,
        };
        if out {
            self.phase = Phase::Finished;
            self.turn = seat;
            return Ok(vec![
                played,
                Event::RoundFinished {
                    seat,
                    landlord_won: Some(seat) == self.landlord,
                },
            ]);
        }
        self.turn = self.next_seat(seat);
        Ok(vec![played])
    }

    /// The stake so far: the bid doubled once per doubling play.
    pub fn stake(&self) -> i64 {
        i64::from(self.bid)
            .checked_shl(self.doublings)
            .unwrap_or(i64::MAX)
    }

    fn is_spring(&self, landlord: usize, landlord_won: bool) -> bool {
        if landlord_won {
            self.plays_made
                .iter()
                .enumerate()
                .all(|(seat, &made)| seat == landlord || made == 0)
        } else {
            self.plays_made[landlord] == 1
        }
    }

    /// The settlement of a round that is over; None while it is still on.
    pub fn settle(&self) -> Option<Settlement> {
        let players = self.variant.players;
        match self.phase {
            Phase::ThrownIn => {
                return Some(Settlement {
                    stake: 0,
                    deltas: vec![0; players],
                    landlord: None,
                    landlord_won: None,
                    doublings: 0,
                    spring: false,
                })
            }
            Phase::Finished => {}
            _ => return None,
        }
        let landlord = self.landlord?;
        let landlord_won = self.turn == landlord;
        let spring = self.spring_rule && self.is_spring(landlord, landlord_won);
        let stake = self
            .stake()
            .checked_shl(u32::from(spring))
            .unwrap_or(i64::MAX);
        let farmer_delta = if landlord_won { -stake } else { stake };
        let landlord_delta = -farmer_delta * (players as i64 - 1);
        let deltas = (0..players)
            .map(|seat| {
                if seat == landlord {
                    landlord_delta
                } else {
                    farmer_delta
                }
            })
            .collect();
        Some(Settlement {
            stake,
            deltas,
            landlord: Some(landlord),
            landlord_won: Some(landlord_won),
            doublings: self.doublings,
            spring,
        })
    }
}

/// `hand` without `cards`, or None unless the hand holds each of them, each listed once.
fn remove_from_hand(hand: &[u8], cards: &[u8]) -> Option<Vec<u8>> {
    let mut taken = vec![false; hand.len()];
    for card in cards {
        let position = hand.iter().position(|held| held == card)?;
        if std::mem::replace(&mut taken[position], true) {
            return None;
        }
    }
    Some(
        hand.iter()
            .zip(&taken)
            .filter(|(_, &gone)| !gone)
            .map(|(&card, _)| card)
            .collect(),
    )
}

/// Concrete cards from `hand` that make up `play`: the first of each rank, as `pick_cards`.
pub fn pick_cards(hand: &[u8], play: &Combo) -> Vec<u8> {
    pick_counts(hand, &play.counts())
}

/// Concrete cards from `hand` of these rank counts: the first of each rank.
pub fn pick_counts(hand: &[u8], counts: &Counts) -> Vec<u8> {
    let mut needed = *counts;
    let mut picked = Vec::with_capacity(counts.iter().map(|&n| usize::from(n)).sum());
    for &card in hand {
        let need = &mut needed[rank_of(card)];
        if *need > 0 {
            *need -= 1;
            picked.push(card);
        }
    }
    picked
}

/// SplitMix64: a small, seedable generator for game randomness (not cryptography).
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A draw in `0 .. n` (`n >= 1`); the bias of a 64-bit modulus is far below anything measurable here.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// What a batch of random rounds did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub rounds: u64,
    pub actions: u64,
    pub thrown_in: u64,
    pub landlord_wins: u64,
    /// Sum over rounds of the landlord's balance change: a checksum of the batch.
    pub landlord_balance: i64,
}

/// Plays `rounds` complete rounds between uniformly random players (passing counts as one
/// choice), each dealt from a seed drawn from `seed`'s generator.
pub fn random_rounds(variant: &Variant, seed: u64, rounds: u64, spring_rule: bool) -> Totals {
    let mut rng = SplitMix64::new(seed);
    let mut totals = Totals::default();
    for _ in 0..rounds {
        let mut round_seed = [0u8; 32];
        for chunk in round_seed.chunks_exact_mut(8) {
            chunk.copy_from_slice(&rng.next_u64().to_le_bytes());
        }
        let dealt = deal(&round_seed, variant, 0);
        let mut round = Round::new(
            variant.clone(),
            dealt.hands,
            dealt.kitty,
            dealt.face_up_seat,
            spring_rule,
        );
        while !round.is_over() {
            let seat = round.turn as i64;
            let accepted = if round.phase == Phase::Auction {
                let bids = round.legal_bids();
                round.bid(seat, i64::from(bids[rng.below(bids.len())]))
            } else {
                let plays = round.legal_plays();
                let choice = rng.below(plays.len() + usize::from(round.last_play.is_some()));
                let cards = plays
                    .get(choice)
                    .map(|play| pick_cards(&round.hands[round.turn], play))
                    .unwrap_or_default();
                round.play(seat, &cards)
            };
            assert!(accepted.is_ok(), "a legal action was refused: {accepted:?}");
            totals.actions += 1;
        }
        totals.rounds += 1;
        let settlement = round
            .settle()
            .unwrap_or_else(|| unreachable!("a round over settles"));
        match settlement.landlord {
            None => totals.thrown_in += 1,
            Some(landlord) => {
                totals.landlord_wins += u64::from(settlement.landlord_won == Some(true));
                totals.landlord_balance += settlement.deltas[landlord];
            }
        }
    }
    totals
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_rounds_end_and_sum_to_zero() {
        for variant in [Variant::three_player(), Variant::four_player()] {
            let totals = random_rounds(&variant, 7, 200, true);
            assert_eq!(totals.rounds, 200);
            assert!(totals.actions > 200 * 10);
            assert_eq!(
                totals,
                random_rounds(&variant, 7, 200, true),
                "the same seed plays the same rounds"
            );
        }
    }

    #[test]
    fn refusals_are_checked_in_the_python_order() {
        let dealt = deal(&[1; 32], &Variant::three_player(), 0);
        let mut round = Round::new(
            Variant::three_player(),
            dealt.hands,
            dealt.kitty,
            dealt.face_up_seat,
            false,
        );
        let other = (round.turn + 1) % 3;
        assert_eq!(round.bid(3, 1), Err("INVALID_SEAT"));
        assert_eq!(round.play(round.turn as i64, &[]), Err("WRONG_PHASE"));
        assert_eq!(round.bid(other as i64, 1), Err("NOT_YOUR_TURN"));
        assert_eq!(round.bid(round.turn as i64, 4), Err("INVALID_BID"));
        assert!(round.bid(round.turn as i64, 2).is_ok());
        assert_eq!(round.bid(round.turn as i64, 1), Err("BID_TOO_LOW"));
    }
}
