// dizhu-bot plays a seat of a dizhu table at random among the legal choices, through the
// referee's gRPC API (docs/api.md), until the table closes.
//
//   dizhu-bot --create [--variant 3p|4p] [--rounds 1]     create a table, print {"table_id", "creator_token"}
//   dizhu-bot --table ID [--name NAME | --token TOKEN]   take a seat (or play a token's) to the end
//
// Joining prints {"table_id", "seat", "seat_token"} at once: --token plays that seat again (after
// a crash, say), where joining anew would find the table full. --target is host:port or
// unix:/path/to/socket.
//
// Without flags it reads DIZHU_TARGET, DIZHU_TABLE_ID and DIZHU_SEAT_TOKEN (and DIZHU_TLS,
// DIZHU_TLS_CA), as `dizhu tournament` starts a gRPC entrant. At the end it prints
// {"table_id", "seat", "decisions", "reads", "balances"} as one line of JSON.

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include "dizhu/v1/errors.pb.h"
#include "dizhu/v1/rules_service.grpc.pb.h"
#include "dizhu/v1/table_service.grpc.pb.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"

namespace {

using dizhu::v1::TableView;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// The retry policy every dizhu client follows, a gRPC service config: retry_policy.json, which
// CMake reads from the Python SDK into this literal.
const char* const kRetryPolicy =
#include "retry_policy.inc"
    ;

// How long a failed call is sent again, and a lost stream opened again, before the bot gives up:
// long enough to ride out a referee's restart (a minute is the horizon of every example bot).
constexpr milliseconds kRetryHorizon(90000);
// Silence after which a WatchTable stream counts as lost: the referee sends a heartbeat on an
// idle stream every 20 s, so a longer silence is a dead connection nobody told the bot about.
constexpr milliseconds kIdleStream(45000);

// The numbers of kRetryPolicy's retryPolicy the bot's own retry loops use: the first backoff,
// its cap (also the cap of a RetryInfo delay), its multiplier, and the codes retried even
// without an ErrorInfo (gRPC's own errors).
struct RetryPolicy {
  milliseconds initial_backoff{0};
  milliseconds max_backoff{0};
  double multiplier = 0;
  std::set<std::string> codes;

  static const RetryPolicy& Shared() {
    static const RetryPolicy policy = Parse(kRetryPolicy);
    return policy;
  }

  // The backoff after `delay`: grown by the multiplier, capped at the maximum.
  milliseconds Next(milliseconds delay) const {
    return std::min(milliseconds(static_cast<int64_t>(static_cast<double>(delay.count()) * multiplier)), max_backoff);
  }

  // The wait before sending again: the backoff, or the RetryInfo delay when longer, capped.
  milliseconds Wait(milliseconds delay, milliseconds retry_info) const {
    return std::min(std::max(delay, retry_info), max_backoff);
  }

 private:
  static RetryPolicy Parse(const std::string& json) {
    google::protobuf::Struct config;
    if (!google::protobuf::util::JsonStringToMessage(json, &config).ok()) {
      std::cerr << "retry_policy.json is no JSON" << std::endl;
      std::exit(1);
    }
    const auto& retry = config.fields().at("methodConfig").list_value().values(0).struct_value().fields().at(
        "retryPolicy").struct_value().fields();
    RetryPolicy policy;
    policy.initial_backoff = Millis(retry.at("initialBackoff").string_value());
    policy.max_backoff = Millis(retry.at("maxBackoff").string_value());
    policy.multiplier = retry.at("backoffMultiplier").number_value();
    for (const auto& code : retry.at("retryableStatusCodes").list_value().values()) {
      policy.codes.insert(code.string_value());
    }
    return policy;
  }

