//! `dizhu._engine.NativeTables`: the tables of `native/src/tables.rs` for `dizhu.env`, writing
//! straight into the numpy arrays of a `Seen` and of a vector environment's outputs.
//!
//! The arrays are given once, at construction, and checked there: item type, C order,
//! writable, the exact shape of their field, and no two sharing memory. The object keeps
//! each array's buffer (so its memory stays where it is), and `step_all` writes into them
//! with the interpreter's lock released, so that threads of the caller's overlap. `serve`
//! keeps a thread inside the engine, stepping its shard whenever `ShardSignals` ask, so that
//! handing a step over never waits for the interpreter.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use pyo3::buffer::{Element, PyBuffer};
use pyo3::prelude::*;

use crate::douzero::DouZeroLayout;
use crate::python::{guard, invalid, Rules};
use crate::rules::{Counts, RANKS};
use crate::seen::{seen_widths, SeenRows};
use crate::tables::{ActionCodes, Config, Outputs, Reward, Tables};

/// One numpy array written in place.
struct Column<T: Element> {
    buffer: PyBuffer<T>,
    len: usize,
}

impl<T: Element> Column<T> {
    fn new(name: &str, array: &Bound<'_, PyAny>, shape: &[usize]) -> PyResult<Column<T>> {
        let buffer =
            PyBuffer::<T>::get(array).map_err(|error| invalid(format!("{name}: {error}")))?;
        if buffer.readonly() || !buffer.is_c_contiguous() {
            return Err(invalid(format!(
                "{name} must be a writable C-ordered array"
            )));
        }
        if buffer.shape() != shape {
            return Err(invalid(format!(
                "{name} has shape {:?}, expected {shape:?}",
                buffer.shape()
            )));
        }
        Ok(Column {
            len: buffer.item_count(),
            buffer,
        })
    }

    fn span(&self) -> (usize, usize) {
        let start = self.buffer.buf_ptr() as usize;
        (start, start + self.buffer.len_bytes())
    }

    fn slice(&mut self) -> &mut [T] {
        // SAFETY: the buffer was checked at construction to be writable, C-contiguous, of items
        // of type T (PyBuffer::get checks the format, size and alignment) and of `len` items,
        // with at least one row, so never null; the exporter keeps the memory in place while
        // `buffer` holds it. No two columns overlap (checked by `check_apart`), and the slice
        // borrows `self` mutably, so no other Rust reference to this memory exists meanwhile.
        unsafe { std::slice::from_raw_parts_mut(self.buffer.buf_ptr().cast::<T>(), self.len) }
    }
}

/// The arrays of a `Seen`, in its field order.
struct SeenColumns {
    phase: Column<i8>,
    seat: Column<i16>,
    hands: Column<i8>,
    hand_sizes: Column<i16>,
    dealer: Column<i16>,
    face_up_rank: Column<i16>,
    face_up_seat: Column<i16>,
    bid: Column<i16>,
    bidder: Column<i16>,
    landlord: Column<i16>,
    calls: Column<i16>,
    kitty: Column<i8>,
    played: Column<i8>,
    last_moves: Column<i8>,
    history: Column<i8>,
    to_beat: Column<i8>,
    to_beat_kind: Column<i16>,
    last_player: Column<i16>,
    doublings: Column<i16>,
}

const SEEN_FIELDS: [&str; 19] = [
    "phase",
    "seat",
    "hands",
    "hand_sizes",
    "dealer",
    "face_up_rank",
    "face_up_seat",
    "bid",
    "bidder",
    "landlord",
    "calls",
    "kitty",
    "played",
    "last_moves",
    "history",
    "to_beat",
    "to_beat_kind",
    "last_player",
    "doublings",
];

