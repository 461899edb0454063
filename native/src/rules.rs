//! Ranks, variants, classification and comparison (docs/rules.md sections 1, 6 and 7).
//!
//! A port of `dizhu.rules.cards`, `variants` and `combinations`: the reading of a card set
//! follows from its rank counts alone, and every refusal says why in the Python core's words,
//! so that the two engines can be compared refusal by refusal.

/// Ranks in rule order: 3 = 0 … A = 11, 2 = 12, black joker = 13, red joker = 14.
pub const RANKS: usize = 15;
pub const ACE: usize = 11;
pub const TWO: usize = 12;
pub const BLACK_JOKER: usize = 13;
pub const RED_JOKER: usize = 14;
/// The most cards of one rank a play may hold (two decks of four): counts pack in four bits.
pub const MAX_OF_A_RANK: u8 = 8;
const RANK_SYMBOLS: [&str; RANKS] = [
    "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K", "A", "2", "BJ", "RJ",
];

/// How many cards of each rank a hand or a play holds.
pub type Counts = [u8; RANKS];

/// The combination types of section 6, numbered as in `CombinationKind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Kind {
    Single = 1,
    Pair = 2,
    Trio = 3,
    TrioWithSingle = 4,
    TrioWithPair = 5,
    Straight = 6,
    PairSequence = 7,
    TrioSequence = 8,
    AirplaneWithSingles = 9,
    AirplaneWithPairs = 10,
    Bomb = 11,
    Rocket = 12,
    QuadWithTwoSingles = 13,
    QuadWithTwoPairs = 14,
}

impl Kind {
    pub const ALL: [Kind; 14] = [
        Kind::Single,
        Kind::Pair,
        Kind::Trio,
        Kind::TrioWithSingle,
        Kind::TrioWithPair,
        Kind::Straight,
        Kind::PairSequence,
        Kind::TrioSequence,
        Kind::AirplaneWithSingles,
        Kind::AirplaneWithPairs,
        Kind::Bomb,
        Kind::Rocket,
        Kind::QuadWithTwoSingles,
        Kind::QuadWithTwoPairs,
    ];

    /// The kind numbered `value`, if any.
    pub fn from_number(value: u8) -> Option<Kind> {
        Kind::ALL.get(usize::from(value).checked_sub(1)?).copied()
    }

    /// The lower-case human name, as `CombinationKind.label`.
    pub fn label(self) -> &'static str {
        match self {
            Kind::Single => "single",
            Kind::Pair => "pair",
            Kind::Trio => "trio",
            Kind::TrioWithSingle => "trio with single",
            Kind::TrioWithPair => "trio with pair",
            Kind::Straight => "straight",
            Kind::PairSequence => "pair sequence",
            Kind::TrioSequence => "trio sequence",
            Kind::AirplaneWithSingles => "airplane with singles",
            Kind::AirplaneWithPairs => "airplane with pairs",
            Kind::Bomb => "bomb",
            Kind::Rocket => "rocket",
            Kind::QuadWithTwoSingles => "quad with two singles",
            Kind::QuadWithTwoPairs => "quad with two pairs",
        }
    }

    fn bit(self) -> u16 {
        1 << (self as u8)
    }
}

/// Everything that differs between variants, as `dizhu.rules.Variant`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Variant {
    pub name: String,
    pub players: usize,
    pub decks: u8,
    pub hand_size: usize,
    pub kitty_size: usize,
    /// Bit `k` set when the kind numbered `k` is played.
    pub kinds: u16,
    pub max_bomb_size: u8,
    pub min_doubling_bomb_size: u8,
}

impl Variant {
    pub fn three_player() -> Variant {
        Variant {
            name: "3p".to_owned(),
            players: 3,
            decks: 1,
            hand_size: 17,
            kitty_size: 3,
            kinds: Kind::ALL.iter().fold(0, |mask, kind| mask | kind.bit()),
            max_bomb_size: 4,
            min_doubling_bomb_size: 4,
        }
    }

    pub fn four_player() -> Variant {
        let absent = [
            Kind::TrioWithSingle,
            Kind::AirplaneWithSingles,
            Kind::QuadWithTwoSingles,
            Kind::QuadWithTwoPairs,
        ];
        Variant {
            name: "4p".to_owned(),
            players: 4,
            decks: 2,
            hand_size: 25,
            kitty_size: 8,
            kinds: Kind::ALL
                .iter()
                .filter(|kind| !absent.contains(kind))
                .fold(0, |mask, kind| mask | kind.bit()),
            max_bomb_size: 8,
            min_doubling_bomb_size: 6,
        }
    }