  // A service config duration ("0.05s").
  static milliseconds Millis(const std::string& seconds) {
    return milliseconds(std::llround(std::stod(seconds.substr(0, seconds.size() - 1)) * 1000));
  }
};

// What the bot does after a failed call, decided from the contract's facts rather than from
// lists of reasons typed here: the category of each ErrorReason (the (dizhu.v1.facts) option of
// proto/dizhu/v1/errors.proto, read from the generated descriptor) and, for a reason without
// facts (gRPC's own errors, a newer referee's reasons), the codes the retry policy retries.
enum class Decision { kRetry, kMovedOn, kFatal };

const char* const kReasonPrefix = "ERROR_REASON_";

// The facts of the ErrorReason named `reason` (without its prefix); nullptr for one this contract lacks.
const dizhu::v1::ErrorFacts* FactsOf(const std::string& reason) {
  const auto* value = dizhu::v1::ErrorReason_descriptor()->FindValueByName(kReasonPrefix + reason);
  if (value == nullptr || !value->options().HasExtension(dizhu::v1::facts)) return nullptr;
  return &value->options().GetExtension(dizhu::v1::facts);
}

Decision Decide(grpc::StatusCode code, const std::string& reason);

const char* const kCodeNames[] = {
    "OK",           "CANCELLED",           "UNKNOWN",     "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",
    "NOT_FOUND",    "ALREADY_EXISTS",      "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED",      "OUT_OF_RANGE",        "UNIMPLEMENTED", "INTERNAL",         "UNAVAILABLE",
    "DATA_LOSS",    "UNAUTHENTICATED"};

std::string CodeName(grpc::StatusCode code) {
  int index = static_cast<int>(code);
  return index >= 0 && index <= 16 ? kCodeNames[index] : std::to_string(index);
}

// What a refusal says in its google.rpc.Status details (docs/api.md, "Errors"): they come as
// the serialized Status in Status::error_details() (the grpc-status-details-bin trailer).
struct ErrorDetails {
  grpc::StatusCode code = grpc::StatusCode::OK;
  std::string message;
  // ErrorInfo.reason: the ErrorReason's name without ERROR_REASON_, or the code's name.
  std::string reason;
  std::map<std::string, std::string> metadata;
  std::string violations;
  milliseconds retry_delay{0};

  static ErrorDetails Of(const grpc::Status& status) {
    ErrorDetails details;
    details.code = status.error_code();
    details.message = status.error_message();
    details.reason = CodeName(status.error_code());
    google::rpc::Status rich;
    if (status.error_details().empty() || !rich.ParseFromString(status.error_details())) return details;
    for (const google::protobuf::Any& any : rich.details()) {
      google::rpc::ErrorInfo info;
      google::rpc::BadRequest bad_request;
      google::rpc::RetryInfo retry;
      if (any.UnpackTo(&info)) {
        details.reason = info.reason();
        details.metadata.insert(info.metadata().begin(), info.metadata().end());
      } else if (any.UnpackTo(&bad_request)) {
        for (const auto& violation : bad_request.field_violations()) {
          details.violations += " [" + violation.field() + ": " + violation.description() + "]";
        }
      } else if (any.UnpackTo(&retry)) {
        details.retry_delay = milliseconds(retry.retry_delay().seconds() * 1000 + retry.retry_delay().nanos() / 1000000);
      }
    }
    return details;
  }

  Decision Verdict() const { return Decide(code, reason); }
  bool Retryable() const { return Verdict() == Decision::kRetry; }

  // Like "FAILED_PRECONDITION NOT_YOUR_TURN: ... table_id=abc turn_seat=2".
  std::string ToString() const {
    std::string line = CodeName(code) + " " + reason + ": " + message;
    for (const auto& [key, value] : metadata) line += " " + key + "=" + value;
    return line + violations;
  }
};

// A refusal that ends the bot: exit status 1 with the call and its details.
struct Refused {
  std::string call;
  grpc::Status status;
};

std::string NewRequestId() {
  std::random_device device;
  std::ostringstream hex;
  for (int i = 0; i < 4; ++i) hex << std::hex << device();
  std::string id = hex.str();
  while (id.size() < 32) id += "0";
  return id;
}

// One connection to a referee, the metadata sent with every call, and how calls are retried.
class Referee {
 public:
  Referee(const std::string& target, bool tls, const std::string& ca_file) {
    std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
    if (tls) {
      grpc::SslCredentialsOptions options;
      if (!ca_file.empty()) {
        std::ifstream file(ca_file);
        options.pem_root_certs.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
      }
      credentials = grpc::SslCredentials(options);
    }
    // After a lost connection, dial again within 0.2 s and then at most every 2 s (the Python
    // SDK's channel options): gRPC's default backoff grows to two minutes, long past a referee
    // that is back. `target` is host:port or unix:/path/to/socket, gRPC's own name syntax.
    grpc::ChannelArguments arguments;
    arguments.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
    arguments.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 200);
    arguments.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
    // gRPC sends a call that failed on one of the policy's codes again by itself, before Call sees it.
    arguments.SetServiceConfigJSON(kRetryPolicy);
    channel_ = grpc::CreateCustomChannel(target, credentials, arguments);
    tables_ = dizhu::v1::TableService::NewStub(channel_);
    rules_ = dizhu::v1::RulesService::NewStub(channel_);
  }

