//! The training environments' tables (`dizhu.env.game.Game`), played inside the engine: a
//! round each, the published action ids in and out, and what the seats see written move by
//! move into the rows of a `Seen` (`dizhu.env.info`), field for field.
//!
//! The engine knows nothing of the environments' files: the action table comes in as the
//! rank counts of every action id. A table redeals as `Game` does (`derive_seed(seed,
//! "redeal", k)` up to the redeal cap, a round thrown in at the cap is void), replaces an
//! illegal action by the pass when the seat may pass, else by its lowest legal action, and
//! pays the rewards of `dizhu.env.rewards`.

use std::collections::HashMap;

use sha2::{Digest, Sha256};

use crate::deal::{deal, rank_of};
use crate::douzero::DouZeroLayout;
use crate::round::{counts_of, pick_counts, Phase, Round, Settlement, MAX_BID};
use crate::rules::{pack, unpack, Counts, Variant, RANKS};
use crate::seen::{seen_widths, SeenRows, HISTORY_PER_SEAT};

/// The pass: bid 0 in the auction, a pass in a trick.
pub const PASS: u32 = 0;
const FIRST_PLAY: usize = MAX_BID as usize + 1;
/// `Seen.phase` values.
const AUCTION: i8 = 0;
const PLAY: i8 = 1;
const OVER: i8 = 2;
/// No seat, or no call yet, in the seat fields of a `Seen`.
const NONE: i16 = -1;
const DERIVE_LABEL: &[u8] = b"dizhu/derive/v1";

/// `dizhu.rules.derive_seed`: `SHA-256("dizhu/derive/v1" || u8(len(label)) || label || seed || u32be(index))`.
pub fn derive_seed(seed: &[u8], label: &str, index: u32) -> [u8; 32] {
    let length = u8::try_from(label.len()).unwrap_or(u8::MAX);
    Sha256::new()
        .chain_update(DERIVE_LABEL)
        .chain_update([length])
        .chain_update(label.as_bytes())
        .chain_update(seed)
        .chain_update(index.to_be_bytes())
        .finalize()
        .into()
}

/// Something a caller got wrong, or a fault of the engine; said in words.
pub type TableError = String;

/// An action table: the rank counts of every action id, and the id of every play.
#[derive(Clone, Debug)]
pub struct ActionCodes {
    counts: Vec<Counts>,
    ids: HashMap<u64, u32>,
}

impl ActionCodes {
    /// The table whose action `n` is `counts[n]`: the pass and the three bids (all zero), then plays.
    pub fn new(counts: Vec<Counts>) -> Result<ActionCodes, TableError> {
        if counts.len() <= FIRST_PLAY || counts.len() > u32::MAX as usize {
            return Err("an action table holds the pass, three bids and the plays".to_owned());
        }
        if counts[..FIRST_PLAY]
            .iter()
            .any(|bid| bid.iter().any(|&n| n > 0))
        {
            return Err("the pass and the bids hold no cards".to_owned());
        }
        let mut ids = HashMap::with_capacity(counts.len());
        for (id, play) in counts.iter().enumerate().skip(FIRST_PLAY) {
            if play.iter().all(|&n| n == 0) || play.iter().any(|&n| n > 15) {
                return Err(format!("action {id} is not a play"));
            }
            if ids.insert(pack(play), id as u32).is_some() {
                return Err(format!("action {id} lists a play twice"));
            }
        }
        Ok(ActionCodes { counts, ids })
    }

    pub fn len(&self) -> usize {
        self.counts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    pub fn counts(&self, id: u32) -> &Counts {
        &self.counts[id as usize]
    }
}

/// The reward schemes of `dizhu.env.rewards`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reward {
    Win,
    Settlement,
    Log,
}

impl Reward {
    pub fn named(name: &str) -> Option<Reward> {
        match name {
            "win" => Some(Reward::Win),
            "settlement" => Some(Reward::Settlement),
            "log" => Some(Reward::Log),
            _ => None,
        }
    }

    /// Each seat's reward for a settled round; zero-sum, zeros for a void round.
    pub fn of(self, settlement: &Settlement, players: usize) -> Vec<f64> {
        let Some(landlord) = settlement.landlord.filter(|_| settlement.stake != 0) else {
            return vec![0.0; players];
        };
        let unit = match self {
            Reward::Settlement => return settlement.deltas.iter().map(|&d| d as f64).collect(),
            Reward::Win => 1.0,
            Reward::Log => {
                1.0 + f64::from(settlement.doublings) + f64::from(u8::from(settlement.spring))
            }
        };
        let farmer = if settlement.landlord_won == Some(true) {
            -unit
        } else {
            unit
        };
        (0..players)
            .map(|seat| {
                if seat == landlord {
                    -farmer * (players as f64 - 1.0)
                } else {
                    farmer
                }
            })
            .collect()
    }
}