impl SeenColumns {
    fn new(arrays: &[Bound<'_, PyAny>], rows: usize, players: usize) -> PyResult<SeenColumns> {
        if arrays.len() != SEEN_FIELDS.len() {
            return Err(invalid(format!(
                "a Seen has {} arrays, not {}",
                SEEN_FIELDS.len(),
                arrays.len()
            )));
        }
        let widths = seen_widths(players);
        let shape = |field: usize| -> Vec<usize> {
            match widths[field] {
                1 => vec![rows],
                width if width == players => vec![rows, players],
                width if width % RANKS == 0 && width > RANKS => vec![rows, width / RANKS, RANKS],
                width => vec![rows, width],
            }
        };
        fn column<T: Element>(
            arrays: &[Bound<'_, PyAny>],
            field: usize,
            shape: &[usize],
        ) -> PyResult<Column<T>> {
            Column::new(SEEN_FIELDS[field], &arrays[field], shape)
        }
        Ok(SeenColumns {
            phase: column(arrays, 0, &shape(0))?,
            seat: column(arrays, 1, &shape(1))?,
            hands: column(arrays, 2, &shape(2))?,
            hand_sizes: column(arrays, 3, &shape(3))?,
            dealer: column(arrays, 4, &shape(4))?,
            face_up_rank: column(arrays, 5, &shape(5))?,
            face_up_seat: column(arrays, 6, &shape(6))?,
            bid: column(arrays, 7, &shape(7))?,
            bidder: column(arrays, 8, &shape(8))?,
            landlord: column(arrays, 9, &shape(9))?,
            calls: column(arrays, 10, &shape(10))?,
            kitty: column(arrays, 11, &shape(11))?,
            played: column(arrays, 12, &shape(12))?,
            last_moves: column(arrays, 13, &shape(13))?,
            history: column(arrays, 14, &shape(14))?,
            to_beat: column(arrays, 15, &shape(15))?,
            to_beat_kind: column(arrays, 16, &shape(16))?,
            last_player: column(arrays, 17, &shape(17))?,
            doublings: column(arrays, 18, &shape(18))?,
        })
    }

    fn spans(&self) -> Vec<(usize, usize)> {
        vec![
            self.phase.span(),
            self.seat.span(),
            self.hands.span(),
            self.hand_sizes.span(),
            self.dealer.span(),
            self.face_up_rank.span(),
            self.face_up_seat.span(),
            self.bid.span(),
            self.bidder.span(),
            self.landlord.span(),
            self.calls.span(),
            self.kitty.span(),
            self.played.span(),
            self.last_moves.span(),
            self.history.span(),
            self.to_beat.span(),
            self.to_beat_kind.span(),
            self.last_player.span(),
            self.doublings.span(),
        ]
    }

    fn rows(&mut self) -> SeenRows<'_> {
        SeenRows {
            phase: self.phase.slice(),
            seat: self.seat.slice(),
            hands: self.hands.slice(),
            hand_sizes: self.hand_sizes.slice(),
            dealer: self.dealer.slice(),
            face_up_rank: self.face_up_rank.slice(),
            face_up_seat: self.face_up_seat.slice(),
            bid: self.bid.slice(),
            bidder: self.bidder.slice(),
            landlord: self.landlord.slice(),
            calls: self.calls.slice(),
            kitty: self.kitty.slice(),
            played: self.played.slice(),
            last_moves: self.last_moves.slice(),
            history: self.history.slice(),
            to_beat: self.to_beat.slice(),
            to_beat_kind: self.to_beat_kind.slice(),
            last_player: self.last_player.slice(),
            doublings: self.doublings.slice(),
        }
    }
}

/// A vector environment's outputs: masks, seats to act, rewards, terminated flags (as bytes).
struct OutputColumns {
    mask: Column<i8>,
    legal: Column<i32>,
    legal_count: Column<i32>,
    seat: Column<i8>,
    rewards: Column<f32>,
    terminated: Column<u8>,
    observation: Option<Column<i8>>,
}

impl OutputColumns {
    fn rows(&mut self) -> Outputs<'_> {
        Outputs {
            mask: self.mask.slice(),
            legal: self.legal.slice(),
            legal_count: self.legal_count.slice(),
            seat: self.seat.slice(),
            rewards: self.rewards.slice(),
            terminated: self.terminated.slice(),
            observation: self.observation.as_mut().map(Column::slice),
        }
    }
}

/// Refuses columns that share memory: each is written through a slice of its own.
fn check_apart(mut spans: Vec<(usize, usize)>) -> PyResult<()> {
    spans.sort_unstable();
    if spans.windows(2).any(|pair| pair[1].0 < pair[0].1) {
        return Err(invalid("two of the arrays share memory"));
    }
    Ok(())
}

/// Copies an input array of `NativeTables.serve` into `into` (kept from step to step), while
/// its step runs.
fn read_between_steps<T: Element + Copy>(buffer: &PyBuffer<T>, into: &mut Vec<T>) {
    into.clear();
    if buffer.item_count() == 0 {
        return; // an empty buffer's pointer may be null, which no slice may hold
    }
    // SAFETY: `serve` checked the buffer to be C-contiguous, and PyBuffer::get checked its item
    // type, size and alignment; the exporter keeps the memory in place while `buffer` holds it.
    // Its owner writes it only between a step's `collect` and the next `ask` (`serve`'s
    // contract), and both go through the signals' mutex, so no write is under way while this
    // copy is made; the slice lives only for the copy.
    into.extend_from_slice(unsafe {
        std::slice::from_raw_parts(buffer.buf_ptr().cast::<T>(), buffer.item_count())
    });
}