  // The seat token goes as `authorization: Bearer <token>` on every call.
  void UseToken(const std::string& token) { headers_["authorization"] = "Bearer " + token; }
  void UseApiKey(const std::string& key) { headers_["x-api-key"] = key; }

  dizhu::v1::TableService::Stub& tables() { return *tables_; }
  dizhu::v1::RulesService::Stub& rules() { return *rules_; }

  void Prepare(grpc::ClientContext& context) const {
    for (const auto& [key, value] : headers_) context.AddMetadata(key, value);
  }

  // Runs one RPC with a fresh context and deadline per attempt, sending the very same request
  // again while the failure says it may not have been applied (a deadline, a lost connection, a
  // referee restarting) or asks to come back later (a reason of the RETRYABLE category, after
  // its RetryInfo delay), for up to kRetryHorizon, backing off as kRetryPolicy says.
  template <typename Response>
  Response Call(const std::string& name,
                const std::function<grpc::Status(grpc::ClientContext*, Response*)>& rpc) const {
    const RetryPolicy& policy = RetryPolicy::Shared();
    milliseconds delay = policy.initial_backoff;
    const Clock::time_point give_up = Clock::now() + kRetryHorizon;
    for (;;) {
      grpc::ClientContext context;
      Prepare(context);
      context.set_deadline(std::chrono::system_clock::now() + call_timeout_);
      Response response;
      grpc::Status status = rpc(&context, &response);
      if (status.ok()) return response;
      ErrorDetails details = ErrorDetails::Of(status);
      if (!details.Retryable() || Clock::now() > give_up) throw Refused{name, status};
      milliseconds wait = policy.Wait(delay, details.retry_delay);
      std::cerr << name << ": " << details.ToString() << "; sending it again with the same request_id in "
                << wait.count() << " ms" << std::endl;
      std::this_thread::sleep_for(wait);
      delay = policy.Next(delay);
    }
  }

 private:
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<dizhu::v1::TableService::Stub> tables_;
  std::unique_ptr<dizhu::v1::RulesService::Stub> rules_;
  std::map<std::string, std::string> headers_;
  // Each attempt of a call gets this long; one that runs past it is sent again, same request_id.
  milliseconds call_timeout_{10000};
};

// Whether the change `event` is part of may ask something of `seat` (a turn, a deal, the end of
// the auction or the round, the close): anything but a bid or play that hands the turn to another
// seat (its next_seat), another seat's Settle or clock, or a presence. Unknown: yes (the seat not
// known yet, a move without next_seat, a kind of event this bot does not know).
bool Concerns(const dizhu::v1::TableEvent& event, std::optional<uint32_t> seat) {
  if (!seat) return true;
  switch (event.payload_case()) {
    case dizhu::v1::TableEvent::kBidMade:
      return !event.bid_made().has_next_seat() || event.bid_made().next_seat() == *seat;
    case dizhu::v1::TableEvent::kCardsPlayed:
      return !event.cards_played().has_next_seat() || event.cards_played().next_seat() == *seat;
    case dizhu::v1::TableEvent::kSeatSettled:
      return event.seat_settled().seat() == *seat;
    case dizhu::v1::TableEvent::kTurnDeadline:
      return event.turn_deadline().seat() == *seat;
    case dizhu::v1::TableEvent::kSeatPresence:
      return false;
    default:
      return true;
  }
}