fn add_counts(row: &mut [i8], counts: &Counts, sign: i8) {
    for (entry, &count) in row.iter_mut().zip(counts) {
        *entry = entry.wrapping_add(sign.wrapping_mul(count as i8));
    }
}

fn set_counts(row: &mut [i8], counts: &Counts) {
    for (entry, &count) in row.iter_mut().zip(counts) {
        *entry = count as i8;
    }
}

fn seat_value(seat: Option<usize>) -> i16 {
    seat.map_or(NONE, |seat| seat as i16)
}

impl SeenRows<'_> {
    /// Row `row` of one seat's 15-entry field `(rows, players, 15)`.
    fn seat_cards(field: &mut [i8], players: usize, row: usize, seat: usize) -> &mut [i8] {
        let start = (row * players + seat) * RANKS;
        &mut field[start..start + RANKS]
    }

    fn dealt(
        &mut self,
        row: usize,
        round: &Round,
        dealer: usize,
        face_up: u8,
        face_up_seat: usize,
    ) {
        let players = round.variant.players;
        let (cards, per_seat) = (
            row * players * RANKS..(row + 1) * players * RANKS,
            row * players..(row + 1) * players,
        );
        self.phase[row] = AUCTION;
        for (seat, hand) in round.hands.iter().enumerate() {
            set_counts(
                Self::seat_cards(self.hands, players, row, seat),
                &counts_of(hand),
            );
            self.hand_sizes[row * players + seat] = hand.len() as i16;
        }
        self.dealer[row] = dealer as i16;
        self.face_up_rank[row] = rank_of(face_up) as i16;
        self.face_up_seat[row] = face_up_seat as i16;
        self.bid[row] = 0;
        self.bidder[row] = NONE;
        self.landlord[row] = NONE;
        self.calls[per_seat].fill(NONE);
        self.last_player[row] = NONE;
        self.kitty[row * RANKS..(row + 1) * RANKS].fill(0);
        self.played[cards.clone()].fill(0);
        self.last_moves[cards].fill(0);
        let history = HISTORY_PER_SEAT * players * RANKS;
        self.history[row * history..(row + 1) * history].fill(0);
        self.to_beat[row * RANKS..(row + 1) * RANKS].fill(0);
        self.to_beat_kind[row] = 0;
        self.doublings[row] = 0;
    }

    fn bid_made(&mut self, row: usize, seat: usize, amount: u8, round: &Round) {
        let players = round.variant.players;
        self.calls[row * players + seat] = i16::from(amount);
        self.bid[row] = i16::from(round.bid);
        self.bidder[row] = seat_value(round.bidder);
        if let Some(landlord) = round.landlord {
            let kitty = counts_of(&round.kitty);
            self.phase[row] = PLAY;
            self.landlord[row] = landlord as i16;
            set_counts(&mut self.kitty[row * RANKS..(row + 1) * RANKS], &kitty);
            add_counts(
                Self::seat_cards(self.hands, players, row, landlord),
                &kitty,
                1,
            );
            self.hand_sizes[row * players + landlord] = round.hands[landlord].len() as i16;
        }
    }

    fn moved(&mut self, row: usize, seat: usize, play: &Counts, round: &Round) {
        let players = round.variant.players;
        if play.iter().any(|&n| n > 0) {
            add_counts(Self::seat_cards(self.hands, players, row, seat), play, -1);
            self.hand_sizes[row * players + seat] = round.hands[seat].len() as i16;
            add_counts(Self::seat_cards(self.played, players, row, seat), play, 1);
        }
        set_counts(Self::seat_cards(self.last_moves, players, row, seat), play);
        let size = HISTORY_PER_SEAT * players * RANKS;
        let history = &mut self.history[row * size..(row + 1) * size];
        history.copy_within(RANKS.., 0);
        set_counts(&mut history[size - RANKS..], play);
        let to_beat = &mut self.to_beat[row * RANKS..(row + 1) * RANKS];
        match round.last_play.filter(|_| round.phase == Phase::Play) {
            None => {
                to_beat.fill(0);
                self.to_beat_kind[row] = 0;
                self.last_player[row] = NONE;
            }
            Some(last) => {
                set_counts(to_beat, &unpack(last.key));
                self.to_beat_kind[row] = last.kind as i16;
                self.last_player[row] = seat_value(round.last_player);
            }
        }
        self.doublings[row] = i16::try_from(round.doublings).unwrap_or(i16::MAX);
    }
}

