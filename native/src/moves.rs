//! Legal-move generation (docs/rules.md sections 5, 6 and 7), a port of `dizhu.rules.moves`.
//!
//! The order is the Python core's, play for play: the plays of the type to beat first, lowest
//! first (leading: section 6's table order, each type lowest first, every kicker choice in
//! `itertools.combinations` order), then bombs from weakest to strongest, then the rocket.
//!
//! Generation works on rank masks and allocates nothing: each play goes to a `Sink` with its
//! index among every distinct play of a variant (`PLAYS` in all), so that a caller keeping a
//! value per play (the Python bindings) finds it in a vector, not a hash table.

use crate::rules::{Combo, Counts, Kind, Variant, ACE, BLACK_JOKER, RANKS, RED_JOKER, TWO};

/// Where generated plays go, in order.
pub trait Sink {
    /// `play` is the `index`-th distinct play (below `PLAYS`); one index names one play.
    fn push(&mut self, play: Combo, index: usize);
}

impl Sink for Vec<Combo> {
    fn push(&mut self, play: Combo, _index: usize) {
        Vec::push(self, play);
    }
}

/// A set of ranks, bit `r` for rank `r`.
type Mask = u16;

const RANK_COUNT: u32 = RANKS as u32;
/// The ranks a sequence may hold: 3 up to A.
const CHAINABLE: Mask = (1 << (ACE + 1)) - 1;
const BOTH_JOKERS: Mask = 1 << BLACK_JOKER | 1 << RED_JOKER;
const MOST_LINKS: usize = ACE + 1;

// The index of a play: one block per shape, each a dense grid of the shape's parameters.
/// Sets and bombs: `(width - 1) * RANKS + rank`, widths 1 to 8.
const SETS: usize = 0;
const ROCKET: usize = SETS + 8 * RANKS;
/// A trio with a kicker of `width` cards: `((width - 1) * RANKS + trio) * RANKS + kicker`.
const TRIOS_WITH: usize = ROCKET + 1;
/// A sequence: `((width - 1) * MOST_LINKS + low) * (MOST_LINKS + 1) + links`.
const CHAINS: usize = TRIOS_WITH + 2 * RANKS * RANKS;
/// A quad with two kickers `a < b` of `width` cards: `(((width - 1) * RANKS + quad) * RANKS + a) * RANKS + b`.
const QUADS_WITH: usize = CHAINS + 3 * MOST_LINKS * (MOST_LINKS + 1);
/// Airplanes: a block per `(width, low, links)` (`AIRPLANE_BLOCKS`), the wings' choice ranked inside it.
const AIRPLANES: usize = QUADS_WITH + 2 * RANKS * RANKS * RANKS;

/// `BINOMIAL[n][k]`: the number of choices of `k` items among `n`.
const BINOMIAL: [[u32; RANKS + 1]; RANKS + 1] = {
    let mut table = [[0; RANKS + 1]; RANKS + 1];
    let mut n = 0;
    while n <= RANKS {
        table[n][0] = 1;
        let mut k = 1;
        while k <= n {
            table[n][k] = table[n - 1][k - 1] + if k < n { table[n - 1][k] } else { 0 };
            k += 1;
        }
        n += 1;
    }
    table
};

/// Where the block of the airplanes `(width, low, links)` starts, after `AIRPLANES`, and (last)
/// their number: `links` wings of distinct ranks among the `RANKS - links` outside the trios.
const AIRPLANE_BLOCKS: ([[[u32; MOST_LINKS + 1]; MOST_LINKS]; 2], usize) = {
    let mut starts = [[[0; MOST_LINKS + 1]; MOST_LINKS]; 2];
    let mut next = 0;
    let mut width = 0;
    while width < 2 {
        let mut low = 0;
        while low < MOST_LINKS {
            let mut links = 1;
            while low + links <= MOST_LINKS {
                starts[width][low][links] = next;
                next += BINOMIAL[RANKS - links][links];
                links += 1;
            }
            low += 1;
        }
        width += 1;
    }
    (starts, next as usize)
};

