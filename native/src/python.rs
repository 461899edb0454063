//! The Python module `dizhu._engine`: the bindings `dizhu.rules` calls through `dizhu.engine`.
//!
//! Every entry point checks its input (ranks, card ids, kinds, sizes) before the rules see it
//! and runs under `guard`, so that a panic never unwinds into the interpreter: it becomes an
//! `EngineFault` (a `RuntimeError`), which the referee reports like any other internal error.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};

use crate::deal::shuffle;
use crate::moves::legal_moves;
use crate::round::{random_rounds, Event, Round, Settlement};
use crate::rules::{Combo, Counts, Kind, Variant, MAX_OF_A_RANK, RANKS};

create_exception!(
    _engine,
    EngineFault,
    PyRuntimeError,
    "A fault inside the native engine (a Rust panic)."
);

/// Runs `body`, turning a panic into an `EngineFault` with the panic's message.
pub(crate) fn guard<T>(body: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|panic| {
        let message = panic
            .downcast_ref::<&str>()
            .map(|text| (*text).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".to_owned());
        Err(EngineFault::new_err(format!(
            "native engine fault: {message}"
        )))
    })
}

pub(crate) fn invalid(message: impl Into<String>) -> PyErr {
    PyValueError::new_err(message.into())
}

fn rank(value: u8) -> PyResult<usize> {
    let rank = usize::from(value);
    if rank < RANKS {
        Ok(rank)
    } else {
        Err(invalid(format!("no rank has value {value}")))
    }
}

/// The rank of a hand's item: a `Card` (a tuple whose first item is its rank) or a bare rank.
fn rank_of_item(item: &Bound<'_, PyAny>) -> PyResult<usize> {
    let value: u8 = match item.cast::<PyTuple>() {
        Ok(card) => card.get_item(0)?.extract()?,
        Err(_) => item.extract()?,
    };
    rank(value)
}

fn hand_counts(hand: &Bound<'_, PyAny>) -> PyResult<Counts> {
    let mut counts = [0u8; RANKS];
    let mut add = |item: &Bound<'_, PyAny>| -> PyResult<()> {
        let count = &mut counts[rank_of_item(item)?];
        *count = count.saturating_add(1);
        Ok(())
    };
    if let Ok(items) = hand.cast::<PyTuple>() {
        for item in items.iter() {
            add(&item)?;
        }
    } else {
        for item in hand.try_iter()? {
            add(&item?)?;
        }
    }
    Ok(counts)
}

fn card_ids(cards: &[u8], variant: &Variant) -> PyResult<Vec<u8>> {
    match cards
        .iter()
        .find(|&&card| usize::from(card) >= variant.deck_size())
    {
        Some(card) => Err(invalid(format!(
            "no card of the {} deck has id {card}",
            variant.name
        ))),
        None => Ok(cards.to_vec()),
    }
}

/// A play as the tuple `(kind, main rank, size, key)`.
fn combo_tuple(combo: &Combo) -> (u8, u8, u8, u64) {
    (combo.kind as u8, combo.main, combo.size, combo.key)
}

