//! Properties of the environments' tables (`dizhu_engine::tables`) and of the `douzero`
//! encoding they write: any sequence of action ids, legal or not, plays a round to its end
//! without a fault, keeps the rows consistent and pays a zero-sum reward. Each case plays a
//! whole round, so the property tries 32 cases whatever `PROPTEST_CASES` says (the Python
//! differential tests play many more rounds).

use dizhu_engine::douzero::DouZeroLayout;
use dizhu_engine::moves::legal_moves;
use dizhu_engine::rules::{Counts, Variant, RANKS};
use dizhu_engine::tables::{ActionCodes, Config, OwnedSeen, Reward, Tables};
use proptest::prelude::*;
use std::sync::OnceLock;

/// Every play of a whole deck in a fixed order, after the pass and the bids: an action table
/// (made once per variant: listing a deck's plays is the slow part of these tests).
fn codes(variant: &Variant) -> ActionCodes {
    static TABLES: OnceLock<[ActionCodes; 2]> = OnceLock::new();
    let tables = TABLES.get_or_init(|| {
        [Variant::three_player(), Variant::four_player()].map(|variant| list_plays(&variant))
    });
    tables[usize::from(variant.players == 4)].clone()
}

fn list_plays(variant: &Variant) -> ActionCodes {
    let deck: Counts = std::array::from_fn(|rank| variant.copies(rank));
    let mut plays: Vec<Counts> = legal_moves(&deck, None, variant)
        .iter()
        .map(|play| play.counts())
        .collect();
    plays.sort_unstable();
    plays.dedup();
    let mut counts = vec![[0; RANKS]; 4];
    counts.extend(plays);
    ActionCodes::new(counts).expect("a valid table")
}

fn config(variant: Variant, spring: bool, reward: Reward) -> Config {
    Config {
        codes: codes(&variant),
        variant,
        spring,
        redeal_cap: 10,
        reward,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn any_actions_play_a_round_to_a_zero_sum_end(
        four in any::<bool>(),
        spring in any::<bool>(),
        seed in proptest::array::uniform32(any::<u8>()),
        dealer in 0usize..4,
        choices in proptest::collection::vec((any::<u16>(), 0u8..20), 400),
    ) {
        let variant = if four { Variant::four_player() } else { Variant::three_player() };
        let players = variant.players;
        let layout = DouZeroLayout::new(&variant);
        let mut owned = OwnedSeen::zeros(players, 1);
        let mut tables = Tables::new(config(variant, spring, Reward::Log), 1);
        let mut seen = owned.rows();
        tables.start(0, &seed, dealer % players, &mut seen).expect("a start");
        let mut observation = vec![0i8; layout.size];
        for (choice, wrong) in choices {
            let table = tables.table(0).expect("started");
            if table.is_over() {
                break;
            }
            let legal = table.legal().to_vec();
            prop_assert!(!legal.is_empty());
            prop_assert!(legal.windows(2).all(|pair| pair[0] < pair[1]));
            let action = if wrong == 0 { i64::from(choice) * 7919 - 50_000 } else { i64::from(legal[usize::from(choice) % legal.len()]) };
            let was_legal = tables.step(0, action, &mut seen).expect("a step");
            prop_assert_eq!(was_legal, u32::try_from(action).is_ok_and(|id| legal.contains(&id)));
            let table = tables.table(0).expect("started");
            for seat in 0..players {
                let held: i16 = seen.hands[seat * RANKS..(seat + 1) * RANKS].iter().map(|&n| i16::from(n)).sum();
                prop_assert_eq!(held, seen.hand_sizes[seat]);
                prop_assert_eq!(held as usize, table.round().hands[seat].len());
            }
            seen.seat[0] = table.turn() as i16;
            layout.encode(&seen, 0, &mut observation);
            prop_assert_eq!(observation[0] + observation[1], 1);
            prop_assert!(observation.iter().all(|&entry| entry == 0 || entry == 1));
        }
        let table = tables.table(0).expect("started");
        if let Some(settlement) = table.settlement() {
            let rewards = Reward::Log.of(settlement, players);
            prop_assert_eq!(rewards.iter().sum::<f64>(), 0.0);
            prop_assert_eq!(settlement.deltas.iter().sum::<i64>(), 0);
        }
    }
}

#[test]
fn wrong_tables_and_rows_are_refused() {
    assert!(ActionCodes::new(vec![[0; RANKS]; 3]).is_err());
    let mut doubled = vec![[0; RANKS]; 4];
    doubled.extend([[1; RANKS], [1; RANKS]]);
    assert!(ActionCodes::new(doubled).is_err());
    let mut owned = OwnedSeen::zeros(3, 1);
    let mut tables = Tables::new(config(Variant::three_player(), false, Reward::Win), 1);
    let mut seen = owned.rows();
    assert!(tables.step(0, 0, &mut seen).is_err());
    assert!(tables.start(1, &[0; 32], 0, &mut seen).is_err());
    assert!(tables.start(0, &[0; 31], 0, &mut seen).is_err());
    assert!(tables.start(0, &[0; 32], 3, &mut seen).is_err());
    assert!(tables.start(0, &[0; 32], 0, &mut seen).is_ok());
}

#[test]
fn passing_every_deal_ends_void_at_the_redeal_cap() {
    let mut owned = OwnedSeen::zeros(4, 1);
    let mut tables = Tables::new(config(Variant::four_player(), true, Reward::Settlement), 1);
    let mut seen = owned.rows();
    tables.start(0, &[3; 32], 1, &mut seen).expect("a start");
    let mut passes = 0;
    while !tables.table(0).expect("started").is_over() {
        assert!(tables.step(0, 0, &mut seen).expect("a pass"));
        passes += 1;
    }
    let table = tables.table(0).expect("started");
    assert_eq!((passes, table.redeals()), (4 * 11, 10));
    assert_eq!(
        Reward::Settlement.of(table.settlement().expect("settled"), 4),
        vec![0.0; 4]
    );
    assert_eq!(seen.phase[0], 2);
}
