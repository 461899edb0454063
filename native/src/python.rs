//! The Python module `dizhu._engine`: the bindings `dizhu.rules` calls through `dizhu.engine`.
//!
//! Every entry point checks its input (ranks, card ids, kinds, sizes) before the rules see it
//! and runs under `guard`, so that a panic never unwinds into the interpreter: it becomes an
//! `EngineFault` (a `RuntimeError`), which the referee reports like any other internal error.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, TryLockError};

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use pyo3::types::{PyBytes, PyInt, PyList, PyString, PyTuple};

use crate::deal::shuffle;
use crate::moves::{generate, Sink, PLAYS};
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

/// The rank of a hand's item, a `Card` (a tuple whose first item is its rank) or a bare rank,
/// and whether it can be remembered by the item's identity: a tuple holding an `int`, or an
/// `int`, is immutable, so its rank is too.
fn rank_of_item(item: &Bound<'_, PyAny>) -> PyResult<(usize, bool)> {
    let (value, immutable) = match item.cast::<PyTuple>() {
        Ok(card) => {
            let value = card.get_borrowed_item(0)?;
            (value.extract()?, value.is_instance_of::<PyInt>())
        }
        Err(_) => (item.extract()?, item.is_instance_of::<PyInt>()),
    };
    Ok((rank(value)?, immutable))
}

/// The rank of every card read so far, by the card object's address: reading a `Card`'s rank
/// through the C API costs several calls, finding it here none. The cards are held, so that
/// an address stays theirs; hands are made of one deck's cards, so a few hundred suffice.
struct RankCache {
    /// Open addressing by address; an empty slot has address 0.
    slots: Box<[(usize, u8); RankCache::SLOTS]>,
    held: Vec<Py<PyAny>>,
}

impl RankCache {
    const SLOTS: usize = 512;
    /// Half the slots at most, so that a probe ends soon; then the cache starts again.
    const MOST_HELD: usize = RankCache::SLOTS / 2;

    fn new() -> Self {
        RankCache {
            slots: Box::new([(0, 0); RankCache::SLOTS]),
            held: Vec::new(),
        }
    }

    /// Fibonacci hashing: the product's top bits depend on every bit of the address.
    fn slot_of(address: usize) -> usize {
        let product = (address as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (product >> (64 - RankCache::SLOTS.trailing_zeros())) as usize
    }

    fn find(&self, address: usize) -> Option<usize> {
        let mut slot = RankCache::slot_of(address);
        loop {
            match self.slots[slot] {
                (0, _) => return None,
                (held, rank) if held == address => return Some(usize::from(rank)),
                _ => slot = (slot + 1) % RankCache::SLOTS,
            }
        }
    }

    fn insert(&mut self, item: &Bound<'_, PyAny>, rank: usize) {
        if self.held.len() >= RankCache::MOST_HELD {
            return;
        }
        let address = item.as_ptr() as usize;
        let mut slot = RankCache::slot_of(address);
        while self.slots[slot].0 != 0 {
            slot = (slot + 1) % RankCache::SLOTS;
        }
        self.slots[slot] = (address, rank as u8);
        self.held.push(item.clone().unbind());
    }

    /// Empties a full cache, handing back the cards it held (to be released outside its lock).
    fn take_if_full(&mut self) -> Vec<Py<PyAny>> {
        if self.held.len() < RankCache::MOST_HELD {
            return Vec::new();
        }
        self.slots.fill((0, 0));
        std::mem::take(&mut self.held)
    }
}

/// Adds the rank of each item of `hand` to `counts`, through `cache` where it is given.
fn count_items(
    hand: &Bound<'_, PyAny>,
    mut cache: Option<&mut RankCache>,
    counts: &mut Counts,
) -> PyResult<()> {
    let mut add = |item: &Bound<'_, PyAny>| -> PyResult<()> {
        let known = cache
            .as_deref()
            .and_then(|cache| cache.find(item.as_ptr() as usize));
        let rank = match known {
            Some(rank) => rank,
            None => {
                let (rank, immutable) = rank_of_item(item)?;
                if let (Some(cache), true) = (cache.as_deref_mut(), immutable) {
                    cache.insert(item, rank);
                }
                rank
            }
        };
        counts[rank] = counts[rank].saturating_add(1);
        Ok(())
    };
    // A tuple's items cannot change while it is read, so they are read without a reference
    // count each; a list is read as the tuple of its items.
    if let Ok(items) = hand.cast::<PyTuple>() {
        items.iter_borrowed().try_for_each(|item| add(&item))
    } else if let Ok(items) = hand.cast::<PyList>() {
        items
            .to_tuple()
            .iter_borrowed()
            .try_for_each(|item| add(&item))
    } else {
        hand.try_iter()?.try_for_each(|item| add(&item?))
    }
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

/// A play's key as Python sees it: rank counts in bits 0-59, the kind in bits 60-63.
fn python_key(play: &Combo) -> u64 {
    play.key | u64::from(play.kind as u8) << 60
}

/// A value per distinct play (`PLAYS` slots, by the play's index), made the first time the play
/// is listed and kept: finding it costs an index, not a hash.
struct PerPlay<T>(Vec<Option<T>>);

impl<T> PerPlay<T> {
    const fn new() -> Self {
        PerPlay(Vec::new())
    }