/// What every table shares: the rules, the house rules, the action table and the rewards.
#[derive(Clone, Debug)]
pub struct Config {
    pub variant: Variant,
    pub spring: bool,
    pub redeal_cap: u32,
    pub reward: Reward,
    pub codes: ActionCodes,
}

/// One table's round in progress (`Game`).
#[derive(Clone, Debug)]
pub struct Table {
    round: Round,
    seed: [u8; 32],
    dealer: usize,
    redeals: u32,
    /// The legal action ids of the seat to act, ascending; empty once the round is over.
    legal: Vec<u32>,
    settlement: Option<Settlement>,
}

impl Table {
    pub fn turn(&self) -> usize {
        self.round.turn
    }

    pub fn legal(&self) -> &[u32] {
        &self.legal
    }

    pub fn round(&self) -> &Round {
        &self.round
    }

    pub fn redeals(&self) -> u32 {
        self.redeals
    }

    pub fn settlement(&self) -> Option<&Settlement> {
        self.settlement.as_ref()
    }

    pub fn is_over(&self) -> bool {
        self.settlement.is_some()
    }
}

/// A batch of tables, each the round of one row of a `Seen`.
pub struct Tables {
    config: Config,
    douzero: DouZeroLayout,
    tables: Vec<Option<Table>>,
}

