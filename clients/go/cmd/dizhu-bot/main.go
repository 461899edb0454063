// Command dizhu-bot plays a seat of a dizhu table at random among the legal choices, through
// the referee's gRPC API (docs/api.md), until the table closes.
//
//	dizhu-bot --create [--variant 3p|4p] [--rounds 1]     create a table, print {"table_id", "creator_token"}
//	dizhu-bot --table ID [--name NAME | --token TOKEN]   take a seat (or play a token's), play to the end
//
// Joining prints {"table_id", "seat", "seat_token"} at once: `--token` plays that seat again
// (after a crash, say), where joining anew would find the table full. --target is host:port or
// unix:/path/to/socket.
//
// Without flags it reads the seat from DIZHU_TARGET, DIZHU_TABLE_ID and DIZHU_SEAT_TOKEN (and
// DIZHU_TLS, DIZHU_TLS_CA), as `dizhu tournament` starts a gRPC entrant (docs/tournaments.md).
// At the end it prints {"table_id", "seat", "decisions", "reads", "balances"} as one line of JSON.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"log"
	"math/rand/v2"
	"os"

	"google.golang.org/grpc/metadata"

	dizhuv1 "dizhu/clients/go/gen/dizhu/v1"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("dizhu-bot: ")
	target := flag.String("target", envOr("DIZHU_TARGET", "127.0.0.1:50051"), "the referee: host:port, or unix:/path/to/socket")
	tableID := flag.String("table", os.Getenv("DIZHU_TABLE_ID"), "the table to play")
	token := flag.String("token", os.Getenv("DIZHU_SEAT_TOKEN"), "a seat token to play (else the bot joins)")
	name := flag.String("name", envOr("DIZHU_ENTRANT", "go-bot"), "the player's name when joining")
	create := flag.Bool("create", false, "create a table and print its id and creator token")
	variant := flag.String("variant", "3p", "with --create: 3p or 4p")
	rounds := flag.Uint("rounds", 1, "with --create: rounds before the table closes")
	seed := flag.Uint64("seed", 0, "the random choices' seed (0: from the table and the name)")
	apiKey := flag.String("api-key", os.Getenv("DIZHU_API_KEY"), "with --create: the referee's API key, if it requires one")
	printFacts := flag.Bool("print-reason-facts", false, "print the decision taken for every refusal reason, and the backoff, then exit")
	flag.Usage = usage
	flag.Parse()
	if *printFacts {
		printReasonFacts()
		return
	}
	variants := map[string]dizhuv1.Variant{"3p": dizhuv1.Variant_VARIANT_THREE_PLAYER, "4p": dizhuv1.Variant_VARIANT_FOUR_PLAYER}
	chosen, ok := variants[*variant]
	if !ok || flag.NArg() > 0 || (!*create && *tableID == "") {
		usage()
		os.Exit(2)
	}

	referee, err := Dial(*target, os.Getenv("DIZHU_TLS") != "", os.Getenv("DIZHU_TLS_CA"))
	if err != nil {
		log.Fatal(err)
	}
	defer referee.Close()
	ctx := context.Background()

	if *create {
		if err := createTable(ctx, referee, *apiKey, chosen, uint32(*rounds)); err != nil {
			log.Fatalf("CreateTable: %s", DetailsOf(err))
		}
		return
	}
	if *token == "" {
		// A JoinTable whose deadline passes may have taken a seat: sending the same
		// request_id again returns that seat instead of taking a second one.
		joined, err := call(ctx, referee, "JoinTable", &dizhuv1.JoinTableRequest{
			TableId: *tableID, RequestId: NewRequestID(), PlayerName: *name,
		}, referee.Tables.JoinTable)
		if err != nil {
			log.Fatalf("JoinTable: %s", DetailsOf(err))
		}
		*token = joined.GetSeatToken()
		log.Printf("joined table %s at seat %d as %s", *tableID, joined.GetSeat(), *name)
		printLine(map[string]any{"table_id": *tableID, "seat": joined.GetSeat(), "seat_token": *token})
	}
	referee.token = *token
	if *seed == 0 {
		hash := fnv.New64a()
		hash.Write([]byte(*tableID + "/" + *name + "/" + *token))
		*seed = hash.Sum64()
	}
	bot := &Bot{referee: referee, tableID: *tableID, random: rand.New(rand.NewPCG(*seed, 7))}
	view, err := bot.Play(ctx)
	if err != nil {
		log.Fatalf("playing table %s: %s", *tableID, DetailsOf(err))
	}
	balances := make([]int64, len(view.GetSeats()))
	for _, seat := range view.GetSeats() {
		balances[seat.GetSeat()] = seat.GetBalance()
	}
	printLine(map[string]any{
		"table_id": *tableID, "seat": view.GetYourSeat(), "decisions": bot.Decisions, "reads": bot.Reads, "balances": balances,
	})
}

// printLine writes one line of JSON to standard output.
func printLine(fields map[string]any) {
	line, _ := json.Marshal(fields)
	fmt.Println(string(line))
}

func createTable(ctx context.Context, referee *Referee, apiKey string, variant dizhuv1.Variant, rounds uint32) error {
	if apiKey != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "x-api-key", apiKey)
	}
	created, err := call(ctx, referee, "CreateTable", &dizhuv1.CreateTableRequest{
		RequestId: NewRequestID(),
		Settings:  &dizhuv1.TableSettings{Variant: variant, RoundLimit: rounds},
	}, referee.Tables.CreateTable)
	if err != nil {
		return err
	}
	// The creator token closes the table (`dizhu table close`); keep it.
	printLine(map[string]any{"table_id": created.GetTableId(), "creator_token": created.GetCreatorToken()})
	return nil
}

// usage tells the command line and its flags (flag exits 2 after it on a bad flag; so does main).
func usage() {
	fmt.Fprintln(os.Stderr, "usage: dizhu-bot --create [--variant 3p|4p] [--rounds N] | --table ID [--name NAME | --token TOKEN]")
	flag.PrintDefaults()
}

func envOr(name, fallback string) string {
	if value := os.Getenv(name); value != "" {
		return value
	}
	return fallback
}