// Plays one seat of one table at random among the legal choices.
class Bot {
 public:
  Bot(Referee& referee, std::string table_id, uint64_t seed)
      : referee_(referee), table_id_(std::move(table_id)), random_(seed) {}

  int decisions() const { return decisions_; }
  int reads() const { return reads_; }

  // Plays the seat until the table closes; the closed table's view.
  TableView Play() {
    std::thread follower(&Bot::Follow, this);
    TableView view;
    try {
      view = Read();
      while (view.phase() != dizhu::v1::PHASE_CLOSED) {
        std::optional<TableView> after;
        try {
          after = Act(view);
        } catch (const Refused& refused) {
          // Moved on: read the table and decide again. Any other refusal ends the bot, unless the
          // table has closed meanwhile (a refusal of a closed table ends the game).
          ErrorDetails details = ErrorDetails::Of(refused.status);
          std::cerr << "seat " << view.your_seat() << ": " << details.ToString() << "; reading the table again"
                    << std::endl;
          view = Read();
          if (details.Verdict() != Decision::kMovedOn && view.phase() != dizhu::v1::PHASE_CLOSED) throw;
          continue;
        }
        if (after) {
          ++decisions_;
          view = *after;
          continue;
        }
        WaitBeyond(view.version());
        view = Read();
      }
    } catch (...) {
      StopFollowing(follower);
      throw;
    }
    StopFollowing(follower);
    return view;
  }

 private:
  TableView Read() {
    ++reads_;
    dizhu::v1::GetTableRequest request;
    request.set_table_id(table_id_);
    return referee_
        .Call<dizhu::v1::GetTableResponse>("GetTable",
                                           [&](grpc::ClientContext* context, dizhu::v1::GetTableResponse* response) {
                                             return referee_.tables().GetTable(context, request, response);
                                           })
        .table();
  }

