//! The rows of a `Seen` (`dizhu.env.info`): what the seats of the environments' tables see,
//! written by `tables` move by move and read by the encodings (`douzero`). Its own module so
//! that the writer and the readers depend on it, not on each other.

use crate::rules::RANKS;

/// A `Seen` keeps the last five moves of every seat.
pub const HISTORY_PER_SEAT: usize = 5;

/// The rows of a `Seen`, as flat C-ordered slices of its arrays (the names are its fields).
pub struct SeenRows<'a> {
    pub phase: &'a mut [i8],
    pub seat: &'a mut [i16],
    pub hands: &'a mut [i8],
    pub hand_sizes: &'a mut [i16],
    pub dealer: &'a mut [i16],
    pub face_up_rank: &'a mut [i16],
    pub face_up_seat: &'a mut [i16],
    pub bid: &'a mut [i16],
    pub bidder: &'a mut [i16],
    pub landlord: &'a mut [i16],
    pub calls: &'a mut [i16],
    pub kitty: &'a mut [i8],
    pub played: &'a mut [i8],
    pub last_moves: &'a mut [i8],
    pub history: &'a mut [i8],
    pub to_beat: &'a mut [i8],
    pub to_beat_kind: &'a mut [i16],
    pub last_player: &'a mut [i16],
    pub doublings: &'a mut [i16],
}

/// The widths of the fields of one `Seen` row, by field, for `players` seats (in the field order).
pub fn seen_widths(players: usize) -> [usize; 19] {
    let cards = players * RANKS;
    [
        1,
        1,
        cards,
        players,
        1,
        1,
        1,
        1,
        1,
        1,
        players,
        RANKS,
        cards,
        cards,
        HISTORY_PER_SEAT * cards,
        RANKS,
        1,
        1,
        1,
    ]
}
