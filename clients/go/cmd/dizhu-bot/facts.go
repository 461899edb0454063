package main

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	dizhuv1 "dizhu/clients/go/gen/dizhu/v1"
)

// What the bot does after a failed call, decided from the contract's facts rather than from
// lists of reasons typed here: the category of each ErrorReason (the (dizhu.v1.facts) option of
// proto/dizhu/v1/errors.proto, read from the generated descriptor) and the retry policy every
// client shares (retry_policy.json: the gRPC channel's service config, and the bot's own backoff).
type decision string

const (
	// decisionRetry: nothing was applied; send the very same request again.
	decisionRetry decision = "retry"
	// decisionMovedOn: the table is not where the bot thought; read it again and decide again.
	decisionMovedOn decision = "moved_on"
	// decisionFatal: the same request would be refused again.
	decisionFatal decision = "fatal"
)

// retryPolicyJSON is clients/python/dizhu/client/retry_policy.json ("the one policy of every
// client"), copied into this module because go:embed cannot reach outside it;
// tests/polyglot/test_reason_facts.py fails when the copy differs from the original.
//
//go:embed retry_policy.json
var retryPolicyJSON string

// retryPolicy holds the policy's numbers the bot's own retry loops use.
type retryPolicy struct {
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	Multiplier     float64
	// Codes are the status codes retried even without an ErrorInfo (gRPC's own errors).
	Codes map[codes.Code]bool
}

var policy = mustParsePolicy(retryPolicyJSON)

func mustParsePolicy(text string) retryPolicy {
	var config struct {
		MethodConfig []struct {
			RetryPolicy struct {
				InitialBackoff       string   `json:"initialBackoff"`
				MaxBackoff           string   `json:"maxBackoff"`
				BackoffMultiplier    float64  `json:"backoffMultiplier"`
				RetryableStatusCodes []string `json:"retryableStatusCodes"`
			} `json:"retryPolicy"`
		} `json:"methodConfig"`
	}
	if err := json.Unmarshal([]byte(text), &config); err != nil || len(config.MethodConfig) != 1 {
		panic(fmt.Sprintf("retry_policy.json: one methodConfig expected (%v)", err))
	}
	retry := config.MethodConfig[0].RetryPolicy
	parsed := retryPolicy{
		InitialBackoff: mustDuration(retry.InitialBackoff),
		MaxBackoff:     mustDuration(retry.MaxBackoff),
		Multiplier:     retry.BackoffMultiplier,
		Codes:          map[codes.Code]bool{},
	}
	for _, name := range retry.RetryableStatusCodes {
		var code codes.Code
		if err := code.UnmarshalJSON([]byte(`"` + name + `"`)); err != nil {
			panic(fmt.Sprintf("retry_policy.json: %v", err))
		}
		parsed.Codes[code] = true
	}
	return parsed
}

// mustDuration reads a service config's duration ("0.05s").
func mustDuration(text string) time.Duration {
	duration, err := time.ParseDuration(text)
	if err != nil || !strings.HasSuffix(text, "s") {
		panic(fmt.Sprintf("retry_policy.json: %q is no duration in seconds", text))
	}
	return duration
}

// next is the backoff after `delay`: grown by the policy's multiplier, capped at its maximum.
func (p retryPolicy) next(delay time.Duration) time.Duration {
	return min(time.Duration(float64(delay)*p.Multiplier), p.MaxBackoff)
}

// wait is how long to wait before sending a call again: the backoff, or the referee's RetryInfo
// delay when longer, capped at the policy's maximum backoff.
func (p retryPolicy) wait(delay, retryInfo time.Duration) time.Duration {
	return min(max(delay, retryInfo), p.MaxBackoff)
}

// factsOf is the (dizhu.v1.facts) option of the ErrorReason whose name without its prefix is
// `reason`; nil for a reason this contract does not know (a newer referee's).
func factsOf(reason string) *dizhuv1.ErrorFacts {
	values := dizhuv1.ErrorReason_ERROR_REASON_UNSPECIFIED.Descriptor().Values()
	value := values.ByName(protoreflect.Name("ERROR_REASON_" + reason))
	if value == nil {
		return nil
	}
	facts, _ := proto.GetExtension(value.Options(), dizhuv1.E_Facts).(*dizhuv1.ErrorFacts)
	return facts
}

// decide is what the bot does after a refusal: by its reason's category, or, for a reason
// without facts (gRPC's own errors, a newer referee's reasons), by its status code alone.
func decide(details ErrorDetails) decision {
	switch factsOf(details.Reason).GetCategory() {
	case dizhuv1.ErrorCategory_ERROR_CATEGORY_RETRYABLE:
		return decisionRetry
	case dizhuv1.ErrorCategory_ERROR_CATEGORY_MOVED_ON:
		return decisionMovedOn
	case dizhuv1.ErrorCategory_ERROR_CATEGORY_UNSPECIFIED:
		if policy.Codes[details.Code] {
			return decisionRetry
		}
	}
	return decisionFatal
}

// printReasonFacts prints the bot's decision for every ErrorReason, with the code its facts
// give, and the backoff it uses: how tests/polyglot/test_reason_facts.py holds the bot to the
// contract (the hidden flag --print-reason-facts).
func printReasonFacts() {
	decisions := map[string]decision{}
	values := dizhuv1.ErrorReason_ERROR_REASON_UNSPECIFIED.Descriptor().Values()
	for i := range values.Len() {
		value := values.Get(i)
		reason := strings.TrimPrefix(string(value.Name()), "ERROR_REASON_")
		facts := factsOf(reason)
		if facts == nil {
			continue // UNSPECIFIED, never sent
		}
		var code codes.Code
		if err := code.UnmarshalJSON([]byte(`"` + facts.GetCode() + `"`)); err != nil {
			panic(err)
		}
		decisions[reason] = decide(ErrorDetails{Code: code, Reason: reason})
	}
	for code := range policy.Codes {
		decisions[codeName(code)] = decide(ErrorDetails{Code: code, Reason: codeName(code)})
	}
	printLine(map[string]any{
		"decisions":          decisions,
		"initial_backoff_ms": policy.InitialBackoff.Milliseconds(),
		"max_backoff_ms":     policy.MaxBackoff.Milliseconds(),
		"backoff_multiplier": policy.Multiplier,
	})
}
