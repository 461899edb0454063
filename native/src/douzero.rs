//! The `douzero` observation encoding of `dizhu.env.encodings` (version 0, docs/env.md), entry
//! for entry, from one row of a `Seen`: `[auction, play] [role one-hot] [auction block]
//! [x_no_action, zero-padded to the larger role] [z]`. The numpy encoder stays the reference;
//! the tests compare both on every observation of seeded random games.

use crate::round::MAX_BID;
use crate::rules::{Variant, BLACK_JOKER, RANKS};
use crate::seen::{SeenRows, HISTORY_PER_SEAT};

/// DouZero's 15-entry count of doubling plays.
const BOMB_SLOTS: usize = 15;
const CALLS: usize = MAX_BID as usize + 2;

/// Where each block of the encoding lies, for one variant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DouZeroLayout {
    players: usize,
    decks: u8,
    hand_size: usize,
    landlord_hand_size: usize,
    auction_size: usize,
    state_size: usize,
    history_size: usize,
    /// The length of an observation.
    pub size: usize,
}

impl DouZeroLayout {
    pub fn new(variant: &Variant) -> DouZeroLayout {
        let players = variant.players;
        let card = 54 * usize::from(variant.decks);
        let (hand, landlord_hand) = (variant.hand_size, variant.hand_size + variant.kitty_size);
        let auction_size = 2 * card + 2 * players + usize::from(MAX_BID) + 1 + players * CALLS;
        let landlord = 3 * card + (players - 1) * (card + hand) + BOMB_SLOTS;
        let farmer = (3 + 2 * (players - 1)) * card + landlord_hand + (players - 2) * hand;
        let state_size = landlord.max(farmer + BOMB_SLOTS);
        let history_size = HISTORY_PER_SEAT * players * card;
        DouZeroLayout {
            players,
            decks: variant.decks,
            hand_size: hand,
            landlord_hand_size: landlord_hand,
            auction_size,
            state_size,
            history_size,
            size: 2 + players + auction_size + state_size + history_size,
        }
    }

    /// Writes the observation of row `row` (its viewer is `seen.seat[row]`) into `out` (`size` entries).
    pub fn encode(&self, seen: &SeenRows<'_>, row: usize, out: &mut [i8]) {
        let players = self.players;
        out.fill(0);
        let seat = usize::try_from(seen.seat[row]).unwrap_or(0) % players;
        let relative = |other: i16| i64::from(other) - seat as i64;
        let in_auction = seen.phase[row] == 0;
        out[0] = i8::from(in_auction);
        out[1] = i8::from(!in_auction);
        let mut at = 2 + players;
        let own = self.seat_counts(seen.hands, row, seat);
        let mut face_up = [0i8; RANKS];
        face_up[usize::try_from(seen.face_up_rank[row]).unwrap_or(0) % RANKS] = 1;
        at += self.cards(&mut out[at..], own);
        at += self.cards(&mut out[at..], &face_up);
        at += one_hot(&mut out[at..], relative(seen.face_up_seat[row]), players);
        at += one_hot(&mut out[at..], relative(seen.dealer[row]), players);
        at += one_hot(
            &mut out[at..],
            i64::from(seen.bid[row]),
            usize::from(MAX_BID) + 1,
        );
        for offset in 0..players {
            let call = seen.calls[row * players + (seat + offset) % players];
            at += one_hot(&mut out[at..], i64::from(call) + 1, CALLS);
        }
        debug_assert_eq!(at, 2 + players + self.auction_size);
        let Ok(landlord) = usize::try_from(seen.landlord[row]) else {
            return;
        };
        if in_auction {
            return;
        }
        let landlord = landlord % players;
        let role = (seat + players - landlord) % players;
        out[2 + role] = 1;
        self.state_features(
            seen,
            row,
            seat,
            landlord,
            role,
            &mut out[at..at + self.state_size],
        );
        at += self.state_size;
        let history = HISTORY_PER_SEAT * players * RANKS;
        for (index, moved) in seen.history[row * history..(row + 1) * history]
            .chunks_exact(RANKS)
            .enumerate()
        {
            self.cards(&mut out[at + index * 54 * usize::from(self.decks)..], moved);
        }
    }