/// What the shards of a vector environment say to the threads that serve them and back: each
/// shard's "step now", and the steps done, in the order they ended.
#[derive(Default)]
struct Signals {
    /// A step asked for and not yet begun, per shard.
    asked: Vec<bool>,
    /// A step asked for and not yet collected, per shard.
    busy: Vec<bool>,
    done: VecDeque<(usize, Option<PyErr>)>,
    closed: bool,
}

/// The signals between a vector environment's thread and the threads serving its shards
/// (`NativeTables.serve`): `ask(shard)` starts a shard's step, `collect()` waits for the next
/// step done, `close()` ends every `serve`. Waits release the interpreter's lock.
#[pyclass(module = "dizhu._engine", frozen)]
pub struct ShardSignals {
    state: Mutex<Signals>,
    changed: Condvar,
}

impl ShardSignals {
    fn lock(&self) -> MutexGuard<'_, Signals> {
        // A panic while the lock is held can only be `guard`'s to report: carry on with the state.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn check(&self, shard: usize) -> PyResult<()> {
        if shard < self.lock().asked.len() {
            Ok(())
        } else {
            Err(invalid(format!("no shard {shard}")))
        }
    }

    /// Waits until `shard` is asked for a step (true) or the signals close (false).
    fn next_step(&self, shard: usize) -> bool {
        let mut state = self.lock();
        loop {
            if state.closed {
                return false;
            }
            if state.asked[shard] {
                state.asked[shard] = false;
                return true;
            }
            state = self
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn done(&self, shard: usize, error: Option<PyErr>) {
        self.lock().done.push_back((shard, error));
        self.changed.notify_all();
    }
}

#[pymethods]
impl ShardSignals {
    #[new]
    fn new(shards: usize) -> ShardSignals {
        ShardSignals {
            state: Mutex::new(Signals {
                asked: vec![false; shards],
                busy: vec![false; shards],
                ..Signals::default()
            }),
            changed: Condvar::new(),
        }
    }

    /// Starts `shard`'s next step.
    fn ask(&self, shard: usize) -> PyResult<()> {
        let mut state = self.lock();
        let busy = state
            .busy
            .get_mut(shard)
            .ok_or_else(|| invalid(format!("no shard {shard}")))?;
        if *busy {
            return Err(invalid(format!(
                "shard {shard}'s step is not collected yet"
            )));
        }
        *busy = true;
        state.asked[shard] = true;
        drop(state);
        self.changed.notify_all();
        Ok(())
    }

    /// Waits for the next step done: its shard, and what the step raised (None: it went well).
    fn collect(&self, py: Python<'_>) -> (usize, Option<PyErr>) {
        py.detach(|| {
            let mut state = self.lock();
            loop {
                if let Some(done) = state.done.pop_front() {
                    state.busy[done.0] = false;
                    return done;
                }
                state = self
                    .changed
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner);
            }
        })
    }

    /// Ends every `serve` of these signals once its current step is done.
    fn close(&self) {
        self.lock().closed = true;
        self.changed.notify_all();
    }
}

/// A batch of the environments' tables over the rows of a `Seen` (see the module docstring).
#[pyclass(module = "dizhu._engine")]
pub struct NativeTables {
    tables: Tables,
    seen: SeenColumns,
    outputs: Option<OutputColumns>,
}

/// The four output arrays: masks, seats, rewards, terminated flags.
type OutputArrays<'py> = (
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
);

type SettlementTuple = (i64, Vec<i64>, Option<usize>, Option<bool>, u32, bool);

