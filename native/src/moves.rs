//! Legal-move generation (docs/rules.md sections 5, 6 and 7), a port of `dizhu.rules.moves`.
//!
//! The order is the Python core's, play for play: the plays of the type to beat first, lowest
//! first (leading: section 6's table order, each type lowest first, every kicker choice in
//! `itertools.combinations` order), then bombs from weakest to strongest, then the rocket.

use crate::rules::{Combo, Counts, Kind, Variant, ACE, BLACK_JOKER, RANKS, RED_JOKER, TWO};

/// The fewest links of a straight, a pair sequence and a trio sequence (by cards per rank).
fn fewest_links(width: u8) -> usize {
    match width {
        1 => 5,
        2 => 3,
        _ => 2,
    }
}

fn set_kind(width: u8) -> Kind {
    match width {
        1 => Kind::Single,
        2 => Kind::Pair,
        3 => Kind::Trio,
        _ => Kind::Bomb,
    }
}

fn chain_kind(width: u8) -> Kind {
    match width {
        1 => Kind::Straight,
        2 => Kind::PairSequence,
        _ => Kind::TrioSequence,
    }
}

fn set(width: u8, rank: usize) -> Combo {
    Combo::of(set_kind(width), rank, &[(rank, width)])
}

fn chain(width: u8, low: usize, links: usize) -> Combo {
    let mut combo = Combo::of(chain_kind(width), low + links - 1, &[]);
    for rank in low..low + links {
        combo.key += u64::from(width) << (4 * rank);
    }
    combo.size = width * links as u8;
    combo
}

fn rocket(decks: u8) -> Combo {
    Combo::of(
        Kind::Rocket,
        RED_JOKER,
        &[(BLACK_JOKER, decks), (RED_JOKER, decks)],
    )
}

/// The mask of the chainable ranks (3..A) among `ranks`.
fn chain_mask(ranks: &[usize]) -> u32 {
    ranks
        .iter()
        .filter(|&&rank| rank <= ACE)
        .fold(0, |mask, &rank| mask | 1 << rank)
}

/// Every run `(low, links)` of at least `min_links` consecutive ranks of `mask`, by low then length.
fn runs(min_links: usize, mask: u32) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
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
            found.extend((min_links..=rank - low).map(|links| (low, links)));
        }
    }
    found
}