impl Tables {
    pub fn new(config: Config, rows: usize) -> Tables {
        Tables {
            douzero: DouZeroLayout::new(&config.variant),
            config,
            tables: vec![None; rows],
        }
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The layout of the `douzero` observations these tables write.
    pub fn douzero(&self) -> &DouZeroLayout {
        &self.douzero
    }

    /// The table of `row`, once started.
    pub fn table(&self, row: usize) -> Result<&Table, TableError> {
        match self.tables.get(row) {
            Some(Some(table)) => Ok(table),
            Some(None) => Err(format!("table {row} has not been started")),
            None => Err(format!("there is no table {row} of {}", self.tables.len())),
        }
    }

    /// Deals row `row` the round of `seed` with `dealer` (`Game.start`).
    pub fn start(
        &mut self,
        row: usize,
        seed: &[u8],
        dealer: usize,
        seen: &mut SeenRows<'_>,
    ) -> Result<(), TableError> {
        if row >= self.tables.len() {
            return Err(format!("there is no table {row} of {}", self.tables.len()));
        }
        if dealer >= self.config.variant.players {
            return Err(format!("{} has no seat {dealer}", self.config.variant.name));
        }
        let seed: [u8; 32] = seed
            .try_into()
            .map_err(|_| "a round seed is 32 bytes".to_owned())?;
        let table = self.deal(seed, dealer, 0, row, seen)?;
        self.tables[row] = Some(table);
        Ok(())
    }

    fn deal(
        &self,
        seed: [u8; 32],
        dealer: usize,
        redeals: u32,
        row: usize,
        seen: &mut SeenRows<'_>,
    ) -> Result<Table, TableError> {
        let config = &self.config;
        let dealt_seed = if redeals == 0 {
            seed
        } else {
            derive_seed(&seed, "redeal", redeals)
        };
        let dealt = deal(&dealt_seed, &config.variant, dealer);
        let round = Round::new(
            config.variant.clone(),
            dealt.hands,
            dealt.kitty,
            dealt.face_up_seat,
            config.spring,
        );
        seen.dealt(row, &round, dealer, dealt.face_up, dealt.face_up_seat);
        let mut table = Table {
            round,
            seed,
            dealer,
            redeals,
            legal: Vec::new(),
            settlement: None,
        };
        table.legal = self.legal_ids(&table.round)?;
        Ok(table)
    }

    fn legal_ids(&self, round: &Round) -> Result<Vec<u32>, TableError> {
        match round.phase {
            Phase::Auction => Ok(round.legal_bids().into_iter().map(u32::from).collect()),
            Phase::Play => {
                let ids = &self.config.codes.ids;
                let plays = round.legal_plays();
                let mut legal = Vec::with_capacity(plays.len() + 1);
                if round.last_play.is_some() {
                    legal.push(PASS);
                }
                for play in &plays {
                    let id = ids
                        .get(&play.key)
                        .ok_or("a legal play is missing from the action table")?;
                    legal.push(*id);
                }
                legal.sort_unstable();
                Ok(legal)
            }
            Phase::Finished | Phase::ThrownIn => Ok(Vec::new()),
        }
    }

    /// Plays action `action` for the seat to act at row `row` (`Game.step`); whether it was legal.
    pub fn step(
        &mut self,
        row: usize,
        action: i64,
        seen: &mut SeenRows<'_>,
    ) -> Result<bool, TableError> {
        self.table(row)?;
        let mut table = self.tables[row].take().ok_or("a table in use")?;
        let legal = self.step_table(&mut table, row, action, seen);
        self.tables[row] = Some(table);
        legal
    }

    fn step_table(
        &self,
        table: &mut Table,
        row: usize,
        action: i64,
        seen: &mut SeenRows<'_>,
    ) -> Result<bool, TableError> {
        if table.is_over() {
            return Err(format!("the round of table {row} is over"));
        }
        let chosen = u32::try_from(action)
            .ok()
            .filter(|id| table.legal.binary_search(id).is_ok());
        let id = match chosen {
            Some(id) => id,
            None => *table.legal.first().ok_or("no legal action")?,
        };
        let round = &mut table.round;
        let seat = round.turn;
        let players = self.config.variant.players;
        if round.phase == Phase::Auction {
            let amount = id as u8;
            round
                .bid(seat as i64, i64::from(amount))
                .map_err(|reason| format!("a legal bid was refused: {reason}"))?;
            if round.phase == Phase::ThrownIn {
                if table.redeals < self.config.redeal_cap {
                    *table = self.deal(table.seed, table.dealer, table.redeals + 1, row, seen)?;
                    return Ok(chosen.is_some());
                }
                table.legal.clear();
                table.settlement = round.settle();
                seen.phase[row] = OVER;
                seen.calls[row * players + seat] = 0;
                return Ok(chosen.is_some());
            }
            seen.bid_made(row, seat, amount, round);
        } else {
            let play = *self.config.codes.counts(id);
            let cards = pick_counts(&round.hands[seat], &play);
            round
                .play(seat as i64, &cards)
                .map_err(|reason| format!("a legal play was refused: {reason}"))?;
            seen.moved(row, seat, &play, round);
        }
        if round.phase == Phase::Finished {
            table.legal.clear();
            table.settlement = round.settle();
            seen.phase[row] = OVER;
        } else {
            table.legal = self.legal_ids(round)?;
        }
        Ok(chosen.is_some())
    }

    /// Steps every table with its action (`VectorDouDizhuEnv`'s shard): a table whose round
    /// ends writes its rewards and `terminated` and starts its next round from its row of
    /// `next_seeds` (32 bytes a row) and `next_dealers`; then each row's seat to act and mask.
    pub fn step_all(
        &mut self,
        actions: &[i32],
        next: (&[u8], &[i32]),
        seen: &mut SeenRows<'_>,
        out: &mut Outputs<'_>,
    ) -> Result<(), TableError> {
        let (next_seeds, next_dealers) = next;
        let rows = self.tables.len();
        let players = self.config.variant.players;
        if actions.len() != rows || next_seeds.len() != 32 * rows || next_dealers.len() != rows {
            return Err(format!(
                "{rows} tables need {rows} actions, seeds and dealers"
            ));
        }
        if let Some(dealer) = next_dealers
            .iter()
            .find(|&&d| usize::try_from(d).map_or(true, |d| d >= players))
        {
            return Err(format!("{} has no seat {dealer}", self.config.variant.name));
        }
        for row in 0..rows {
            self.table(row)?;
            let mut table = self.tables[row].take().ok_or("a table in use")?;
            if let Err(fault) = self.step_table(&mut table, row, i64::from(actions[row]), seen) {
                self.tables[row] = Some(table);
                return Err(fault);
            }
            let rewards = &mut out.rewards[row * players..(row + 1) * players];
            match &table.settlement {
                Some(settlement) => {
                    for (slot, reward) in rewards
                        .iter_mut()
                        .zip(self.config.reward.of(settlement, players))
                    {
                        *slot = reward as f32;
                    }
                    out.terminated[row] = 1;
                    let mut seed = [0; 32];
                    seed.copy_from_slice(&next_seeds[row * 32..(row + 1) * 32]);
                    match self.deal(seed, next_dealers[row] as usize, 0, row, seen) {
                        Ok(next) => table = next,
                        Err(fault) => {
                            self.tables[row] = Some(table);
                            return Err(fault);
                        }
                    }
                }
                None => {
                    rewards.fill(0.0);
                    out.terminated[row] = 0;
                }
            }
            self.tables[row] = Some(table);
        }
        self.write_outputs(seen, out)
    }

    /// Every row's seat to act (in `seat` and `Seen.seat`) and its legal-action mask.
    pub fn write_outputs(
        &self,
        seen: &mut SeenRows<'_>,
        out: &mut Outputs<'_>,
    ) -> Result<(), TableError> {
        let width = self.config.codes.len();
        for (row, table) in self.tables.iter().enumerate() {
            let table = table
                .as_ref()
                .ok_or_else(|| format!("table {row} has not been started"))?;
            let turn = table.turn();
            out.seat[row] = turn as i8;
            seen.seat[row] = turn as i16;
            let mask = &mut out.mask[row * width..(row + 1) * width];
            mask.fill(0);
            for &id in &table.legal {
                mask[id as usize] = 1;
            }
            let listed = &mut out.legal[row * width..row * width + table.legal.len()];
            for (slot, &id) in listed.iter_mut().zip(&table.legal) {
                *slot = id as i32;
            }
            out.legal_count[row] = table.legal.len() as i32;
        }
        if let Some(observations) = out.observation.as_deref_mut() {
            let size = self.douzero.size;
            for (row, observation) in observations
                .chunks_exact_mut(size)
                .enumerate()
                .take(self.tables.len())
            {
                self.douzero.encode(seen, row, observation);
            }
        }
        Ok(())
    }
}

/// The batch outputs besides the `Seen`: flat C-ordered slices of `(rows, actions)` masks,
/// `(rows, actions)` legal action ids (the first `legal_count` of each row), `(rows,)` seats,
/// `(rows, players)` rewards and `(rows,)` terminated flags (0 or 1).
pub struct Outputs<'a> {
    pub mask: &'a mut [i8],
    pub legal: &'a mut [i32],
    pub legal_count: &'a mut [i32],
    pub seat: &'a mut [i8],
    pub rewards: &'a mut [f32],
    pub terminated: &'a mut [u8],
    /// `(rows, size)`: the `douzero` observation of each row's seat to act, when wanted.
    pub observation: Option<&'a mut [i8]>,
}

