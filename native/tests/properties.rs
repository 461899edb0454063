//! Property tests of classification and legal moves (proptest), bounded for the suite:
//! `PROPTEST_CASES` sets how many cases each property tries (256 unless told).

use dizhu_engine::moves::legal_moves;
use dizhu_engine::rules::{beats, read, Counts, Variant, RANKS};
use proptest::prelude::*;

fn variant_strategy() -> impl Strategy<Value = Variant> {
    prop_oneof![Just(Variant::three_player()), Just(Variant::four_player())]
}

/// Rank counts of any size, up to one more of a rank than two decks hold.
fn any_counts() -> impl Strategy<Value = Counts> {
    proptest::array::uniform15(0u8..=9)
}

/// A hand the deck of `variant` can hold.
fn hand_of(variant: &Variant) -> impl Strategy<Value = Counts> {
    let limits: Vec<u8> = (0..RANKS).map(|rank| variant.copies(rank)).collect();
    limits
        .into_iter()
        .map(|limit| 0..=limit)
        .collect::<Vec<_>>()
        .prop_map(|counts| counts.try_into().unwrap_or([0; RANKS]))
}

fn variant_and_hands() -> impl Strategy<Value = (Variant, Counts, Counts)> {
    variant_strategy().prop_flat_map(|variant| {
        let hands = (hand_of(&variant), hand_of(&variant));
        (Just(variant), hands).prop_map(|(variant, (hand, other))| (variant, hand, other))
    })
}

proptest! {
    #[test]
    fn every_card_set_has_one_reading_or_a_reason(variant in variant_strategy(), counts in any_counts()) {
        match read(&counts, &variant) {
            Ok(play) => {
                prop_assert_eq!(play.counts(), counts);
                prop_assert_eq!(usize::from(play.size), counts.iter().map(|&c| usize::from(c)).sum::<usize>());
                prop_assert!(counts[usize::from(play.main)] > 0);
            }
            Err(reason) => prop_assert!(!reason.is_empty()),
        }
    }

    #[test]
    fn every_legal_move_is_held_reads_as_itself_and_beats_the_play((variant, hand, other) in variant_and_hands()) {
        let leads = legal_moves(&other, None, &variant);
        let to_beat = leads.get(leads.len() / 2).copied();
        let moves = legal_moves(&hand, to_beat.as_ref(), &variant);
        let mut seen = std::collections::HashSet::new();
        for play in &moves {
            prop_assert!(seen.insert(play.key), "a play listed twice: {:?}", play);
            let counts = play.counts();
            prop_assert!((0..RANKS).all(|rank| counts[rank] <= hand[rank]), "not held: {:?}", play);
            // A hand here may hold more than a landlord's, and so list sets no hand can play:
            // those are no combination (rules.md §6, Decision "larger than a hand").
            if usize::from(play.size) > variant.hand_size + variant.kitty_size {
                prop_assert!(read(&counts, &variant).is_err());
                continue;
            }
            prop_assert_eq!(read(&counts, &variant), Ok(*play));
            if let Some(to_beat) = &to_beat {
                prop_assert!(beats(play, to_beat), "{:?} does not beat {:?}", play, to_beat);
            }
        }
    }
}