  // Follows the table with WatchTable and tells of every new version of a change that may ask
  // something of the seat (Concerns). A lost or silent stream is opened again after the last event
  // received (after_sequence, after_write_id), with a capped backoff, for up to kRetryHorizon
  // without a message.
  void Follow() {
    dizhu::v1::WatchTableRequest request;
    request.set_table_id(table_id_);
    // The seat, from the stream's snapshot (the stream is opened with its token).
    std::optional<uint32_t> seat;
    const RetryPolicy& policy = RetryPolicy::Shared();
    milliseconds delay = policy.initial_backoff;
    std::optional<Clock::time_point> lost_since;
    for (;;) {
      grpc::ClientContext context;
      referee_.Prepare(context);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (stopping_) break;
        stream_context_ = &context;
        last_message_ = Clock::now();
      }
      auto stream = referee_.tables().WatchTable(&context, request);
      dizhu::v1::WatchTableResponse message;
      while (stream->Read(&message)) {
        request.set_after_sequence(message.event().sequence());
        request.set_after_write_id(message.event().write_id());
        lost_since.reset();
        delay = policy.initial_backoff;
        if (message.event().has_snapshot() && message.event().snapshot().has_your_seat()) {
          seat = message.event().snapshot().your_seat();
        }
        std::lock_guard<std::mutex> lock(mutex_);
        last_message_ = Clock::now();
        if (Concerns(message.event(), seat)) latest_version_ = std::max(latest_version_, message.event().version());
        changed_.notify_all();
      }
      grpc::Status status = stream->Finish();
      bool done;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        stream_context_ = nullptr;
        grpc::StatusCode code = status.error_code();
        if (code == grpc::StatusCode::OUT_OF_RANGE) {
          // Resumed beyond the table's latest event (a recreated or restored table): start over.
          request.clear_after_sequence();
          request.clear_after_write_id();
          continue;
        }
        if (!lost_since) lost_since = Clock::now();
        bool lost = ErrorDetails::Of(status).Retryable();
        // OK: after TableClosed.
        done = status.ok() || stopping_ || !lost || Clock::now() - *lost_since > kRetryHorizon;
        if (done && !status.ok()) stream_status_ = status;
      }
      if (done) break;
      std::cerr << "WatchTable: " << ErrorDetails::Of(status).ToString() << "; opening it again in " << delay.count()
                << " ms" << std::endl;
      std::this_thread::sleep_for(delay);
      delay = policy.Next(delay);
    }
    std::lock_guard<std::mutex> lock(mutex_);
    stream_ended_ = true;
    changed_.notify_all();
  }

  void StopFollowing(std::thread& follower) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
      if (stream_context_ != nullptr) stream_context_->TryCancel();
    }
    follower.join();
  }

  // Returns once the table's version is past `seen`, or its stream ended. A stream silent for
  // kIdleStream, not even a heartbeat, is cancelled meanwhile: Follow opens it again.
  void WaitBeyond(uint64_t seen) {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!changed_.wait_for(lock, std::chrono::seconds(1), [&] { return latest_version_ > seen || stream_ended_; })) {
      if (stream_context_ != nullptr && Clock::now() - last_message_ > kIdleStream) stream_context_->TryCancel();
    }
    if (latest_version_ <= seen && !stream_status_.ok() && !stopping_) throw Refused{"WatchTable", stream_status_};
  }

  // Makes the seat's decision if the table waits for one; nothing if it does not.
  std::optional<TableView> Act(const TableView& view) {
    const std::string request_id = NewRequestId();
    if (view.phase() == dizhu::v1::PHASE_ROUND_OVER && view.last_settlement().round() > settled_round_) {
      dizhu::v1::SettleRequest request;
      request.set_table_id(table_id_);
      request.set_request_id(request_id);
      auto settled = referee_.Call<dizhu::v1::SettleResponse>(
          "Settle", [&](grpc::ClientContext* context, dizhu::v1::SettleResponse* response) {
            return referee_.tables().Settle(context, request, response);
          });
      settled_round_ = settled.settlement().round();
      return settled.table();
    }
    // turn_seat and your_seat are optional: turn_seat() reads 0 when unset, which is seat 0's
    // number. Ask for presence first.
    if (!view.has_turn_seat() || !view.has_your_seat() || view.turn_seat() != view.your_seat()) return std::nullopt;
    if (view.phase() == dizhu::v1::PHASE_AUCTION) {
      const auto& amounts = view.legal_bids();  // 0 (a pass), then every amount above the highest bid
      if (amounts.empty()) return std::nullopt;
      dizhu::v1::BidRequest request;
      request.set_table_id(table_id_);
      request.set_request_id(request_id);
      request.set_expected_version(view.version());
      request.set_amount(amounts[static_cast<int>(Pick(static_cast<size_t>(amounts.size())))]);
      return referee_
          .Call<dizhu::v1::BidResponse>("Bid",
                                        [&](grpc::ClientContext* context, dizhu::v1::BidResponse* response) {
                                          return referee_.tables().Bid(context, request, response);
                                        })
          .table();
    }
    if (view.phase() == dizhu::v1::PHASE_PLAY) {
      dizhu::v1::ListLegalMovesRequest ask;
      ask.set_variant(view.settings().variant());
      *ask.mutable_hand()->mutable_cards() = view.your_hand();
      if (const dizhu::v1::TrickPlay* last = PlayToBeat(view)) *ask.mutable_to_beat()->mutable_cards() = last->cards();
      auto legal = referee_.Call<dizhu::v1::ListLegalMovesResponse>(
          "ListLegalMoves", [&](grpc::ClientContext* context, dizhu::v1::ListLegalMovesResponse* response) {
            return referee_.rules().ListLegalMoves(context, ask, response);
          });
      size_t choices = legal.moves_size() + ((legal.can_pass() || legal.moves_size() == 0) ? 1 : 0);
      size_t choice = Pick(choices);
      dizhu::v1::PlayRequest request;
      request.set_table_id(table_id_);
      request.set_request_id(request_id);
      request.set_expected_version(view.version());
      if (choice < static_cast<size_t>(legal.moves_size())) *request.mutable_cards() = legal.moves(choice).cards();
      return referee_
          .Call<dizhu::v1::PlayResponse>("Play",
                                         [&](grpc::ClientContext* context, dizhu::v1::PlayResponse* response) {
                                           return referee_.tables().Play(context, request, response);
                                         })
          .table();
    }
    return std::nullopt;
  }

  // The view's play to beat; null when the bot leads (the view leaves it unset then).
  static const dizhu::v1::TrickPlay* PlayToBeat(const TableView& view) {
    if (!view.has_to_beat()) return nullptr;
    return &view.to_beat();
  }

  size_t Pick(size_t count) { return std::uniform_int_distribution<size_t>(0, count - 1)(random_); }

  Referee& referee_;
  const std::string table_id_;
  std::mt19937_64 random_;
  int decisions_ = 0;
  int reads_ = 0;
  uint32_t settled_round_ = 0;
  std::mutex mutex_;
  std::condition_variable changed_;
  uint64_t latest_version_ = 0;
  bool stream_ended_ = false;
  grpc::Status stream_status_;
  bool stopping_ = false;
  grpc::ClientContext* stream_context_ = nullptr;
  Clock::time_point last_message_ = Clock::now();
};