    /// The value of the play `index`, made by `make` if it has none yet.
    fn get_or_make(&mut self, index: usize, make: impl FnOnce() -> PyResult<T>) -> PyResult<&T> {
        if self.0.is_empty() {
            self.0.resize_with(PLAYS, || None);
        }
        let slot = self
            .0
            .get_mut(index)
            .ok_or_else(|| invalid(format!("no play has index {index}")))?;
        if slot.is_none() {
            *slot = Some(make()?);
        }
        slot.as_ref()
            .ok_or_else(|| invalid("a play's value was not kept"))
    }
}

/// The state `legal_moves` keeps between calls.
struct Listings {
    plays: PerPlay<Py<PyAny>>,
    /// The list being built: kept so that its buffer is allocated once.
    listed: Vec<Py<PyAny>>,
}

/// The sink of `legal_moves`: each play's Python value, made by `play_of_key` the first time.
struct Listing<'a, 'py> {
    play_of_key: &'a Bound<'py, PyAny>,
    listings: &'a mut Listings,
    failure: Option<PyErr>,
}

impl Listing<'_, '_> {
    /// A play listed for the first time since these rules were made (or one past a failure).
    #[cold]
    fn push_new(&mut self, play: Combo, index: usize) {
        if self.failure.is_some() {
            return;
        }
        let py = self.play_of_key.py();
        let made = self.listings.plays.get_or_make(index, || {
            Ok(self.play_of_key.call1((python_key(&play),))?.unbind())
        });
        match made {
            Ok(value) => {
                let value = value.clone_ref(py);
                self.listings.listed.push(value);
            }
            Err(failure) => self.failure = Some(failure),
        }
    }
}

impl Sink for Listing<'_, '_> {
    /// Nearly every play has its value already: finding it is an index (after a failure the
    /// list is thrown away, so listing more does no harm).
    #[inline]
    fn push(&mut self, play: Combo, index: usize) {
        match self.listings.plays.0.get(index) {
            Some(Some(value)) => {
                let value = value.clone_ref(self.play_of_key.py());
                self.listings.listed.push(value);
            }
            _ => self.push_new(play, index),
        }
    }
}

/// A protobuf varint.
fn write_varint(out: &mut Vec<u8>, mut value: usize) {
    while value > 0x7F {
        out.push((value & 0x7F) as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// The encoded cards of one rank of the hand, for any number of them: a play holding `n`
/// cards of the rank lists the rank's `n` lowest ids, which are its first-deck cards (ids below
/// 54) before its second-deck ones; the message lists every first-deck card of a play before
/// any second-deck card.
#[derive(Default)]
struct RankCards {
    /// The entries of the rank's first-deck cards, then of its second-deck cards, lowest id first.
    first: Vec<u8>,
    second: Vec<u8>,
    /// `first_ends[n]`: where the first `n` first-deck entries end in `first`; the same for `second`.
    first_ends: Vec<usize>,
    second_ends: Vec<usize>,
}

impl RankCards {
    fn add(&mut self, id: u8, entry: &[u8]) {
        let (bytes, ends) = if id < 54 {
            (&mut self.first, &mut self.first_ends)
        } else {
            (&mut self.second, &mut self.second_ends)
        };
        if ends.is_empty() {
            ends.push(0);
        }
        bytes.extend_from_slice(entry);
        ends.push(bytes.len());
    }

    fn held(&self) -> usize {
        self.first_ends.len().saturating_sub(1) + self.second_ends.len().saturating_sub(1)
    }

    /// The entries of `count` of the rank's cards: the first deck's, then the second deck's.
    fn parts(&self, count: usize) -> (&[u8], &[u8]) {
        let firsts = count.min(self.first_ends.len().saturating_sub(1));
        let first = &self.first[..self.first_ends.get(firsts).copied().unwrap_or(0)];
        let seconds = count - firsts;
        let second = &self.second[..self.second_ends.get(seconds).copied().unwrap_or(0)];
        (first, second)
    }
}

/// The sink of `legal_moves_message`: each play as a length-delimited field 1 of the message.
struct Message<'a, 'py> {
    entry_of_key: &'a Bound<'py, PyAny>,
    entries: &'a mut PerPlay<Vec<u8>>,
    /// The hand's cards by rank, when the plays list their cards.
    cards: Option<&'a [RankCards; RANKS]>,
    out: Vec<u8>,
    plays: usize,
    failure: Option<PyErr>,
}

impl Message<'_, '_> {
    fn write(&mut self, play: &Combo, index: usize) -> PyResult<()> {
        let entry = self.entries.get_or_make(index, || {
            self.entry_of_key.call1((python_key(play),))?.extract()
        })?;
        // The play's ranks, lowest first, with their cards' entries: a play holds a few ranks.
        let mut parts = [(&[][..], &[][..]); RANKS];
        let mut held = 0;
        let mut length = entry.len();
        if let Some(cards) = self.cards {
            let mut nibbles = play.key;
            while nibbles != 0 {
                let rank = (nibbles.trailing_zeros() / 4) as usize;
                let count = (nibbles >> (4 * rank) & 0xF) as usize;
                nibbles &= !(0xF << (4 * rank));
                let rank_cards = cards
                    .get(rank)
                    .filter(|rank_cards| count <= rank_cards.held())
                    .ok_or_else(|| invalid("a play holds more cards than the hand"))?;
                let part = rank_cards.parts(count);
                length += part.0.len() + part.1.len();
                parts[held] = part;
                held += 1;
            }
        }
        let parts = &parts[..held];
        self.out.push(0x0A);
        write_varint(&mut self.out, length);
        self.out.extend_from_slice(entry);
        parts
            .iter()
            .for_each(|(first, _)| self.out.extend_from_slice(first));
        parts
            .iter()
            .for_each(|(_, second)| self.out.extend_from_slice(second));
        self.plays += 1;
        Ok(())
    }
}

impl Sink for Message<'_, '_> {
    fn push(&mut self, play: Combo, index: usize) {
        if self.failure.is_none() {
            if let Err(failure) = self.write(&play, index) {
                self.failure = Some(failure);
            }
        }
    }
}

impl Rules {
    /// How many cards of each rank `hand` (cards or ranks) holds.
    fn hand_counts(&self, hand: &Bound<'_, PyAny>) -> PyResult<Counts> {
        let mut counts = [0u8; RANKS];
        // Reading an item may run Python code (an `__index__`), which may read a hand too: the
        // cache is used only when it is free, never waited for.
        let mut cache = match self.ranks.try_lock() {
            Ok(cache) => cache,
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(TryLockError::WouldBlock) => {
                count_items(hand, None, &mut counts)?;
                return Ok(counts);
            }
        };
        let released = cache.take_if_full();
        let read = count_items(hand, Some(&mut cache), &mut counts);
        // Releasing cards may run Python code too (a finaliser): not while the cache is locked.
        drop(cache);
        drop(released);
        read.map(|()| counts)
    }

    /// The state `legal_moves` keeps, waited for without holding the interpreter.
    fn listings(&self, py: Python<'_>) -> std::sync::MutexGuard<'_, Listings> {
        self.listings
            .lock_py_attached(py)
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// One variant's rules: built once per `Variant` by `dizhu.rules`.
#[pyclass(frozen, module = "dizhu._engine")]
pub struct Rules {
    pub(crate) variant: Variant,
    ranks: Mutex<RankCache>,
    listings: Mutex<Listings>,
    /// The encoded play of every play `legal_moves_message` wrote so far.
    entries: Mutex<PerPlay<Vec<u8>>>,
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
            ranks: Mutex::new(RankCache::new()),
            listings: Mutex::new(Listings {
                plays: PerPlay::new(),
                listed: Vec::new(),
            }),
            entries: Mutex::new(PerPlay::new()),
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
            let counts = self.hand_counts(hand)?;
            let to_beat = to_beat.map(combo_of).transpose()?;
            let mut listings = self.listings(py);
            listings.listed.clear();
            let mut listing = Listing {
                play_of_key,
                listings: &mut listings,
                failure: None,
            };
            generate(&counts, to_beat.as_ref(), &self.variant, &mut listing);
            if let Some(failure) = listing.failure {
                listings.listed.clear();
                return Err(failure);
            }
            PyList::new(py, listings.listed.drain(..))
        })
    }

    /// Every play `hand` can make on `to_beat`, written as one protobuf message: for each play
    /// a length-delimited field 1 holding `entry_of_key(key)` (the play's own field, cached by
    /// key) and then, when `card_ids` (the exact hand) is not empty, the play's cards
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
        mut card_ids: Vec<u8>,
        card_entries: &Bound<'py, PyAny>,
        entry_of_key: &Bound<'py, PyAny>,
        tail: &[u8],
    ) -> PyResult<(Bound<'py, PyBytes>, usize)> {
        guard(|| {
            let counts = self.hand_counts(hand)?;
            let to_beat = to_beat.map(combo_of).transpose()?;
            card_ids.sort_unstable();
            let mut by_rank: [RankCards; RANKS] = Default::default();
            for &id in &card_ids {
                let card = usize::from(id) % 54;
                let card_rank = if card >= 52 { card - 52 + 13 } else { card / 4 };
                let entry = card_entries
                    .get_item(id)
                    .map_err(|_| invalid(format!("no card entry for id {id}")))?;
                by_rank[card_rank].add(id, entry.cast::<PyBytes>()?.as_bytes());
            }
            let mut entries = self
                .entries
                .lock_py_attached(py)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            let mut message = Message {
                entry_of_key,
                entries: &mut entries,
                cards: (!card_ids.is_empty()).then_some(&by_rank),
                out: Vec::with_capacity(8 * 1024),
                plays: 0,
                failure: None,
            };
            generate(&counts, to_beat.as_ref(), &self.variant, &mut message);
            if let Some(failure) = message.failure {
                return Err(failure);
            }
            message.out.extend_from_slice(tail);
            Ok((PyBytes::new(py, &message.out), message.plays))
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
            items.get_borrowed_item(0)?.extract()?,
            items.get_borrowed_item(1)?.extract()?,
            items.get_borrowed_item(2)?.extract()?,
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
pub(crate) fn beats(play: &Bound<'_, PyAny>, to_beat: &Bound<'_, PyAny>) -> PyResult<bool> {
    guard(|| Ok(crate::rules::beats(&combo_of(play)?, &combo_of(to_beat)?)))
}

/// Panics inside the engine on purpose: the tests check that it reaches Python as an `EngineFault`.
#[pyfunction]
pub(crate) fn panic_for_testing(message: &str) -> PyResult<()> {
    guard(|| panic!("{message}"))
}