    pub fn has(&self, kind: Kind) -> bool {
        self.kinds & kind.bit() != 0
    }

    /// How many cards of `rank` the deck holds.
    pub fn copies(&self, rank: usize) -> u8 {
        if rank >= BLACK_JOKER {
            self.decks
        } else {
            4 * self.decks
        }
    }

    pub fn deck_size(&self) -> usize {
        54 * usize::from(self.decks)
    }

    pub fn passes_to_close(&self) -> usize {
        self.players - 1
    }
}

/// A valid play at the level of ranks; `key` packs its rank counts, four bits a rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Combo {
    pub kind: Kind,
    pub main: u8,
    pub size: u8,
    pub key: u64,
}

/// The key of a set of rank counts: count of rank `r` in bits `4r .. 4r + 4`.
pub fn pack(counts: &Counts) -> u64 {
    counts.iter().enumerate().fold(0, |key, (rank, &count)| {
        key | (u64::from(count) << (4 * rank))
    })
}

pub fn unpack(key: u64) -> Counts {
    let mut counts = [0; RANKS];
    for (rank, count) in counts.iter_mut().enumerate() {
        *count = ((key >> (4 * rank)) & 0xF) as u8;
    }
    counts
}

impl Combo {
    /// A play of `kind` ranked by `main` made of `parts` (rank, count).
    pub fn of(kind: Kind, main: usize, parts: &[(usize, u8)]) -> Combo {
        let mut key = 0;
        let mut size = 0;
        for &(rank, count) in parts {
            key += u64::from(count) << (4 * rank);
            size += count;
        }
        Combo {
            kind,
            main: main as u8,
            size,
            key,
        }
    }

    pub fn counts(&self) -> Counts {
        unpack(self.key)
    }

    pub fn is_bomb_like(&self) -> bool {
        matches!(self.kind, Kind::Bomb | Kind::Rocket)
    }
}

/// Whether `play` beats `to_beat`, the last play of the trick (section 7).
pub fn beats(play: &Combo, to_beat: &Combo) -> bool {
    match play.kind {
        Kind::Rocket => to_beat.kind != Kind::Rocket,
        Kind::Bomb => {
            if to_beat.kind == Kind::Bomb {
                (play.size, play.main) > (to_beat.size, to_beat.main)
            } else {
                to_beat.kind != Kind::Rocket
            }
        }
        kind => kind == to_beat.kind && play.size == to_beat.size && play.main > to_beat.main,
    }
}

/// Whether ascending distinct `ranks` are consecutive and all chainable (3..A).
fn is_run(ranks: &[usize]) -> bool {
    let (first, last) = (ranks[0], ranks[ranks.len() - 1]);
    last <= ACE && last - first == ranks.len() - 1
}