/// Hashes a play's key with one multiplication: keys are distinct small integers, not hostile input.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0 ^ u64::from(byte)).wrapping_mul(0x0100_0000_01B3);
        }
    }

    fn write_u64(&mut self, key: u64) {
        self.0 = (key ^ key >> 29).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// The Python value of every play listed so far, by key: a few tens of thousands at most.
type Plays = HashMap<u64, Py<PyAny>, BuildHasherDefault<KeyHasher>>;

/// A protobuf varint.
fn write_varint(out: &mut Vec<u8>, mut value: usize) {
    while value > 0x7F {
        out.push((value & 0x7F) as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// One variant's rules: built once per `Variant` by `dizhu.rules`.
#[pyclass(frozen, module = "dizhu._engine")]
pub struct Rules {
    pub(crate) variant: Variant,
    plays: Mutex<Plays>,
    /// The encoded play of every key `legal_moves_message` wrote so far.
    entries: Mutex<HashMap<u64, Vec<u8>, BuildHasherDefault<KeyHasher>>>,
}

#[pymethods]
impl Rules {
    #[new]
    #[allow(clippy::too_many_arguments)]
    fn new(
        name: String,
        players: usize,
        decks: u8,
        hand_size: usize,
        kitty_size: usize,
        kinds: u16,
        max_bomb_size: u8,
        min_doubling_bomb_size: u8,
    ) -> PyResult<Rules> {
        if !(2..=8).contains(&players) || !(1..=2).contains(&decks) || max_bomb_size > MAX_OF_A_RANK
        {
            return Err(invalid(
                "the native engine plays 2-8 players, one or two decks, bombs of at most 8 cards",
            ));
        }
        if players * hand_size + kitty_size != 54 * usize::from(decks) {
            return Err(invalid("the hands and the kitty must be exactly the deck"));
        }
        let variant = Variant {
            name,
            players,
            decks,
            hand_size,
            kitty_size,
            kinds,
            max_bomb_size,
            min_doubling_bomb_size,
        };
        Ok(Rules {
            variant,
            plays: Mutex::new(Plays::default()),
            entries: Mutex::new(HashMap::default()),
        })
    }

    /// The one reading of these ranks: `(kind, main rank)`, or why there is none (a `str`).
    fn read<'py>(&self, py: Python<'py>, ranks: &[u8]) -> PyResult<Bound<'py, PyAny>> {
        guard(|| {
            let mut counts = [0u8; RANKS];
            for &value in ranks {
                let count = &mut counts[rank(value)?];
                *count = count.saturating_add(1);
            }
            Ok(match crate::rules::read(&counts, &self.variant) {
                Ok(combo) => (combo.kind as u8, combo.main).into_pyobject(py)?.into_any(),
                Err(reason) => PyString::new(py, &reason).into_any(),
            })
        })
    }

    /// Every play `hand` (cards or ranks) can make on `to_beat` (a `Combination`, or None when
    /// leading), as the Python values `play_of_key(key)` makes of their keys (rank counts in four
    /// bits a rank, bits 0-59, and the kind in bits 60-63); each is made once and kept.
    #[pyo3(signature = (hand, to_beat, play_of_key))]
    fn legal_moves<'py>(
        &self,
        py: Python<'py>,
        hand: &Bound<'py, PyAny>,
        to_beat: Option<&Bound<'py, PyAny>>,
        play_of_key: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        guard(|| {
            let counts = hand_counts(hand)?;
            let to_beat = to_beat.map(combo_of).transpose()?;
            let moves = legal_moves(&counts, to_beat.as_ref(), &self.variant);
            let mut plays = self
                .plays
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            let mut listed = Vec::with_capacity(moves.len());
            for combo in &moves {
                let key = combo.key | u64::from(combo.kind as u8) << 60;
                let play = match plays.get(&key) {
                    Some(play) => play.clone_ref(py),
                    None => {
                        let play = play_of_key.call1((key,))?.unbind();
                        plays.insert(key, play.clone_ref(py));
                        play
                    }
                };
                listed.push(play);
            }
            PyList::new(py, listed)
        })
    }

    /// Every play `hand` can make on `to_beat`, written as one protobuf message: for each play
    /// a length-delimited field 1 holding `entry_of_key(key)` (the play's own field, cached by
    /// key) and then, when `card_ids` (the exact hand, ascending) is not empty, the play's cards
    /// as `card_entries[id]`: for each rank in ascending order its lowest ids, every first-deck
    /// card (id below 54) before every second-deck one; `tail` ends the message. Returns the bytes
    /// and the number of plays, so that a caller answers without a Python value per play.
    #[pyo3(signature = (hand, to_beat, card_ids, card_entries, entry_of_key, tail))]
    #[allow(clippy::too_many_arguments)]
    fn legal_moves_message<'py>(
        &self,
        py: Python<'py>,
        hand: &Bound<'py, PyAny>,
        to_beat: Option<&Bound<'py, PyAny>>,
        card_ids: Vec<u8>,
        card_entries: Vec<Vec<u8>>,
        entry_of_key: &Bound<'py, PyAny>,
        tail: &[u8],
    ) -> PyResult<(Bound<'py, PyBytes>, usize)> {
        guard(|| {
            let counts = hand_counts(hand)?;
            let to_beat = to_beat.map(combo_of).transpose()?;
            let mut by_rank: Vec<Vec<u8>> = vec![Vec::new(); RANKS];
            for &id in &card_ids {
                let entry_rank = if usize::from(id) % 54 >= 52 {
                    usize::from(id) % 54 - 52 + 13
                } else {
                    usize::from(id) % 54 / 4
                };
                if card_entries.get(usize::from(id)).is_none() {
                    return Err(invalid(format!("no card entry for id {id}")));
                }
                by_rank[entry_rank].push(id);
            }
            let moves = legal_moves(&counts, to_beat.as_ref(), &self.variant);
            let mut entries = self
                .entries
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            let mut out = Vec::with_capacity(moves.len() * 64 + tail.len());
            let mut body = Vec::with_capacity(256);
            let mut second = Vec::with_capacity(128);
            for combo in &moves {
                let key = combo.key | u64::from(combo.kind as u8) << 60;
                body.clear();
                match entries.get(&key) {
                    Some(entry) => body.extend_from_slice(entry),
                    None => {
                        let entry: Vec<u8> = entry_of_key.call1((key,))?.extract()?;
                        body.extend_from_slice(&entry);
                        entries.insert(key, entry);
                    }
                }
                if !card_ids.is_empty() {
                    second.clear();
                    for (rank, ids) in by_rank.iter().enumerate() {
                        let count = usize::try_from(combo.key >> (4 * rank) & 0xF).unwrap_or(0);
                        if count > ids.len() {
                            return Err(invalid("a play holds more cards than the hand"));
                        }
                        for &id in &ids[..count] {
                            let entry = &card_entries[usize::from(id)];
                            if id < 54 {
                                body.extend_from_slice(entry);
                            } else {
                                second.extend_from_slice(entry);
                            }
                        }
                    }
                    body.extend_from_slice(&second);
                }
                out.push(0x0A);
                write_varint(&mut out, body.len());
                out.extend_from_slice(&body);
            }
            out.extend_from_slice(tail);
            Ok((PyBytes::new(py, &out), moves.len()))
        })
    }

    /// Steps 3 and 4 of docs/deal.md: the shuffled card ids and the face-up card's position.
    fn shuffle(&self, seed: &[u8]) -> PyResult<(Vec<u8>, usize)> {
        guard(|| Ok(shuffle(seed, &self.variant)))
    }

    /// Plays `rounds` random rounds inside the engine, without the interpreter's lock:
    /// `(rounds, actions, thrown in, landlord wins, landlord balance)`.
    #[pyo3(signature = (seed, rounds, spring=false))]
    fn random_rounds(
        &self,
        py: Python<'_>,
        seed: u64,
        rounds: u64,
        spring: bool,
    ) -> PyResult<(u64, u64, u64, u64, i64)> {
        let variant = self.variant.clone();
        let totals =
            py.detach(move || guard(|| Ok(random_rounds(&variant, seed, rounds, spring))))?;
        Ok((
            totals.rounds,
            totals.actions,
            totals.thrown_in,
            totals.landlord_wins,
            totals.landlord_balance,
        ))
    }

    /// A round of these rules from dealt hands and kitty (card ids), `first` bidding first.
    #[pyo3(signature = (hands, kitty, first, spring=false))]
    fn start_round(
        &self,
        hands: Vec<Vec<u8>>,
        kitty: Vec<u8>,
        first: usize,
        spring: bool,
    ) -> PyResult<NativeRound> {
        let variant = &self.variant;
        if hands.len() != variant.players || first >= variant.players {
            return Err(invalid(format!(
                "{} deals {} hands",
                variant.name, variant.players
            )));
        }
        let hands = hands
            .iter()
            .map(|hand| card_ids(hand, variant))
            .collect::<PyResult<Vec<_>>>()?;
        let kitty = card_ids(&kitty, variant)?;
        Ok(NativeRound {
            round: Round::new(variant.clone(), hands, kitty, first, spring),
        })
    }
}