    fn seat_counts<'s>(&self, field: &'s [i8], row: usize, seat: usize) -> &'s [i8] {
        &field[(row * self.players + seat) * RANKS..][..RANKS]
    }

    /// DouZero's `x_no_action` of the viewer `seat` with `role` (0: the landlord).
    fn state_features(
        &self,
        seen: &SeenRows<'_>,
        row: usize,
        seat: usize,
        landlord: usize,
        role: usize,
        out: &mut [i8],
    ) {
        let players = self.players;
        let own = self.seat_counts(seen.hands, row, seat);
        let mut unseen = [0i8; RANKS];
        for (rank, entry) in unseen.iter_mut().enumerate() {
            let copies = if rank < BLACK_JOKER {
                4 * self.decks
            } else {
                self.decks
            } as i8;
            let played: i8 = (0..players)
                .map(|other| self.seat_counts(seen.played, row, other)[rank])
                .fold(0, i8::wrapping_add);
            *entry = copies.wrapping_sub(own[rank]).wrapping_sub(played);
        }
        let seat_of = |offset: usize| (landlord + offset) % players;
        let to_beat = &seen.to_beat[row * RANKS..(row + 1) * RANKS];
        let size_of = |other: usize| i64::from(seen.hand_sizes[row * players + other]) - 1;
        let mut at = self.cards(out, own);
        at += self.cards(&mut out[at..], &unseen);
        if role == 0 {
            let farmers: Vec<usize> = (1..players).rev().map(seat_of).collect();
            at += self.cards(&mut out[at..], to_beat);
            for &farmer in &farmers {
                at += self.cards(&mut out[at..], self.seat_counts(seen.played, row, farmer));
            }
            for &farmer in &farmers {
                at += one_hot(&mut out[at..], size_of(farmer), self.hand_size);
            }
        } else {
            let landlord_seat = seat_of(0);
            let mates: Vec<usize> = (1..players)
                .filter(|&other| other != role)
                .map(seat_of)
                .collect();
            at += self.cards(
                &mut out[at..],
                self.seat_counts(seen.played, row, landlord_seat),
            );
            for &mate in &mates {
                at += self.cards(&mut out[at..], self.seat_counts(seen.played, row, mate));
            }
            at += self.cards(&mut out[at..], to_beat);
            at += self.cards(
                &mut out[at..],
                self.seat_counts(seen.last_moves, row, landlord_seat),
            );
            for &mate in &mates {
                at += self.cards(&mut out[at..], self.seat_counts(seen.last_moves, row, mate));
            }
            at += one_hot(
                &mut out[at..],
                size_of(landlord_seat),
                self.landlord_hand_size,
            );
            for &mate in &mates {
                at += one_hot(&mut out[at..], size_of(mate), self.hand_size);
            }
        }
        one_hot(&mut out[at..], i64::from(seen.doublings[row]), BOMB_SLOTS);
    }

    /// The card vector of `counts` (`card_matrix`): for each rank as many leading ones as cards;
    /// `out` is zero already, so only the ones are written.
    fn cards(&self, out: &mut [i8], counts: &[i8]) -> usize {
        let mut at = 0;
        for (rank, &count) in counts.iter().enumerate().take(RANKS) {
            let copies = usize::from(if rank < BLACK_JOKER {
                4 * self.decks
            } else {
                self.decks
            });
            let ones = usize::try_from(count).unwrap_or(0).min(copies);
            out[at..at + ones].fill(1);
            at += copies;
        }
        at
    }
}

/// A one-hot block of `size` entries at `index` taken modulo `size` (as numpy's `%`); its size.
fn one_hot(out: &mut [i8], index: i64, size: usize) -> usize {
    out[index.rem_euclid(size as i64) as usize] = 1;
    size
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sizes_are_those_of_the_numpy_encoder() {
        // DouZeroEncoding(VARIANTS[...]).size
        assert_eq!(DouZeroLayout::new(&Variant::three_player()).size, 1378);
        assert_eq!(DouZeroLayout::new(&Variant::four_player()).size, 3484);
    }
}
