package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"log"
	"os"
	"sort"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	dizhuv1 "dizhu/clients/go/gen/dizhu/v1"
)

// retryHorizon is how long the bot keeps sending a failed call again, and reopening a lost
// stream, before it gives up: long enough to ride out a referee's restart (a rolling upgrade
// takes seconds; a minute is the horizon every example bot honours, docs/api.md § Retries).
const retryHorizon = 90 * time.Second

// reconnectBackoff: after a lost connection try again within 0.2 s, then at most every 2 s
// (the Python SDK's CHANNEL_OPTIONS; gRPC's default grows to two minutes, long past a
// referee that is back).
var reconnectBackoff = backoff.Config{BaseDelay: 200 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 2 * time.Second}

// Referee holds one connection to a dizhu referee and the seat token the bot acts with.
type Referee struct {
	conn   *grpc.ClientConn
	Tables dizhuv1.TableServiceClient
	Rules  dizhuv1.RulesServiceClient
	token  string
	// callTimeout bounds each attempt of a call; a call that runs past it is sent again
	// with the same request, request_id included, so that the referee applies it once.
	callTimeout time.Duration
}

// Dial connects to target ("host:port", or "unix:/path/to/socket" for a referee listening on a
// Unix socket: gRPC's own name syntax, passed as it is). With useTLS the referee's certificate is checked
// against caFile (PEM) or, without one, the system's authorities.
func Dial(target string, useTLS bool, caFile string) (*Referee, error) {
	creds := insecure.NewCredentials()
	if useTLS {
		config := &tls.Config{MinVersion: tls.VersionTLS12}
		if caFile != "" {
			pem, err := os.ReadFile(caFile)
			if err != nil {
				return nil, err
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("no certificate in %s", caFile)
			}
			config.RootCAs = pool
		}
		creds = credentials.NewTLS(config)
	}
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(creds), grpc.WithDefaultServiceConfig(retryPolicyJSON),
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: reconnectBackoff, MinConnectTimeout: 5 * time.Second}))
	if err != nil {
		return nil, err
	}
	return &Referee{
		conn:        conn,
		Tables:      dizhuv1.NewTableServiceClient(conn),
		Rules:       dizhuv1.NewRulesServiceClient(conn),
		callTimeout: 10 * time.Second,
	}, nil
}

// Close closes the connection.
func (r *Referee) Close() error { return r.conn.Close() }

// withToken adds the seat token as call metadata. The token travels as a plain header
// rather than through oauth.TokenSource, which refuses to send it over a plaintext
// channel, loopback included.
func (r *Referee) withToken(ctx context.Context) context.Context {
	if r.token == "" {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+r.token)
}

// NewRequestID is a random idempotency key: 32 hex digits (CreateTable and JoinTable
// want at least 16 random characters, and keep them secret like tokens).
func NewRequestID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b[:])
}

// call runs one RPC, sending the very same request again while the failure says it may
// not have been applied (a deadline, a lost connection, a referee restarting) or asks to come
// back later (a reason of the RETRYABLE category, after its RetryInfo delay), for up to
// retryHorizon, backing off as retry_policy.json says.
func call[Req, Resp any](ctx context.Context, r *Referee, name string, req Req, rpc func(context.Context, Req, ...grpc.CallOption) (Resp, error)) (Resp, error) {
	delay := policy.InitialBackoff
	giveUp := time.Now().Add(retryHorizon)
	for {
		attemptCtx, cancel := context.WithTimeout(r.withToken(ctx), r.callTimeout)
		resp, err := rpc(attemptCtx, req)
		cancel()
		if err == nil || ctx.Err() != nil {
			return resp, err
		}
		details := DetailsOf(err)
		if !details.Retryable() || time.Now().After(giveUp) {
			return resp, err
		}
		wait := policy.wait(delay, details.RetryDelay)
		log.Printf("%s: %s; sending it again with the same request_id in %s", name, details, wait)
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return resp, ctx.Err()
		}
		delay = policy.next(delay)
	}
}

// ErrorDetails is what a refusal says in its google.rpc.Status details (docs/api.md, "Errors").
type ErrorDetails struct {
	Code    codes.Code
	Message string
	// Reason is ErrorInfo.reason: the ErrorReason's name without its ERROR_REASON_ prefix
	// ("NOT_YOUR_TURN"), or the code's name for errors gRPC itself ends a call with.
	Reason     string
	Metadata   map[string]string
	Violations []*errdetails.BadRequest_FieldViolation
	RetryDelay time.Duration
}

// DetailsOf decodes a failed call's status and its ErrorInfo, BadRequest and RetryInfo.
func DetailsOf(err error) ErrorDetails {
	st, _ := status.FromError(err)
	details := ErrorDetails{Code: st.Code(), Message: st.Message(), Reason: codeName(st.Code()), Metadata: map[string]string{}}
	for _, detail := range st.Details() {
		switch d := detail.(type) {
		case *errdetails.ErrorInfo:
			details.Reason = d.GetReason()
			details.Metadata = d.GetMetadata()
		case *errdetails.BadRequest:
			details.Violations = d.GetFieldViolations()
		case *errdetails.RetryInfo:
			details.RetryDelay = d.GetRetryDelay().AsDuration()
		}
	}
	return details
}

// Retryable: the same request may be sent again (see TableService in table_service.proto).
func (d ErrorDetails) Retryable() bool { return decide(d) == decisionRetry }

// String reads like "FAILED_PRECONDITION NOT_YOUR_TURN: ... table_id=abc turn_seat=2".
func (d ErrorDetails) String() string {
	keys := make([]string, 0, len(d.Metadata))
	for key := range d.Metadata {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	var line strings.Builder
	fmt.Fprintf(&line, "%s %s: %s", codeName(d.Code), d.Reason, d.Message)
	for _, key := range keys {
		fmt.Fprintf(&line, " %s=%s", key, d.Metadata[key])
	}
	for _, violation := range d.Violations {
		fmt.Fprintf(&line, " [%s: %s]", violation.GetField(), violation.GetDescription())
	}
	return line.String()
}

// codeName spells a code as the gRPC status names do: FAILED_PRECONDITION, not FailedPrecondition.
func codeName(code codes.Code) string {
	names := map[codes.Code]string{
		codes.OK: "OK", codes.Canceled: "CANCELLED", codes.Unknown: "UNKNOWN",
		codes.InvalidArgument: "INVALID_ARGUMENT", codes.DeadlineExceeded: "DEADLINE_EXCEEDED",
		codes.NotFound: "NOT_FOUND", codes.AlreadyExists: "ALREADY_EXISTS",
		codes.PermissionDenied: "PERMISSION_DENIED", codes.ResourceExhausted: "RESOURCE_EXHAUSTED",
		codes.FailedPrecondition: "FAILED_PRECONDITION", codes.Aborted: "ABORTED",
		codes.OutOfRange: "OUT_OF_RANGE", codes.Unimplemented: "UNIMPLEMENTED", codes.Internal: "INTERNAL",
		codes.Unavailable: "UNAVAILABLE", codes.DataLoss: "DATA_LOSS", codes.Unauthenticated: "UNAUTHENTICATED",
	}
	if name, ok := names[code]; ok {
		return name
	}
	return code.String()
}

// reasonOf is the refusal's reason, or "" for an error that is no gRPC status.
func reasonOf(err error) string {
	if _, ok := status.FromError(err); !ok {
		return ""
	}
	return DetailsOf(err).Reason
}

var errTableClosed = errors.New("the table is closed")