#[pymethods]
impl NativeTables {
    /// Tables of `rules` over the arrays of a `Seen` (`seen`, in its field order, one row per
    /// table); `actions` holds the ranks of every action id of the action table. `outputs`,
    /// for `step_all`: the `(tables, actions)` int8 masks, the `(tables, actions)` int32 legal
    /// action ids (the first `legal_count[i]` of row `i`), `(tables,)` int32 `legal_count`,
    /// `(tables,)` int8 seats, `(tables, players)` float32 rewards and `(tables,)` uint8
    /// terminated flags; with them `observation`, `(tables, size)` int8, for the `douzero`
    /// observation of every table's seat to act.
    #[new]
    #[pyo3(signature = (rules, actions, seen, spring, redeal_cap, reward, outputs=None, observation=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        rules: PyRef<'_, Rules>,
        actions: Vec<Vec<u8>>,
        seen: Vec<Bound<'_, PyAny>>,
        spring: bool,
        redeal_cap: u32,
        reward: &str,
        outputs: Option<OutputArrays<'_>>,
        observation: Option<Bound<'_, PyAny>>,
    ) -> PyResult<NativeTables> {
        guard(|| {
            let variant = rules.variant.clone();
            let players = variant.players;
            let reward = Reward::named(reward)
                .ok_or_else(|| invalid(format!("unknown reward {reward:?}")))?;
            let mut counts: Vec<Counts> = Vec::with_capacity(actions.len());
            for ranks in &actions {
                let mut play = [0u8; RANKS];
                for &rank in ranks {
                    let count = play
                        .get_mut(usize::from(rank))
                        .ok_or_else(|| invalid(format!("no rank {rank}")))?;
                    *count = count.saturating_add(1);
                }
                counts.push(play);
            }
            let codes = ActionCodes::new(counts).map_err(invalid)?;
            let rows = match seen.first().map(PyBuffer::<i8>::get) {
                Some(Ok(phase)) if phase.dimensions() == 1 && phase.item_count() > 0 => {
                    phase.item_count()
                }
                _ => return Err(invalid("seen.phase must be a non-empty int8 row per table")),
            };
            let columns = SeenColumns::new(&seen, rows, players)?;
            let mut spans = columns.spans();
            let outputs = match outputs {
                None => None,
                Some((mask, legal, legal_count, seat, rewards, terminated)) => {
                    let columns = OutputColumns {
                        mask: Column::new("action_mask", &mask, &[rows, codes.len()])?,
                        legal: Column::new("legal_actions", &legal, &[rows, codes.len()])?,
                        legal_count: Column::new("legal_count", &legal_count, &[rows])?,
                        seat: Column::new("seat", &seat, &[rows])?,
                        rewards: Column::new("rewards", &rewards, &[rows, players])?,
                        terminated: Column::new("terminated", &terminated, &[rows])?,
                        observation: match &observation {
                            Some(array) => Some(Column::new(
                                "observation",
                                array,
                                &[rows, DouZeroLayout::new(&variant).size],
                            )?),
                            None => None,
                        },
                    };
                    spans.extend([
                        columns.mask.span(),
                        columns.legal.span(),
                        columns.legal_count.span(),
                        columns.seat.span(),
                        columns.rewards.span(),
                        columns.terminated.span(),
                    ]);
                    spans.extend(columns.observation.as_ref().map(Column::span));
                    Some(columns)
                }
            };
            check_apart(spans)?;
            let config = Config {
                variant,
                spring,
                redeal_cap,
                reward,
                codes,
            };
            Ok(NativeTables {
                tables: Tables::new(config, rows),
                seen: columns,
                outputs,
            })
        })
    }

    /// Deals table `row` the round of `seed` (32 bytes) with `dealer` (`Game.start`).
    fn start(&mut self, row: usize, seed: &[u8], dealer: usize) -> PyResult<()> {
        guard(|| {
            self.tables
                .start(row, seed, dealer, &mut self.seen.rows())
                .map_err(invalid)
        })
    }

    /// Plays action `action` at table `row` (an illegal one is replaced); whether it was legal.
    fn step(&mut self, row: usize, action: i64) -> PyResult<bool> {
        guard(|| {
            self.tables
                .step(row, action, &mut self.seen.rows())
                .map_err(invalid)
        })
    }

    /// Steps every table with its action (`actions`, int32 per table), without the interpreter's
    /// lock; a table whose round ends starts the next from its row of `next_seeds` (uint8,
    /// `(tables, 32)`) and `next_dealers` (int32). Then writes every output.
    fn step_all(
        &mut self,
        py: Python<'_>,
        actions: PyBuffer<i32>,
        next_seeds: PyBuffer<u8>,
        next_dealers: PyBuffer<i32>,
    ) -> PyResult<()> {
        let (actions, seeds, dealers) = (
            actions.to_vec(py)?,
            next_seeds.to_vec(py)?,
            next_dealers.to_vec(py)?,
        );
        let NativeTables {
            tables,
            seen,
            outputs,
        } = self;
        let mut out = outputs
            .as_mut()
            .ok_or_else(|| invalid("these tables were made without outputs"))?
            .rows();
        let mut rows = seen.rows();
        py.detach(move || {
            guard(|| {
                tables
                    .step_all(&actions, (&seeds, &dealers), &mut rows, &mut out)
                    .map_err(invalid)
            })
        })
    }

    /// Serves shard `shard` of `signals` until they close: one `step_all` each time the shard is
    /// asked (`ShardSignals.ask`), reading `actions`, `next_seeds` and `next_dealers` (the arrays
    /// `step_all` takes) as they are at that moment, then telling `ShardSignals.collect` it is
    /// done. The interpreter's lock is released from start to end, so a thread of the caller's
    /// that calls this never waits for the interpreter between steps; meanwhile these tables
    /// take no other call. The caller writes those arrays only between a step's `collect` and
    /// the next `ask`.
    fn serve(
        &mut self,
        py: Python<'_>,
        signals: Py<ShardSignals>,
        shard: usize,
        actions: PyBuffer<i32>,
        next_seeds: PyBuffer<u8>,
        next_dealers: PyBuffer<i32>,
    ) -> PyResult<()> {
        let inputs = [
            ("actions", actions.is_c_contiguous()),
            ("next_seeds", next_seeds.is_c_contiguous()),
            ("next_dealers", next_dealers.is_c_contiguous()),
        ];
        if let Some((name, _)) = inputs.iter().find(|(_, contiguous)| !contiguous) {
            return Err(invalid(format!("{name} must be a C-ordered array")));
        }
        let signals = signals.get();
        signals.check(shard)?;
        let NativeTables {
            tables,
            seen,
            outputs,
        } = self;
        let out = outputs
            .as_mut()
            .ok_or_else(|| invalid("these tables were made without outputs"))?;
        let (mut step_actions, mut seeds, mut dealers) = (Vec::new(), Vec::new(), Vec::new());
        py.detach(|| {
            while signals.next_step(shard) {
                let result = guard(|| {
                    read_between_steps(&actions, &mut step_actions);
                    read_between_steps(&next_seeds, &mut seeds);
                    read_between_steps(&next_dealers, &mut dealers);
                    tables
                        .step_all(
                            &step_actions,
                            (&seeds, &dealers),
                            &mut seen.rows(),
                            &mut out.rows(),
                        )
                        .map_err(invalid)
                });
                signals.done(shard, result.err());
            }
        });
        Ok(())
    }

    /// Writes every table's seat to act and mask into the outputs (and the seats into `Seen.seat`).
    fn write_outputs(&mut self) -> PyResult<()> {
        let NativeTables {
            tables,
            seen,
            outputs,
        } = self;
        let out = outputs
            .as_mut()
            .ok_or_else(|| invalid("these tables were made without outputs"))?;
        guard(|| {
            tables
                .write_outputs(&mut seen.rows(), &mut out.rows())
                .map_err(invalid)
        })
    }

    /// Writes the `douzero` observation of table `row` for the viewer in `Seen.seat` into `out`
    /// (an int8 array of the encoding's size).
    fn encode_douzero(&mut self, row: usize, out: &Bound<'_, PyAny>) -> PyResult<()> {
        let size = self.tables.douzero().size;
        let mut written = Column::<i8>::new("out", out, &[size])?;
        check_apart([self.seen.spans(), vec![written.span()]].concat())?;
        self.tables.table(row).map_err(invalid)?;
        let seen = self.seen.rows();
        guard(|| {
            self.tables.douzero().encode(&seen, row, written.slice());
            Ok(())
        })
    }

    /// The legal action ids of table `row`'s seat to act, ascending (empty once over).
    fn legal(&self, row: usize) -> PyResult<Vec<u32>> {
        Ok(self.tables.table(row).map_err(invalid)?.legal().to_vec())
    }

    fn turn(&self, row: usize) -> PyResult<usize> {
        Ok(self.tables.table(row).map_err(invalid)?.turn())
    }

    fn over(&self, row: usize) -> PyResult<bool> {
        Ok(self.tables.table(row).map_err(invalid)?.is_over())
    }

    fn redeals(&self, row: usize) -> PyResult<u32> {
        Ok(self.tables.table(row).map_err(invalid)?.redeals())
    }

    /// Each seat's reward for table `row` (zeros while its round is on).
    fn rewards(&self, row: usize) -> PyResult<Vec<f64>> {
        let table = self.tables.table(row).map_err(invalid)?;
        let config = self.tables.config();
        let players = config.variant.players;
        Ok(table.settlement().map_or_else(
            || vec![0.0; players],
            |settled| config.reward.of(settled, players),
        ))
    }

    /// `(stake, deltas, landlord, landlord won, doublings, spring)` of table `row`, or None while on.
    fn settlement(&self, row: usize) -> PyResult<Option<SettlementTuple>> {
        let table = self.tables.table(row).map_err(invalid)?;
        Ok(table.settlement().map(|s| {
            (
                s.stake,
                s.deltas.clone(),
                s.landlord,
                s.landlord_won,
                s.doublings,
                s.spring,
            )
        }))
    }
}