std::string EnvOr(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

[[noreturn]] void Usage();

// The flag's value as a whole number no greater than `max`; the usage line (exit status 2) if it is none.
uint64_t Number(const std::string& value, uint64_t max) {
  size_t end = 0;
  uint64_t parsed = 0;
  try {
    parsed = std::stoull(value, &end);
  } catch (const std::exception&) {
    Usage();
  }
  if (end != value.size() || value.empty() || value[0] == '-' || parsed > max) Usage();
  return parsed;
}

[[noreturn]] void Usage() {
  std::cerr << "usage: dizhu-bot --create [--variant 3p|4p] [--rounds N] | --table ID [--name NAME | --token TOKEN]"
            << std::endl;
  std::exit(2);
}

}  // namespace

namespace {

Decision Decide(grpc::StatusCode code, const std::string& reason) {
  const dizhu::v1::ErrorFacts* facts = FactsOf(reason);
  switch (facts == nullptr ? dizhu::v1::ERROR_CATEGORY_UNSPECIFIED : facts->category()) {
    case dizhu::v1::ERROR_CATEGORY_RETRYABLE:
      return Decision::kRetry;
    case dizhu::v1::ERROR_CATEGORY_MOVED_ON:
      return Decision::kMovedOn;
    case dizhu::v1::ERROR_CATEGORY_UNSPECIFIED:
      return RetryPolicy::Shared().codes.count(CodeName(code)) ? Decision::kRetry : Decision::kFatal;
    default:
      return Decision::kFatal;
  }
}

// The hidden flag --print-reason-facts: the decision for every ErrorReason (with the code its
// facts give) and for each code the policy retries, and the backoff, as one line of JSON
// (tests/polyglot/test_reason_facts.py compares it with the contract).
void PrintReasonFacts() {
  const char* const labels[] = {"retry", "moved_on", "fatal"};
  auto code_of = [](const std::string& name) {
    for (int index = 0; index <= 16; ++index) {
      if (name == kCodeNames[index]) return static_cast<grpc::StatusCode>(index);
    }
    return grpc::StatusCode::UNKNOWN;
  };
  google::protobuf::Struct line;
  auto& decisions = *(*line.mutable_fields())["decisions"].mutable_struct_value()->mutable_fields();
  const auto* reasons = dizhu::v1::ErrorReason_descriptor();
  for (int index = 0; index < reasons->value_count(); ++index) {
    std::string reason = std::string(reasons->value(index)->name()).substr(std::string(kReasonPrefix).size());
    if (const dizhu::v1::ErrorFacts* facts = FactsOf(reason)) {
      decisions[reason].set_string_value(labels[static_cast<int>(Decide(code_of(facts->code()), reason))]);
    }
  }
  const RetryPolicy& policy = RetryPolicy::Shared();
  for (const auto& code : policy.codes) {
    decisions[code].set_string_value(labels[static_cast<int>(Decide(code_of(code), code))]);
  }
  (*line.mutable_fields())["initial_backoff_ms"].set_number_value(static_cast<double>(policy.initial_backoff.count()));
  (*line.mutable_fields())["max_backoff_ms"].set_number_value(static_cast<double>(policy.max_backoff.count()));
  (*line.mutable_fields())["backoff_multiplier"].set_number_value(policy.multiplier);
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(line, &json);
  std::cout << json << std::endl;
}

}  // namespace