/// How many distinct plays there are (of any variant): every index is below it.
pub const PLAYS: usize = AIRPLANES + AIRPLANE_BLOCKS.1;

/// The ranks of `mask`, lowest first.
fn ranks(mut mask: Mask) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let rank = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            rank
        })
    })
}

/// The ranks `counts` holds at least `at_least` times.
fn held(counts: &Counts, at_least: u8) -> Mask {
    counts
        .iter()
        .enumerate()
        .filter(|&(_, &count)| count >= at_least)
        .fold(0, |mask, (rank, _)| mask | 1 << rank)
}

/// The ranks above `rank` (none above the red joker).
fn above(rank: i32) -> Mask {
    match rank {
        r if r < 0 => Mask::MAX,
        r if r >= RANK_COUNT as i32 - 1 => 0,
        r => Mask::MAX << (r + 1),
    }
}

/// The fewest links of a straight, a pair sequence and a trio sequence (by cards per rank).
fn fewest_links(width: u8) -> usize {
    match width {
        1 => 5,
        2 => 3,
        _ => 2,
    }
}

fn set(width: u8, rank: usize) -> (Combo, usize) {
    let kind = match width {
        1 => Kind::Single,
        2 => Kind::Pair,
        3 => Kind::Trio,
        _ => Kind::Bomb,
    };
    let index = SETS + (usize::from(width) - 1) * RANKS + rank;
    (Combo::of(kind, rank, &[(rank, width)]), index)
}

fn chain(width: u8, low: usize, links: usize) -> (Combo, usize) {
    let kind = match width {
        1 => Kind::Straight,
        2 => Kind::PairSequence,
        _ => Kind::TrioSequence,
    };
    let mut combo = Combo::of(kind, low + links - 1, &[]);
    for rank in low..low + links {
        combo.key += u64::from(width) << (4 * rank);
    }
    combo.size = width * links as u8;
    let index = CHAINS + ((usize::from(width) - 1) * MOST_LINKS + low) * (MOST_LINKS + 1) + links;
    (combo, index)
}

fn trio_with(width: u8, trio: usize, kicker: usize) -> (Combo, usize) {
    let kind = if width == 1 {
        Kind::TrioWithSingle
    } else {
        Kind::TrioWithPair
    };
    let index = TRIOS_WITH + ((usize::from(width) - 1) * RANKS + trio) * RANKS + kicker;
    (Combo::of(kind, trio, &[(trio, 3), (kicker, width)]), index)
}

fn rocket(decks: u8) -> (Combo, usize) {
    let parts = [(BLACK_JOKER, decks), (RED_JOKER, decks)];
    (Combo::of(Kind::Rocket, RED_JOKER, &parts), ROCKET)
}

fn emit(sink: &mut impl Sink, (play, index): (Combo, usize)) {
    debug_assert!(index < PLAYS);
    sink.push(play, index);
}

/// Calls `each(low, links)` for every run of at least `min_links` consecutive ranks of `mask`
/// (chainable ranks only), by low rank, then by length.
fn for_each_run(min_links: usize, mask: Mask, mut each: impl FnMut(usize, usize)) {
    let mask = mask & CHAINABLE;
    let mut rank = 0;
    while rank <= ACE {
        if mask >> rank & 1 == 0 {
            rank += 1;
            continue;
        }
        let start = rank;
        while rank <= ACE && mask >> rank & 1 == 1 {
            rank += 1;
        }
        for low in start..(rank + 1).saturating_sub(min_links) {
            for links in min_links..=rank - low {
                each(low, links);
            }
        }
    }
}

