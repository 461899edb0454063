//! The seeded deal of docs/deal.md, bit for bit (docs/rules.md sections 3 and 8).

use sha2::{Digest, Sha256};

use crate::rules::Variant;

const STREAM_LABEL: &[u8] = b"dizhu/deal/v1";

/// The stream of uniform draws of steps 1 and 2.
pub struct Stream {
    prefix: Sha256,
    counter: u32,
    words: [u32; 8],
    next: usize,
}

impl Stream {
    pub fn new(seed: &[u8]) -> Stream {
        let mut prefix = Sha256::new();
        prefix.update(STREAM_LABEL);
        prefix.update(seed);
        Stream {
            prefix,
            counter: 0,
            words: [0; 8],
            next: 8,
        }
    }

    fn word(&mut self) -> u32 {
        if self.next == 8 {
            let block = self
                .prefix
                .clone()
                .chain_update(self.counter.to_be_bytes())
                .finalize();
            for (word, bytes) in self.words.iter_mut().zip(block.chunks_exact(4)) {
                *word = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
            }
            self.counter = self.counter.wrapping_add(1);
            self.next = 0;
        }
        self.next += 1;
        self.words[self.next - 1]
    }

    /// A uniform draw in `0 .. n` (`n >= 1`), by rejection.
    pub fn below(&mut self, n: u32) -> u32 {
        let limit = (1u64 << 32) - (1u64 << 32) % u64::from(n);
        loop {
            let word = self.word();
            if u64::from(word) < limit {
                return word % n;
            }
        }
    }
}

/// Steps 3 and 4: the shuffled card ids and the face-up card's position.
pub fn shuffle(seed: &[u8], variant: &Variant) -> (Vec<u8>, usize) {
    let mut stream = Stream::new(seed);
    let mut order: Vec<u8> = (0..variant.deck_size()).map(|id| id as u8).collect();
    for i in (1..order.len()).rev() {
        let j = stream.below(i as u32 + 1) as usize;
        order.swap(i, j);
    }
    let face_up = stream.below((variant.players * variant.hand_size) as u32) as usize;
    (order, face_up)
}

/// A dealt round: every hand (sorted as hands are kept), the kitty in deck order, who drew the face-up card.
pub struct Dealt {
    pub hands: Vec<Vec<u8>>,
    pub kitty: Vec<u8>,
    pub face_up: u8,
    pub face_up_seat: usize,
}

/// The sort key of a card id for the order hands are kept in: by rank, suit, copy.
pub fn sort_key(card: u8) -> u8 {
    let (copy, index) = (card / 54, card % 54);
    let (rank, suit) = if index >= 52 {
        (13 + index - 52, 4)
    } else {
        (index / 4, index % 4)
    };
    16 * rank + 2 * suit + copy
}

/// The rank of a card id.
pub fn rank_of(card: u8) -> usize {
    let index = card % 54;
    usize::from(if index >= 52 {
        13 + index - 52
    } else {
        index / 4
    })
}

/// Step 5: the deal of `variant` from `seed`, `dealer` dealing.
pub fn deal(seed: &[u8], variant: &Variant, dealer: usize) -> Dealt {
    let (order, face_up_position) = shuffle(seed, variant);
    let players = variant.players;
    let dealt = players * variant.hand_size;
    let mut hands = vec![Vec::with_capacity(variant.hand_size + variant.kitty_size); players];
    for (position, &card) in order[..dealt].iter().enumerate() {
        hands[(dealer + 1 + position) % players].push(card);
    }
    for hand in &mut hands {
        hand.sort_unstable_by_key(|&card| sort_key(card));
    }
    Dealt {
        hands,
        kitty: order[dealt..].to_vec(),
        face_up: order[face_up_position],
        face_up_seat: (dealer + 1 + face_up_position) % players,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worked_example_of_docs_deal_md() {
        let (order, face_up) = shuffle(&[0; 32], &Variant::three_player());
        assert_eq!(&order[..10], &[5, 7, 42, 14, 0, 1, 28, 17, 21, 50]);
        assert_eq!(&order[51..], &[35, 34, 11]);
        assert_eq!(face_up, 38);
        let dealt = deal(&[0; 32], &Variant::three_player(), 0);
        assert_eq!((dealt.face_up, dealt.face_up_seat), (22, 0));
        assert_eq!(dealt.hands[1][..3], [5, 10, 13]);
    }
}
