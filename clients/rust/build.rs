// Generates the dizhu.v1 client stubs from ../../proto with tonic-prost-build, which runs
// protoc ($PROTOC, else protoc on the PATH: Debian's protobuf-compiler), and `reason_facts.rs`:
// the contract's facts the bot acts on, read here rather than typed in src/ (prost keeps no
// custom options in its types): each ErrorReason's status code and category, from the
// (dizhu.v1.facts) option of errors.proto in the descriptor set protoc writes, and the numbers of
// retry_policy.json, the retry policy every client shares (tonic takes no gRPC service config).
use std::error::Error;
use std::fmt::Write as _;
use std::path::PathBuf;

const RETRY_POLICY: &str = "../python/dizhu/client/retry_policy.json";
/// The extension number of `dizhu.v1.facts` (errors.proto).
const FACTS_FIELD: u64 = 51000;

type Outcome<T> = Result<T, Box<dyn Error>>;
/// A message's wire fields: (field number, varint value, bytes of a length-delimited field).
type Fields<'a> = Vec<(u64, u64, &'a [u8])>;
/// (reason without its prefix, status code name, ErrorCategory number).
type ReasonFacts = Vec<(String, String, u64)>;

fn main() -> Outcome<()> {
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    let descriptors = out.join("dizhu.binpb");
    tonic_prost_build::configure()
        .build_server(false)
        .file_descriptor_set_path(&descriptors)
        .compile_protos(
            &[
                "../../proto/dizhu/v1/table_service.proto",
                "../../proto/dizhu/v1/rules_service.proto",
                "../../proto/dizhu/v1/errors.proto",
            ],
            &["../../proto"],
        )?;
    let mut facts = String::from(
        "/// Each ErrorReason (its name without ERROR_REASON_), its status code and its ErrorCategory number.\n\
         pub const REASON_FACTS: &[(&str, &str, i32)] = &[\n",
    );
    for (reason, code, category) in reason_facts(&std::fs::read(&descriptors)?)? {
        writeln!(facts, "    ({reason:?}, {code:?}, {category}),")?;
    }
    facts += "];\n";
    let policy = std::fs::read_to_string(RETRY_POLICY)?;
    let codes = json_strings(&policy, "retryableStatusCodes")?;
    write!(
        facts,
        "/// retry_policy.json's codes retried without an ErrorInfo, first backoff, its cap and multiplier.\n\
         pub const RETRYABLE_CODES: &[&str] = &{codes:?};\n\
         pub const INITIAL_BACKOFF_MS: u64 = {};\n\
         pub const MAX_BACKOFF_MS: u64 = {};\n\
         pub const BACKOFF_MULTIPLIER: f64 = {:?};\n",
        json_millis(&policy, "initialBackoff")?,
        json_millis(&policy, "maxBackoff")?,
        json_number(&policy, "backoffMultiplier")?,
    )?;
    std::fs::write(out.join("reason_facts.rs"), facts)?;
    println!("cargo:rerun-if-changed=../../proto/dizhu/v1");
    println!("cargo:rerun-if-changed={RETRY_POLICY}");
    Ok(())
}

/// The protobuf wire fields of `bytes`.
fn fields(mut bytes: &[u8]) -> Outcome<Fields<'_>> {
    let mut found = Vec::new();
    while !bytes.is_empty() {
        let key = varint(&mut bytes)?;
        match key & 7 {
            0 => found.push((key >> 3, varint(&mut bytes)?, &[][..])),
            2 => {
                let length = usize::try_from(varint(&mut bytes)?)?;
                let (value, rest) = bytes
                    .split_at_checked(length)
                    .ok_or("truncated descriptor")?;
                found.push((key >> 3, 0, value));
                bytes = rest;
            }
            1 => bytes = bytes.get(8..).ok_or("truncated descriptor")?,
            5 => bytes = bytes.get(4..).ok_or("truncated descriptor")?,
            other => return Err(format!("wire type {other} in a descriptor").into()),
        }
    }
    Ok(found)
}

fn varint(bytes: &mut &[u8]) -> Outcome<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = bytes.split_first().ok_or("truncated varint")?;
        *bytes = rest;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err("overlong varint".into())
}

/// (reason, code, category) of every value of dizhu.v1.ErrorReason that has facts. The path:
/// FileDescriptorSet.file (1) -> FileDescriptorProto.enum_type (5) named ErrorReason -> value (2)
/// -> options (3) -> the facts extension -> ErrorFacts.code (1), category (2).
fn reason_facts(set: &[u8]) -> Outcome<ReasonFacts> {
    let mut found = Vec::new();
    for (_, _, file) in fields(set)?.into_iter().filter(|field| field.0 == 1) {
        for (_, _, enumeration) in fields(file)?.into_iter().filter(|field| field.0 == 5) {
            let parts = fields(enumeration)?;
            if !parts
                .iter()
                .any(|&(number, _, name)| number == 1 && name == b"ErrorReason")
            {
                continue;
            }
            for (_, _, value) in parts.into_iter().filter(|field| field.0 == 2) {
                let value = fields(value)?;
                let name = value.iter().find(|field| field.0 == 1).map(|field| field.2);
                let name = std::str::from_utf8(name.ok_or("an enum value without a name")?)?;
                for (_, _, options) in value.iter().filter(|field| field.0 == 3) {
                    for (_, _, facts) in fields(options)?
                        .into_iter()
                        .filter(|field| field.0 == FACTS_FIELD)
                    {
                        let facts = fields(facts)?;
                        let code = facts
                            .iter()
                            .find(|field| field.0 == 1)
                            .map_or(&[][..], |field| field.2);
                        let category = facts
                            .iter()
                            .find(|field| field.0 == 2)
                            .map_or(0, |field| field.1);
                        let reason = name
                            .strip_prefix("ERROR_REASON_")
                            .ok_or("an ErrorReason without its prefix")?;
                        found.push((
                            reason.to_owned(),
                            std::str::from_utf8(code)?.to_owned(),
                            category,
                        ));
                    }
                }
            }
        }
    }
    if found.is_empty() {
        return Err("no ErrorReason facts in the descriptor set".into());
    }
    Ok(found)
}

/// The text after `"key":` in retry_policy.json (one retryPolicy; its keys are unique).
fn json_value<'a>(json: &'a str, key: &str) -> Outcome<&'a str> {
    let at = json
        .find(&format!("\"{key}\""))
        .ok_or_else(|| format!("{RETRY_POLICY}: no {key}"))?;
    let rest = &json[at + key.len() + 2..];
    Ok(rest
        .trim_start()
        .strip_prefix(':')
        .ok_or("no ':' after a key")?
        .trim_start())
}

fn json_strings(json: &str, key: &str) -> Outcome<Vec<String>> {
    let list = json_value(json, key)?
        .strip_prefix('[')
        .ok_or("not a list")?;
    let list = &list[..list.find(']').ok_or("an unclosed list")?];
    Ok(list
        .split(',')
        .map(|item| item.trim().trim_matches('"').to_owned())
        .collect())
}

fn json_number(json: &str, key: &str) -> Outcome<f64> {
    let value = json_value(json, key)?;
    let end = value
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(value.len());
    Ok(value[..end].parse()?)
}

/// A service config duration ("0.05s") in milliseconds.
fn json_millis(json: &str, key: &str) -> Outcome<u64> {
    let value = json_value(json, key)?
        .strip_prefix('"')
        .ok_or("not a duration")?;
    let seconds: f64 = value[..value.find("s\"").ok_or("not a duration in seconds")?].parse()?;
    Ok((seconds * 1000.0).round() as u64)
}