/// Calls `each` with every choice of `k` ranks of `mask`, in `itertools.combinations` order.
fn for_each_choice(mask: Mask, k: usize, mut each: impl FnMut(&[usize])) {
    let mut items = [0; RANKS];
    let n = ranks(mask)
        .zip(items.iter_mut())
        .fold(0, |n, (rank, item)| {
            *item = rank;
            n + 1
        });
    if k > n {
        return;
    }
    let mut indices = [0; RANKS];
    let mut chosen = [0; RANKS];
    for i in 0..k {
        indices[i] = i;
        chosen[i] = items[i];
    }
    loop {
        each(&chosen[..k]);
        let Some(i) = (0..k).rev().find(|&i| indices[i] != i + n - k) else {
            return;
        };
        indices[i] += 1;
        for j in i + 1..k {
            indices[j] = indices[j - 1] + 1;
        }
        for j in i..k {
            chosen[j] = items[indices[j]];
        }
    }
}

/// Every play `counts` can make on `to_beat` (None when leading the trick).
pub fn legal_moves(counts: &Counts, to_beat: Option<&Combo>, variant: &Variant) -> Vec<Combo> {
    let mut moves = Vec::new();
    generate(counts, to_beat, variant, &mut moves);
    moves
}

/// `legal_moves`, each play given to `sink` with its index.
pub fn generate(counts: &Counts, to_beat: Option<&Combo>, variant: &Variant, sink: &mut impl Sink) {
    let mut floor: (u8, i32) = (0, -1);
    match to_beat {
        None => leads(sink, counts, variant),
        Some(to_beat) => match to_beat.kind {
            Kind::Rocket => return,
            Kind::Bomb => floor = (to_beat.size, i32::from(to_beat.main)),
            kind => follow(
                sink,
                counts,
                kind,
                usize::from(to_beat.size),
                i32::from(to_beat.main),
            ),
        },
    }
    if counts.iter().any(|&count| count >= 4) {
        bombs(sink, counts, variant, floor);
    }
    if counts[BLACK_JOKER] >= variant.decks && counts[RED_JOKER] >= variant.decks {
        emit(sink, rocket(variant.decks));
    }
}

fn leads(sink: &mut impl Sink, counts: &Counts, variant: &Variant) {
    let singles = held(counts, 1);
    let pairs = held(counts, 2);
    let mut trios = held(counts, 3);
    for (width, mask) in [(1, singles), (2, pairs)] {
        ranks(mask).for_each(|rank| emit(sink, set(width, rank)));
    }
    if trios != 0 {
        ranks(trios).for_each(|rank| emit(sink, set(3, rank)));
        // Three jokers of a colour: no trio of them takes kickers.
        trios &= (1 << (TWO + 1)) - 1;
        if variant.has(Kind::TrioWithSingle) {
            add_trios_with(sink, trios, singles, 1);
        }
        add_trios_with(sink, trios, pairs, 2);
    }
    for (width, mask) in [(1, singles), (2, pairs)] {
        if mask.count_ones() as usize >= fewest_links(width) {
            for_each_run(fewest_links(width), mask, |low, links| {
                emit(sink, chain(width, low, links));
            });
        }
    }
    if trios.count_ones() as usize >= fewest_links(3) {
        for_each_run(fewest_links(3), trios, |low, links| {
            emit(sink, chain(3, low, links));
        });
        if variant.has(Kind::AirplaneWithSingles) {
            for_each_run(fewest_links(3), trios, |low, links| {
                add_airplanes(sink, low, links, singles, 1);
            });
        }
        for_each_run(fewest_links(3), trios, |low, links| {
            add_airplanes(sink, low, links, pairs, 2);
        });
    }
    let quads = trios & held(counts, 4);
    if quads != 0 {
        if variant.has(Kind::QuadWithTwoSingles) {
            add_quads(sink, quads, singles, 1);
        }
        if variant.has(Kind::QuadWithTwoPairs) {
            add_quads(sink, quads, pairs, 2);
        }
    }
}

/// Each trio of `trios` with each kicker of `width` cards of another rank of `kickers`.
fn add_trios_with(sink: &mut impl Sink, trios: Mask, kickers: Mask, width: u8) {
    for trio in ranks(trios) {
        for kicker in ranks(kickers & !(1 << trio)) {
            emit(sink, trio_with(width, trio, kicker));
        }
    }
}