/// The one reading of a card set with these rank counts in `variant`, or why there is none.
pub fn read(counts: &Counts, variant: &Variant) -> Result<Combo, String> {
    let n: usize = counts.iter().map(|&count| usize::from(count)).sum();
    if n == 0 {
        return Err("no cards".to_owned());
    }
    for (rank, &count) in counts.iter().enumerate() {
        let limit = variant.copies(rank);
        if count > limit {
            return Err(format!(
                "the {} deck holds only {} {}",
                variant.name, limit, RANK_SYMBOLS[rank]
            ));
        }
    }
    let most = variant.hand_size + variant.kitty_size;
    if n > most {
        // Decision (larger than a hand): the sizes of section 6 are those one hand can hold.
        return Err(format!(
            "a combination never uses more cards than one hand holds ({most} cards)"
        ));
    }
    let key = pack(counts);
    let size = n as u8;
    let make = |kind: Kind, main: usize| {
        Ok(Combo {
            kind,
            main: main as u8,
            size,
            key,
        })
    };
    let held: Vec<usize> = (0..RANKS).filter(|&rank| counts[rank] > 0).collect();
    if held.len() == 1 {
        let only = held[0];
        return match n {
            1 => make(Kind::Single, only),
            2 => make(Kind::Pair, only),
            3 => make(Kind::Trio, only),
            _ => make(Kind::Bomb, only),
        };
    }
    if counts[BLACK_JOKER] == variant.decks
        && counts[RED_JOKER] == variant.decks
        && n == 2 * usize::from(variant.decks)
    {
        return make(Kind::Rocket, RED_JOKER);
    }
    // Two or three cards of more than one rank: refused as the pair or trio they most plausibly
    // meant (jokers alone as the rocket); three consecutive ranks are a straight too short.
    if n <= 3 && !(n == 3 && held.len() == 3 && is_run(&held)) {
        return Err(unlike_cards(n, &held, variant));
    }
    let first_count = counts[held[0]];
    if held.iter().all(|&rank| counts[rank] == first_count) {
        return read_sequence(first_count, &held, make);
    }
    let of_count = |wanted: u8| -> Vec<usize> {
        held.iter()
            .copied()
            .filter(|&rank| counts[rank] == wanted)
            .collect()
    };
    let (singles, pairs, trios, quads) = (of_count(1), of_count(2), of_count(3), of_count(4));
    if held.iter().any(|&rank| counts[rank] > 4) {
        return Err("no combination holds five or more of a rank unless it is a bomb".to_owned());
    }
    if !trios.is_empty() && quads.is_empty() {
        return read_trios(&trios, &singles, &pairs, n, variant, make);
    }
    if quads.len() == 1 && trios.is_empty() {
        return read_quad(quads[0], &singles, &pairs, variant, make);
    }
    Err("no combination".to_owned())
}

/// Why two or three cards of more than one rank are no play.
fn unlike_cards(n: usize, held: &[usize], variant: &Variant) -> String {
    if held.iter().all(|&rank| rank >= BLACK_JOKER) {
        return format!("the rocket is all {} jokers", 2 * variant.decks);
    }
    if n == 2 {
        "a pair needs two cards of the same rank"
    } else {
        "a trio needs three cards of the same rank"
    }
    .to_owned()
}

fn read_sequence(
    width: u8,
    run: &[usize],
    make: impl Fn(Kind, usize) -> Result<Combo, String>,
) -> Result<Combo, String> {
    let (kind, min_links) = match width {
        1 => (Kind::Straight, 5),
        2 => (Kind::PairSequence, 3),
        3 => (Kind::TrioSequence, 2),
        _ => return Err("no combination".to_owned()),
    };
    if run.len() < min_links {
        return Err(format!(
            "a {} needs at least {} consecutive ranks",
            kind.label(),
            min_links
        ));
    }
    let top = run[run.len() - 1];
    if top > ACE {
        return Err(format!("a {} may not contain 2 or a joker", kind.label()));
    }
    if !is_run(run) {
        return Err(format!("a {} needs consecutive ranks", kind.label()));
    }
    make(kind, top)
}

fn read_trios(
    trios: &[usize],
    singles: &[usize],
    pairs: &[usize],
    n: usize,
    variant: &Variant,
    make: impl Fn(Kind, usize) -> Result<Combo, String>,
) -> Result<Combo, String> {
    let links = trios.len();
    if links == 1 {
        if n == 4 && !singles.is_empty() {
            if !variant.has(Kind::TrioWithSingle) {
                return Err("trio with a single is not played in this variant".to_owned());
            }
            return make(Kind::TrioWithSingle, trios[0]);
        }
        if n == 5 && !pairs.is_empty() {
            return make(Kind::TrioWithPair, trios[0]);
        }
        return Err("a trio takes one single or one pair of another rank".to_owned());
    }
    if !is_run(trios) {
        return Err("the trios of an airplane must be consecutive ranks from 3 to A".to_owned());
    }
    let main = trios[links - 1];
    let both_jokers = |wings: &[usize]| wings.contains(&BLACK_JOKER) && wings.contains(&RED_JOKER);
    if singles.len() == links && pairs.is_empty() {
        if !variant.has(Kind::AirplaneWithSingles) {
            return Err("an airplane with single wings is not played in this variant".to_owned());
        }
        if both_jokers(singles) {
            return Err("both jokers may not be kickers".to_owned());
        }
        return make(Kind::AirplaneWithSingles, main);
    }
    if pairs.len() == links && singles.is_empty() {
        if both_jokers(pairs) {
            return Err("both joker pairs may not be kickers".to_owned());
        }
        return make(Kind::AirplaneWithPairs, main);
    }
    Err(format!(
        "{links} trios take {links} singles or {links} pairs, each of a different rank and none of a trio's rank"
    ))
}