/// Calls `each` with every choice of `k` items of `items`, in `itertools.combinations` order.
fn for_each_choice(items: &[usize], k: usize, mut each: impl FnMut(&[usize])) {
    let n = items.len();
    if k > n {
        return;
    }
    let mut indices: Vec<usize> = (0..k).collect();
    let mut chosen: Vec<usize> = indices.iter().map(|&i| items[i]).collect();
    loop {
        each(&chosen);
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

fn ranks_with(counts: &Counts, at_least: u8) -> Vec<usize> {
    (0..RANKS)
        .filter(|&rank| counts[rank] >= at_least)
        .collect()
}

/// Every play `counts` can make on `to_beat` (None when leading the trick).
pub fn legal_moves(counts: &Counts, to_beat: Option<&Combo>, variant: &Variant) -> Vec<Combo> {
    let mut moves = Vec::new();
    let mut floor: (u8, i32) = (0, -1);
    match to_beat {
        None => leads(&mut moves, counts, variant),
        Some(to_beat) => match to_beat.kind {
            Kind::Rocket => return moves,
            Kind::Bomb => floor = (to_beat.size, i32::from(to_beat.main)),
            kind => follow(
                &mut moves,
                counts,
                kind,
                usize::from(to_beat.size),
                i32::from(to_beat.main),
            ),
        },
    }
    if counts.iter().any(|&count| count >= 4) {
        bombs(&mut moves, counts, variant, floor);
    }
    if counts[BLACK_JOKER] >= variant.decks && counts[RED_JOKER] >= variant.decks {
        moves.push(rocket(variant.decks));
    }
    moves
}

fn leads(moves: &mut Vec<Combo>, counts: &Counts, variant: &Variant) {
    let singles = ranks_with(counts, 1);
    let pairs = ranks_with(counts, 2);
    let mut trios = ranks_with(counts, 3);
    moves.extend(singles.iter().map(|&rank| set(1, rank)));
    moves.extend(pairs.iter().map(|&rank| set(2, rank)));
    if !trios.is_empty() {
        moves.extend(trios.iter().map(|&rank| set(3, rank)));
        // Three jokers of a colour: no trio of them takes kickers.
        trios.retain(|&rank| rank <= TWO);
        if variant.has(Kind::TrioWithSingle) {
            for &trio in &trios {
                let kickers = singles.iter().filter(|&&kicker| kicker != trio);
                moves.extend(kickers.map(|&kicker| {
                    Combo::of(Kind::TrioWithSingle, trio, &[(trio, 3), (kicker, 1)])
                }));
            }
        }
        for &trio in &trios {
            let kickers = pairs.iter().filter(|&&kicker| kicker != trio);
            moves.extend(
                kickers
                    .map(|&kicker| Combo::of(Kind::TrioWithPair, trio, &[(trio, 3), (kicker, 2)])),
            );
        }
    }
    for (width, ranks) in [(1, &singles), (2, &pairs)] {
        if ranks.len() >= fewest_links(width) {
            let found = runs(fewest_links(width), chain_mask(ranks));
            moves.extend(
                found
                    .into_iter()
                    .map(|(low, links)| chain(width, low, links)),
            );
        }
    }
    if trios.len() >= fewest_links(3) {
        let found = runs(fewest_links(3), chain_mask(&trios));
        moves.extend(found.iter().map(|&(low, links)| chain(3, low, links)));
        if !found.is_empty() {
            if variant.has(Kind::AirplaneWithSingles) {
                add_airplanes(moves, &found, &singles, 1);
            }
            add_airplanes(moves, &found, &pairs, 2);
        }
    }
    let quads: Vec<usize> = trios
        .iter()
        .copied()
        .filter(|&rank| counts[rank] >= 4)
        .collect();
    if !quads.is_empty() {
        if variant.has(Kind::QuadWithTwoSingles) {
            add_quads(moves, &quads, &singles, 1);
        }
        if variant.has(Kind::QuadWithTwoPairs) {
            add_quads(moves, &quads, &pairs, 2);
        }
    }
}

/// For each run of trios `(low, links)`: every choice of `links` wings of `width` cards.
fn add_airplanes(
    moves: &mut Vec<Combo>,
    found: &[(usize, usize)],
    wing_ranks: &[usize],
    width: u8,
) {
    let kind = if width == 1 {
        Kind::AirplaneWithSingles
    } else {
        Kind::AirplaneWithPairs
    };
    for &(low, links) in found {
        let trios = chain(3, low, links);
        let wings: Vec<usize> = wing_ranks
            .iter()
            .copied()
            .filter(|&rank| !(low..low + links).contains(&rank))
            .collect();
        for_each_choice(&wings, links, |chosen| {
            // Both jokers (pairs of them in 4p) as wings would hold the rocket.
            if chosen.contains(&BLACK_JOKER) && chosen.contains(&RED_JOKER) {
                return;
            }
            let mut combo = Combo { kind, ..trios };
            for &wing in chosen {
                combo.key += u64::from(width) << (4 * wing);
            }
            combo.size += width * links as u8;
            moves.push(combo);
        });
    }
}

/// Four of each rank in `quads` with every two kickers of `width` cards, of two other ranks.
fn add_quads(moves: &mut Vec<Combo>, quads: &[usize], kicker_ranks: &[usize], width: u8) {
    let kind = if width == 1 {
        Kind::QuadWithTwoSingles
    } else {
        Kind::QuadWithTwoPairs
    };
    for &quad in quads {
        let kickers: Vec<usize> = kicker_ranks
            .iter()
            .copied()
            .filter(|&rank| rank != quad)
            .collect();
        for_each_choice(&kickers, 2, |pair| {
            if pair != [BLACK_JOKER, RED_JOKER] {
                moves.push(Combo::of(
                    kind,
                    quad,
                    &[(quad, 4), (pair[0], width), (pair[1], width)],
                ));
            }
        });
    }
}

/// Bombs stronger than `floor` (size, rank), weakest first.
fn bombs(moves: &mut Vec<Combo>, counts: &Counts, variant: &Variant, floor: (u8, i32)) {
    let quads: Vec<usize> = (0..=TWO).filter(|&rank| counts[rank] >= 4).collect();
    let (floor_size, floor_rank) = floor;
    for size in floor_size.max(4)..=variant.max_bomb_size {
        let above = if size == floor_size { floor_rank } else { -1 };
        for &rank in &quads {
            if counts[rank] >= size && rank as i32 > above {
                moves.push(set(size, rank));
            }
        }
    }
}

/// The low ranks of the runs of `links` ranks, each held `width` times, topping above `above`.
fn runs_of(counts: &Counts, width: u8, links: usize, above: i32) -> Vec<usize> {
    let held: Vec<usize> = (0..=ACE).filter(|&rank| counts[rank] >= width).collect();
    let held = chain_mask(&held);
    if links == 0 || links > ACE + 1 {
        return Vec::new();
    }
    let span = (1u32 << links) - 1;
    let first = (above - links as i32 + 2).max(0) as usize;
    (first..ACE + 2 - links)
        .filter(|&low| held >> low & span == span)
        .collect()
}

/// The plays of kind `kind` and `size` cards with a main rank above `above`.
fn follow(moves: &mut Vec<Combo>, counts: &Counts, kind: Kind, size: usize, above: i32) {
    let higher = (above + 1).max(0) as usize;
    match kind {
        Kind::Single | Kind::Pair | Kind::Trio => {
            let width = kind as u8;
            moves.extend(
                (higher..RANKS)
                    .filter(|&rank| counts[rank] >= width)
                    .map(|rank| set(width, rank)),
            );
        }
        Kind::TrioWithSingle | Kind::TrioWithPair => {
            let width = if kind == Kind::TrioWithSingle { 1 } else { 2 };
            let kickers = ranks_with(counts, width);
            for trio in (higher..=TWO).filter(|&trio| counts[trio] >= 3) {
                let others = kickers.iter().filter(|&&kicker| kicker != trio);
                moves.extend(
                    others.map(|&kicker| Combo::of(kind, trio, &[(trio, 3), (kicker, width)])),
                );
            }
        }
        Kind::Straight | Kind::PairSequence | Kind::TrioSequence => {
            let width = kind as u8 - Kind::Straight as u8 + 1;
            let links = size / usize::from(width);
            if links >= fewest_links(width) {
                moves.extend(
                    runs_of(counts, width, links, above)
                        .into_iter()
                        .map(|low| chain(width, low, links)),
                );
            }
        }
        Kind::AirplaneWithSingles | Kind::AirplaneWithPairs => {
            let width = kind as u8 - Kind::AirplaneWithSingles as u8 + 1;
            let links = size / usize::from(3 + width);
            let found: Vec<(usize, usize)> = runs_of(counts, 3, links, above)
                .into_iter()
                .map(|low| (low, links))
                .collect();
            if !found.is_empty() {
                add_airplanes(moves, &found, &ranks_with(counts, width), width);
            }
        }
        Kind::QuadWithTwoSingles | Kind::QuadWithTwoPairs => {
            let width = kind as u8 - Kind::QuadWithTwoSingles as u8 + 1;
            let quads: Vec<usize> = (higher..=TWO).filter(|&rank| counts[rank] >= 4).collect();
            if !quads.is_empty() {
                add_quads(moves, &quads, &ranks_with(counts, width), width);
            }
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
        for_each_choice(&[1, 2, 3, 4], 2, |chosen| seen.push(chosen.to_vec()));
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
        for_each_choice(&[1], 2, |_| none += 1);
        assert_eq!(none, 0);
    }

    #[test]
    fn every_generated_play_reads_as_itself() {
        let variant = Variant::three_player();
        let mut counts = [1; RANKS];
        counts[..=TWO].fill(4);
        for play in legal_moves(&counts, None, &variant) {
            assert_eq!(read(&play.counts(), &variant), Ok(play));
        }
    }

    #[test]
    fn a_rocket_cannot_be_answered() {
        let variant = Variant::three_player();
        let counts = [4; RANKS];
        assert!(legal_moves(&counts, Some(&rocket(1)), &variant).is_empty());
    }
}