/// The trios `low .. low + links` with every choice of `links` wings of `width` cards of `wing_ranks`.
fn add_airplanes(sink: &mut impl Sink, low: usize, links: usize, wing_ranks: Mask, width: u8) {
    let kind = if width == 1 {
        Kind::AirplaneWithSingles
    } else {
        Kind::AirplaneWithPairs
    };
    let (trios, _) = chain(3, low, links);
    let run: Mask = ((1 << links) - 1) << low;
    let Some(&start) = AIRPLANE_BLOCKS.0[usize::from(width) - 1]
        .get(low)
        .and_then(|block| block.get(links))
    else {
        return;
    };
    for_each_choice(wing_ranks & !run, links, |chosen| {
        // Both jokers (pairs of them in 4p) as wings would hold the rocket.
        if chosen.len() >= 2 && chosen[chosen.len() - 2..] == [BLACK_JOKER, RED_JOKER] {
            return;
        }
        let mut play = Combo { kind, ..trios };
        // The wings' rank among every choice of `links` ranks outside the trios (colex order).
        let mut rank_of_choice = 0;
        for (nth, &wing) in chosen.iter().enumerate() {
            play.key += u64::from(width) << (4 * wing);
            let position = if wing < low { wing } else { wing - links };
            rank_of_choice += BINOMIAL[position][nth + 1];
        }
        play.size += width * links as u8;
        emit(sink, (play, AIRPLANES + (start + rank_of_choice) as usize));
    });
}

/// Four of each rank of `quads` with every two kickers of `width` cards, of two other ranks.
fn add_quads(sink: &mut impl Sink, quads: Mask, kicker_ranks: Mask, width: u8) {
    let kind = if width == 1 {
        Kind::QuadWithTwoSingles
    } else {
        Kind::QuadWithTwoPairs
    };
    for quad in ranks(quads) {
        let kickers = kicker_ranks & !(1 << quad);
        for low in ranks(kickers) {
            for high in ranks(kickers & above(low as i32)) {
                if 1 << low | 1 << high == BOTH_JOKERS {
                    continue;
                }
                let parts = [(quad, 4), (low, width), (high, width)];
                let index = QUADS_WITH
                    + (((usize::from(width) - 1) * RANKS + quad) * RANKS + low) * RANKS
                    + high;
                emit(sink, (Combo::of(kind, quad, &parts), index));
            }
        }
    }
}

/// Bombs stronger than `floor` (size, rank), weakest first.
fn bombs(sink: &mut impl Sink, counts: &Counts, variant: &Variant, floor: (u8, i32)) {
    let (floor_size, floor_rank) = floor;
    let normal: Mask = (1 << (TWO + 1)) - 1;
    for size in floor_size.max(4)..=variant.max_bomb_size {
        let beaten = if size == floor_size {
            above(floor_rank)
        } else {
            Mask::MAX
        };
        ranks(held(counts, size) & normal & beaten).for_each(|rank| emit(sink, set(size, rank)));
    }
}

/// The low ranks of the runs of `links` ranks, each held `width` times, topping above `above`.
fn runs_of(counts: &Counts, width: u8, links: usize, above: i32) -> impl Iterator<Item = usize> {
    let held = held(counts, width) & CHAINABLE;
    let links = if (1..=MOST_LINKS).contains(&links) {
        links
    } else {
        MOST_LINKS + 1 // no run: the range below is empty
    };
    let span: Mask = (1u32 << links.min(MOST_LINKS)) as Mask - 1;
    let first = (above - links as i32 + 2).max(0) as usize;
    (first..(MOST_LINKS + 1).saturating_sub(links)).filter(move |&low| held >> low & span == span)
}