fn read_quad(
    quad: usize,
    singles: &[usize],
    pairs: &[usize],
    variant: &Variant,
    make: impl Fn(Kind, usize) -> Result<Combo, String>,
) -> Result<Combo, String> {
    if singles.len() == 2 && pairs.is_empty() {
        if !variant.has(Kind::QuadWithTwoSingles) {
            return Err("four with two is not played in this variant".to_owned());
        }
        if singles == [BLACK_JOKER, RED_JOKER] {
            return Err("both jokers may not be kickers".to_owned());
        }
        return make(Kind::QuadWithTwoSingles, quad);
    }
    if pairs.len() == 2 && singles.is_empty() {
        if !variant.has(Kind::QuadWithTwoPairs) {
            return Err("four with two pairs is not played in this variant".to_owned());
        }
        return make(Kind::QuadWithTwoPairs, quad);
    }
    if !variant.has(Kind::QuadWithTwoSingles) && !variant.has(Kind::QuadWithTwoPairs) {
        // Where four of a rank never takes kickers (4p), talking of kickers would mislead.
        return Err(
            "four of a rank take no kickers in this variant: alone they are a bomb".to_owned(),
        );
    }
    Err("four of a rank take two singles or two pairs, of two other ranks".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts_of(ranks: &[usize]) -> Counts {
        let mut counts = [0; RANKS];
        for &rank in ranks {
            counts[rank] += 1;
        }
        counts
    }

    #[test]
    fn a_trio_with_a_single_reads_as_such_in_3p_only() {
        let three = Variant::three_player();
        let four = Variant::four_player();
        let play = read(&counts_of(&[0, 0, 0, 1]), &three).unwrap();
        assert_eq!(
            (play.kind, play.main, play.size),
            (Kind::TrioWithSingle, 0, 4)
        );
        assert_eq!(
            read(&counts_of(&[0, 0, 0, 1]), &four).unwrap_err(),
            "trio with a single is not played in this variant"
        );
    }

    #[test]
    fn refusals_are_worded_as_in_the_python_core() {
        let three = Variant::three_player();
        assert_eq!(read(&[0; RANKS], &three).unwrap_err(), "no cards");
        assert_eq!(
            read(&counts_of(&[13, 13]), &three).unwrap_err(),
            "the 3p deck holds only 1 BJ"
        );
        assert_eq!(
            read(&counts_of(&[0, 1]), &three).unwrap_err(),
            "a pair needs two cards of the same rank"
        );
        assert_eq!(
            read(&counts_of(&[0, 1, 2]), &three).unwrap_err(),
            "a straight needs at least 5 consecutive ranks"
        );
        assert_eq!(
            read(&counts_of(&[13, 13, 14]), &Variant::four_player()).unwrap_err(),
            "the rocket is all 4 jokers"
        );
        assert_eq!(
            read(&counts_of(&[0, 1, 2, 3]), &three).unwrap_err(),
            "a straight needs at least 5 consecutive ranks"
        );
        assert_eq!(
            read(&counts_of(&[8, 9, 10, 11, 12]), &three).unwrap_err(),
            "a straight may not contain 2 or a joker"
        );
    }

    #[test]
    fn rockets_beat_bombs_and_bigger_bombs_beat_smaller_ones() {
        let four = Variant::four_player();
        let rocket = read(&counts_of(&[13, 13, 14, 14]), &four).unwrap();
        let bomb8 = read(&counts_of(&[0; 8]), &four).unwrap();
        let bomb4 = read(&counts_of(&[12; 4]), &four).unwrap();
        assert!(
            beats(&rocket, &bomb8)
                && beats(&bomb8, &bomb4)
                && !beats(&bomb4, &bomb8)
                && !beats(&bomb8, &rocket)
        );
    }

    #[test]
    fn kinds_are_numbered_as_in_python() {
        assert_eq!(Kind::from_number(14), Some(Kind::QuadWithTwoPairs));
        assert_eq!(Kind::from_number(0), None);
        assert_eq!(Kind::from_number(15), None);
        assert_eq!(
            unpack(pack(&counts_of(&[3, 3, 14]))),
            counts_of(&[3, 3, 14])
        );
    }
}
