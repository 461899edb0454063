//! One connection to a dizhu referee, the metadata sent with every call, how calls are retried,
//! and what a refusal's google.rpc details say (docs/api.md, "Errors").

use std::future::Future;
use std::time::Duration;

use hyper_util::rt::TokioIo;
use rand::RngCore;
use tokio::net::UnixStream;
use tonic::metadata::MetadataValue;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Uri};
use tonic::{Code, Request, Response, Status};
use tonic_types::StatusExt;
use tower::service_fn;

use crate::dizhu::v1::rules_service_client::RulesServiceClient;
use crate::dizhu::v1::table_service_client::TableServiceClient;
use crate::facts;

/// Each attempt of a call gets this long; one that runs past it is sent again, same request_id.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a failed call is sent again, and a lost stream opened again, before the bot gives
/// up: long enough to ride out a referee's restart (a minute is the horizon of every example bot).
pub const RETRY_HORIZON: Duration = Duration::from_secs(90);

#[derive(Clone)]
pub struct Referee {
    pub tables: TableServiceClient<Channel>,
    pub rules: RulesServiceClient<Channel>,
    /// The seat token, sent as `authorization: Bearer <token>`.
    pub token: Option<String>,
    /// The API key CreateTable needs on a referee configured with keys (`x-api-key`).
    pub api_key: Option<String>,
}

impl Referee {
    /// A lazily connected channel to `target` ("host:port", or "unix:/path/to/socket"). tonic
    /// wants a URI, so the scheme is added here: http:// for plaintext, https:// with TLS
    /// (checked against `ca_file`, PEM, or else the system's authorities). A Unix socket is
    /// dialled by a connector of its own, plaintext (tonic knows no unix: targets); a lost
    /// connection is dialled again by the next call.
    pub fn connect(
        target: &str,
        tls: bool,
        ca_file: Option<String>,
    ) -> Result<Self, Box<dyn std::error::Error>> {
        if let Some(path) = target.strip_prefix("unix:") {
            let path = path.trim_start_matches("//").to_owned();
            let channel = Endpoint::from_static("http://referee").connect_with_connector_lazy(
                service_fn(move |_: Uri| {
                    let path = path.clone();
                    async move {
                        Ok::<_, std::io::Error>(TokioIo::new(UnixStream::connect(path).await?))
                    }
                }),
            );
            return Ok(Self::over(channel));
        }
        let scheme = if tls { "https" } else { "http" };
        let mut endpoint = Endpoint::from_shared(format!("{scheme}://{target}"))?;
        if tls {
            let mut config = ClientTlsConfig::new().with_native_roots();
            if let Some(path) = ca_file.filter(|path| !path.is_empty()) {
                config = config.ca_certificate(Certificate::from_pem(std::fs::read(path)?));
            }
            endpoint = endpoint.tls_config(config)?;
        }
        Ok(Self::over(endpoint.connect_lazy()))
    }

    fn over(channel: Channel) -> Self {
        Referee {
            tables: TableServiceClient::new(channel.clone()),
            rules: RulesServiceClient::new(channel),
            token: None,
            api_key: None,
        }
    }

    /// The message as a request with this referee's metadata and, if given, a deadline.
    pub fn request<T>(&self, message: T, timeout: Option<Duration>) -> Request<T> {
        let mut request = Request::new(message);
        if let Some(token) = &self.token {
            if let Ok(value) = MetadataValue::try_from(format!("Bearer {token}")) {
                request.metadata_mut().insert("authorization", value);
            }
        }
        if let Some(key) = &self.api_key {
            if let Ok(value) = MetadataValue::try_from(key.as_str()) {
                request.metadata_mut().insert("x-api-key", value);
            }
        }
        if let Some(timeout) = timeout {
            request.set_timeout(timeout);
        }
        request
    }

    /// Runs one RPC, sending the very same request again while the failure says it may not
    /// have been applied (a deadline, a lost connection, a referee restarting) or asks to come
    /// back later (a reason of the RETRYABLE category, after its RetryInfo delay), for up to
    /// RETRY_HORIZON, backing off as retry_policy.json says.
    pub async fn call<T, U, F, Fut>(&self, name: &str, message: T, rpc: F) -> Result<U, Status>
    where
        T: Clone,
        F: Fn(Request<T>) -> Fut,
        Fut: Future<Output = Result<Response<U>, Status>>,
    {
        let mut delay = facts::initial_backoff();
        let give_up = tokio::time::Instant::now() + RETRY_HORIZON;
        loop {
            match rpc(self.request(message.clone(), Some(CALL_TIMEOUT))).await {
                Ok(response) => return Ok(response.into_inner()),
                Err(status) if tokio::time::Instant::now() < give_up && retryable(&status) => {
                    let wait = facts::retry_wait(
                        delay,
                        status
                            .get_details_retry_info()
                            .and_then(|info| info.retry_delay)
                            .unwrap_or_default(),
                    );
                    eprintln!(
                        "{name}: {}; sending it again with the same request_id in {wait:?}",
                        describe(&status)
                    );
                    tokio::time::sleep(wait).await;
                    delay = facts::next_backoff(delay);
                }
                Err(status) => return Err(status),
            }
        }
    }
}

/// A random idempotency key: 32 hex digits (CreateTable and JoinTable want at least 16 random
/// characters, and keep them secret like tokens).
pub fn new_request_id() -> String {
    let mut bytes = [0u8; 16];
    rand::rng().fill_bytes(&mut bytes);
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn retryable(status: &Status) -> bool {
    facts::decide_status(status) == facts::Decision::Retry
}

/// ErrorInfo.reason: the ErrorReason's name without its ERROR_REASON_ prefix
/// ("NOT_YOUR_TURN"), or the code's name for errors gRPC itself ends a call with.
pub fn reason_of(status: &Status) -> String {
    status
        .get_details_error_info()
        .map_or_else(|| code_name(status.code()), |info| info.reason)
}

/// Like "FAILED_PRECONDITION NOT_YOUR_TURN: ... table_id=abc turn_seat=2".
pub fn describe(status: &Status) -> String {
    let mut line = format!(
        "{} {}: {}",
        code_name(status.code()),
        reason_of(status),
        status.message()
    );
    if let Some(info) = status.get_details_error_info() {
        let mut metadata: Vec<_> = info.metadata.into_iter().collect();
        metadata.sort();
        for (key, value) in metadata {
            line += &format!(" {key}={value}");
        }
    }
    if let Some(bad_request) = status.get_details_bad_request() {
        for violation in bad_request.field_violations {
            line += &format!(" [{}: {}]", violation.field, violation.description);
        }
    }
    line
}

/// The code as gRPC's status names spell it: FAILED_PRECONDITION, not FailedPrecondition.
pub fn code_name(code: Code) -> String {
    let name = format!("{code:?}");
    let mut spelled = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            spelled.push('_');
        }
        spelled.push(c.to_ascii_uppercase());
    }
    if code == Code::Cancelled {
        "CANCELLED".into()
    } else {
        spelled
    }
}