/// The plays of kind `kind` and `size` cards with a main rank above `above`.
fn follow(sink: &mut impl Sink, counts: &Counts, kind: Kind, size: usize, above_rank: i32) {
    let higher = above(above_rank);
    match kind {
        Kind::Single | Kind::Pair | Kind::Trio => {
            let width = kind as u8;
            ranks(held(counts, width) & higher).for_each(|rank| emit(sink, set(width, rank)));
        }
        Kind::TrioWithSingle | Kind::TrioWithPair => {
            let width = if kind == Kind::TrioWithSingle { 1 } else { 2 };
            let trios = held(counts, 3) & higher & ((1 << (TWO + 1)) - 1);
            add_trios_with(sink, trios, held(counts, width), width);
        }
        Kind::Straight | Kind::PairSequence | Kind::TrioSequence => {
            let width = kind as u8 - Kind::Straight as u8 + 1;
            let links = size / usize::from(width);
            if links >= fewest_links(width) {
                for low in runs_of(counts, width, links, above_rank) {
                    emit(sink, chain(width, low, links));
                }
            }
        }
        Kind::AirplaneWithSingles | Kind::AirplaneWithPairs => {
            let width = kind as u8 - Kind::AirplaneWithSingles as u8 + 1;
            let links = size / usize::from(3 + width);
            let wings = held(counts, width);
            for low in runs_of(counts, 3, links, above_rank) {
                add_airplanes(sink, low, links, wings, width);
            }
        }
        Kind::QuadWithTwoSingles | Kind::QuadWithTwoPairs => {
            let width = kind as u8 - Kind::QuadWithTwoSingles as u8 + 1;
            let quads = held(counts, 4) & higher & ((1 << (TWO + 1)) - 1);
            add_quads(sink, quads, held(counts, width), width);
        }
        Kind::Bomb | Kind::Rocket => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::read;

    #[test]
    fn choices_come_in_itertools_order() {
        let mut seen = Vec::new();
        for_each_choice(0b11110, 2, |chosen| seen.push(chosen.to_vec()));
        assert_eq!(
            seen,
            vec![
                vec![1, 2],
                vec![1, 3],
                vec![1, 4],
                vec![2, 3],
                vec![2, 4],
                vec![3, 4]
            ]
        );
        let mut none = 0;
        for_each_choice(0b10, 2, |_| none += 1);
        assert_eq!(none, 0);
    }

    #[test]
    fn every_generated_play_reads_as_itself() {
        let variant = Variant::three_player();
        let mut counts = [1; RANKS];
        counts[..=TWO].fill(4);
        // The whole deck holds sequences longer than any hand, which are no combination.
        let most = variant.hand_size + variant.kitty_size;
        for play in legal_moves(&counts, None, &variant) {
            if usize::from(play.size) > most {
                continue;
            }
            assert_eq!(read(&play.counts(), &variant), Ok(play));
        }
    }

    /// Keeps the index of every play pushed, checking that one index names one play.
    #[derive(Default)]
    struct Indices(std::collections::HashMap<usize, (Kind, u64)>);

    impl Sink for Indices {
        fn push(&mut self, play: Combo, index: usize) {
            assert!(index < PLAYS, "index {index} of {play:?} is out of range");
            let named = *self.0.entry(index).or_insert((play.kind, play.key));
            assert_eq!(
                named,
                (play.kind, play.key),
                "index {index} names two plays"
            );
        }
    }

    #[test]
    fn one_index_names_one_play_and_one_play_has_one_index() {
        for variant in [Variant::three_player(), Variant::four_player()] {
            let mut indices = Indices::default();
            let rich: Counts = std::array::from_fn(|rank| variant.copies(rank));
            let mut hands = vec![rich];
            // Hands missing one rank each reach runs and wings the rich hand cannot.
            hands.extend((0..RANKS).map(|missing| {
                let mut hand = rich;
                hand[missing] = 0;
                hand
            }));
            for hand in &hands {
                generate(hand, None, &variant, &mut indices);
                for to_beat in legal_moves(hand, None, &variant) {
                    generate(hand, Some(&to_beat), &variant, &mut indices);
                }
            }
            let mut keys = std::collections::HashSet::new();
            for named in indices.0.values() {
                assert!(keys.insert(*named), "{named:?} has two indices");
            }
        }
    }

    #[test]
    fn a_rocket_cannot_be_answered() {
        let variant = Variant::three_player();
        let counts = [4; RANKS];
        assert!(legal_moves(&counts, Some(&rocket(1).0), &variant).is_empty());
    }
}