/// A round played inside the engine, for the differential tests of the state machine.
#[pyclass(module = "dizhu._engine")]
pub struct NativeRound {
    round: Round,
}

type EventTuple = (&'static str, i64, i64);

fn event_tuple(event: &Event) -> EventTuple {
    match *event {
        Event::BidMade { seat, amount } => ("bid_made", seat as i64, i64::from(amount)),
        Event::ThrownIn => ("thrown_in", -1, 0),
        Event::LandlordChosen { seat, bid } => ("landlord_chosen", seat as i64, i64::from(bid)),
        Event::CardsPlayed {
            seat,
            play,
            doubled,
        } => (
            "cards_played",
            seat as i64,
            play.map_or(0, |_| 1 + i64::from(doubled)),
        ),
        Event::TrickClosed { leader } => ("trick_closed", leader as i64, 0),
        Event::RoundFinished { seat, landlord_won } => {
            ("round_finished", seat as i64, i64::from(landlord_won))
        }
    }
}

type Answer = (Option<&'static str>, Vec<EventTuple>);

fn answer(outcome: Result<Vec<Event>, &'static str>) -> Answer {
    match outcome {
        Ok(events) => (None, events.iter().map(event_tuple).collect()),
        Err(reason) => (Some(reason), Vec::new()),
    }
}

type StateTuple = (
    &'static str,
    usize,
    Vec<Vec<u8>>,
    u8,
    Option<usize>,
    usize,
    Option<usize>,
    Option<(u8, u8, u8, u64)>,
    Option<usize>,
    u32,
    Vec<u32>,
);
type SettlementTuple = (i64, Vec<i64>, Option<usize>, Option<bool>, u32, bool);

#[pymethods]
impl NativeRound {
    /// A bid (0 passes): `(None, events as (name, seat, value) tuples)`, or `(the refusal's reason, [])`.
    fn bid(&mut self, seat: i64, amount: i64) -> PyResult<Answer> {
        guard(|| Ok(answer(self.round.bid(seat, amount))))
    }

    /// A play of these card ids (none passes), answered as `bid`.
    fn play(&mut self, seat: i64, cards: Vec<u8>) -> PyResult<Answer> {
        guard(|| Ok(answer(self.round.play(seat, &cards))))
    }

    fn legal_bids(&self) -> Vec<u8> {
        self.round.legal_bids()
    }

    /// The legal plays as `(kind, main rank, size, key)` tuples.
    fn legal_plays(&self) -> PyResult<Vec<(u8, u8, u8, u64)>> {
        guard(|| Ok(self.round.legal_plays().iter().map(combo_tuple).collect()))
    }

    /// `(phase, turn, hands, bid, bidder, passes, landlord, last play, last player, doublings, plays made)`.
    fn state(&self) -> StateTuple {
        let r = &self.round;
        (
            r.phase.value(),
            r.turn,
            r.hands.clone(),
            r.bid,
            r.bidder,
            r.passes,
            r.landlord,
            r.last_play.as_ref().map(combo_tuple),
            r.last_player,
            r.doublings,
            r.plays_made.clone(),
        )
    }

    /// `(stake, deltas, landlord, landlord won, doublings, spring)`, or None while the round is on.
    fn settle(&self) -> Option<SettlementTuple> {
        self.round.settle().map(
            |Settlement {
                 stake,
                 deltas,
                 landlord,
                 landlord_won,
                 doublings,
                 spring,
             }| { (stake, deltas, landlord, landlord_won, doublings, spring) },
        )
    }
}

/// A play given as a tuple whose first items are its kind, main rank and size (a `Combination`).
fn combo_of(play: &Bound<'_, PyAny>) -> PyResult<Combo> {
    let (kind, main, size): (u8, u8, u8) = {
        let items = play.cast::<PyTuple>()?;
        (
            items.get_item(0)?.extract()?,
            items.get_item(1)?.extract()?,
            items.get_item(2)?.extract()?,
        )
    };
    let kind =
        Kind::from_number(kind).ok_or_else(|| invalid(format!("no combination kind {kind}")))?;
    Ok(Combo {
        kind,
        main: rank(main)? as u8,
        size,
        key: 0,
    })
}

/// Whether `play` beats `to_beat`, each a `Combination` (or a tuple of its kind, main rank and size).
#[pyfunction]
fn beats(play: &Bound<'_, PyAny>, to_beat: &Bound<'_, PyAny>) -> PyResult<bool> {
    guard(|| Ok(crate::rules::beats(&combo_of(play)?, &combo_of(to_beat)?)))
}

/// Panics inside the engine on purpose: the tests check that it reaches Python as an `EngineFault`.
#[pyfunction]
fn panic_for_testing(message: &str) -> PyResult<()> {
    guard(|| panic!("{message}"))
}

#[pymodule(name = "_engine")]
fn engine_module(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add("EngineFault", module.py().get_type::<EngineFault>())?;
    module.add("VERSION", env!("CARGO_PKG_VERSION"))?;
    module.add_class::<Rules>()?;
    module.add_class::<NativeRound>()?;
    module.add_class::<crate::python_tables::NativeTables>()?;
    module.add_function(wrap_pyfunction!(beats, module)?)?;
    module.add_function(wrap_pyfunction!(panic_for_testing, module)?)?;
    Ok(())
}