int main(int argc, char** argv) {
  std::string target = EnvOr("DIZHU_TARGET", "127.0.0.1:50051");
  std::string table_id = EnvOr("DIZHU_TABLE_ID", "");
  std::string token = EnvOr("DIZHU_SEAT_TOKEN", "");
  std::string name = EnvOr("DIZHU_ENTRANT", "cpp-bot");
  std::string api_key = EnvOr("DIZHU_API_KEY", "");
  std::string variant = "3p";
  uint32_t rounds = 1;
  bool create = false;
  std::optional<uint64_t> seed;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--print-reason-facts") {
      PrintReasonFacts();
      return 0;
    }
    if (flag == "--create") {
      create = true;
      continue;
    }
    if (i + 1 >= argc) Usage();
    std::string value = argv[++i];
    if (flag == "--target") target = value;
    else if (flag == "--table") table_id = value;
    else if (flag == "--token") token = value;
    else if (flag == "--name") name = value;
    else if (flag == "--api-key") api_key = value;
    else if (flag == "--variant") variant = value;
    else if (flag == "--rounds") rounds = static_cast<uint32_t>(Number(value, UINT32_MAX));
    else if (flag == "--seed") seed = Number(value, UINT64_MAX);
    else Usage();
  }
  if ((variant != "3p" && variant != "4p") || (!create && table_id.empty())) Usage();
  Referee referee(target, !EnvOr("DIZHU_TLS", "").empty(), EnvOr("DIZHU_TLS_CA", ""));
  try {
    if (create) {
      if (!api_key.empty()) referee.UseApiKey(api_key);
      dizhu::v1::CreateTableRequest request;
      request.set_request_id(NewRequestId());
      request.mutable_settings()->set_variant(variant == "4p" ? dizhu::v1::VARIANT_FOUR_PLAYER
                                                              : dizhu::v1::VARIANT_THREE_PLAYER);
      request.mutable_settings()->set_round_limit(rounds);
      auto created = referee.Call<dizhu::v1::CreateTableResponse>(
          "CreateTable", [&](grpc::ClientContext* context, dizhu::v1::CreateTableResponse* response) {
            return referee.tables().CreateTable(context, request, response);
          });
      // The creator token closes the table (`dizhu table close`); keep it.
      std::cout << "{\"table_id\":\"" << created.table_id() << "\",\"creator_token\":\"" << created.creator_token()
                << "\"}" << std::endl;
      return 0;
    }
    if (token.empty()) {
      // A JoinTable whose deadline passes may have taken a seat: the same request_id sent
      // again returns that seat instead of taking a second one.
      dizhu::v1::JoinTableRequest request;
      request.set_table_id(table_id);
      request.set_request_id(NewRequestId());
      request.set_player_name(name);
      auto joined = referee.Call<dizhu::v1::JoinTableResponse>(
          "JoinTable", [&](grpc::ClientContext* context, dizhu::v1::JoinTableResponse* response) {
            return referee.tables().JoinTable(context, request, response);
          });
      token = joined.seat_token();
      std::cerr << "joined table " << table_id << " at seat " << joined.seat() << " as " << name << std::endl;
      std::cout << "{\"table_id\":\"" << table_id << "\",\"seat\":" << joined.seat() << ",\"seat_token\":\"" << token
                << "\"}" << std::endl;
    }
    referee.UseToken(token);
    Bot bot(referee, table_id, seed.value_or(std::hash<std::string>{}(table_id + "/" + name + "/" + token)));
    TableView view = bot.Play();
    std::ostringstream balances;
    for (int i = 0; i < view.seats_size(); ++i) balances << (i ? "," : "") << view.seats(i).balance();
    std::cout << "{\"table_id\":\"" << table_id << "\",\"seat\":" << view.your_seat()
              << ",\"decisions\":" << bot.decisions() << ",\"reads\":" << bot.reads() << ",\"balances\":["
              << balances.str() << "]}" << std::endl;
  } catch (const Refused& refused) {
    std::cerr << refused.call << ": " << ErrorDetails::Of(refused.status).ToString() << std::endl;
    return 1;
  }
  return 0;
}
