//! What the bot does after a failed call, decided from the contract's facts rather than from
//! lists of reasons typed here: each ErrorReason's category (the (dizhu.v1.facts) option of
//! proto/dizhu/v1/errors.proto) and the retry policy every client shares (retry_policy.json),
//! both read by build.rs into `reason_facts.rs` (tonic takes no gRPC service config, so the bot's
//! own retry loops follow the policy's numbers).

use std::time::Duration;

use tonic::{Code, Status};

use crate::dizhu::v1::ErrorCategory;
use crate::referee::{code_name, reason_of};

mod generated {
    include!(concat!(env!("OUT_DIR"), "/reason_facts.rs"));
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Decision {
    /// Nothing was applied: send the very same request again.
    Retry,
    /// The table is not where the bot thought: read it again and decide again.
    MovedOn,
    /// The same request would be refused again.
    Fatal,
}

impl Decision {
    fn label(self) -> &'static str {
        match self {
            Decision::Retry => "retry",
            Decision::MovedOn => "moved_on",
            Decision::Fatal => "fatal",
        }
    }
}

/// By the reason's category; for a reason without facts (gRPC's own errors, a newer referee's
/// reasons), by the policy's retryable codes alone.
pub fn decide(code: Code, reason: &str) -> Decision {
    let category = generated::REASON_FACTS
        .iter()
        .find(|(name, _, _)| *name == reason)
        .map(|&(_, _, category)| category);
    match category.and_then(|number| ErrorCategory::try_from(number).ok()) {
        Some(ErrorCategory::Retryable) => Decision::Retry,
        Some(ErrorCategory::MovedOn) => Decision::MovedOn,
        Some(_) => Decision::Fatal,
        None if generated::RETRYABLE_CODES.contains(&code_name(code).as_str()) => Decision::Retry,
        None => Decision::Fatal,
    }
}

/// The decision for a failed call.
pub fn decide_status(status: &Status) -> Decision {
    decide(status.code(), &reason_of(status))
}

/// The policy's first backoff.
pub fn initial_backoff() -> Duration {
    Duration::from_millis(generated::INITIAL_BACKOFF_MS)
}

/// The backoff after `delay`: grown by the policy's multiplier, capped at its maximum.
pub fn next_backoff(delay: Duration) -> Duration {
    delay
        .mul_f64(generated::BACKOFF_MULTIPLIER)
        .min(Duration::from_millis(generated::MAX_BACKOFF_MS))
}

/// The wait before sending again: the backoff, or the RetryInfo delay when longer, capped at
/// the policy's maximum backoff.
pub fn retry_wait(delay: Duration, retry_info: Duration) -> Duration {
    delay
        .max(retry_info)
        .min(Duration::from_millis(generated::MAX_BACKOFF_MS))
}

fn code_named(name: &str) -> Code {
    (0..=16)
        .map(Code::from_i32)
        .find(|&code| code_name(code) == name)
        .unwrap_or(Code::Unknown)
}

/// The hidden flag --print-reason-facts: the decision for every ErrorReason (with the code its
/// facts give) and for each code the policy retries, and the backoff, as one line of JSON
/// (tests/polyglot/test_reason_facts.py compares it with the contract).
pub fn print() {
    let decisions: Vec<String> = generated::REASON_FACTS
        .iter()
        .map(|&(reason, code, _)| (reason, decide(code_named(code), reason)))
        .chain(
            generated::RETRYABLE_CODES
                .iter()
                .filter(|&&code| !generated::REASON_FACTS.iter().any(|facts| facts.0 == code))
                .map(|&code| (code, decide(code_named(code), code))),
        )
        .map(|(name, decision)| format!("{name:?}:{:?}", decision.label()))
        .collect();
    println!(
        "{{\"decisions\":{{{}}},\"initial_backoff_ms\":{},\"max_backoff_ms\":{},\"backoff_multiplier\":{}}}",
        decisions.join(","),
        generated::INITIAL_BACKOFF_MS,
        generated::MAX_BACKOFF_MS,
        generated::BACKOFF_MULTIPLIER
    );
}