/// A `Seen`'s arrays owned by Rust (for callers without numpy: the tests, Rust users).
pub struct OwnedSeen {
    small: Vec<Vec<i16>>,
    cards: Vec<Vec<i8>>,
}

/// The fields of a `Seen` held as int8 (the others are int16), by their position.
const CARD_FIELDS: [usize; 7] = [0, 2, 11, 12, 13, 14, 15];

impl OwnedSeen {
    pub fn zeros(players: usize, rows: usize) -> OwnedSeen {
        let widths = seen_widths(players);
        let (cards, small): (Vec<usize>, Vec<usize>) =
            (0..widths.len()).partition(|field| CARD_FIELDS.contains(field));
        OwnedSeen {
            small: small
                .iter()
                .map(|&field| vec![0; rows * widths[field]])
                .collect(),
            cards: cards
                .iter()
                .map(|&field| vec![0; rows * widths[field]])
                .collect(),
        }
    }

    pub fn rows(&mut self) -> SeenRows<'_> {
        let [phase, hands, kitty, played, last_moves, history, to_beat] = &mut self.cards[..]
        else {
            unreachable!("seven int8 fields")
        };
        let [seat, hand_sizes, dealer, face_up_rank, face_up_seat, bid, bidder, landlord, calls, to_beat_kind, last_player, doublings] =
            &mut self.small[..]
        else {
            unreachable!("twelve int16 fields")
        };
        SeenRows {
            phase,
            seat,
            hands,
            hand_sizes,
            dealer,
            face_up_rank,
            face_up_seat,
            bid,
            bidder,
            landlord,
            calls,
            kitty,
            played,
            last_moves,
            history,
            to_beat,
            to_beat_kind,
            last_player,
            doublings,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derive_seed_matches_the_python_core() {
        // dizhu.rules.derive_seed(bytes(32), "redeal", 1)[:8]
        let derived = derive_seed(&[0; 32], "redeal", 1);
        assert_eq!(derived[..8], [40, 71, 227, 226, 27, 169, 15, 23]);
    }
}
