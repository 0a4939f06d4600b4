package main

import (
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/trenzinho/trenzinho/monitor/drafts"
)

// cmdVerify checks an exported draft offline, for the licensee's lawyer as for the agent: the
// evidence bundle against its SHA-256, the monitor's ed25519 signature over the hash and the
// previous draft's hash, and — with --key — that the signing key is the municipality's.
func cmdVerify(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	key := fs.String("key", "", "the monitor's public key (hex) the draft must be signed with; its fingerprint is printed by the server at start")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: monitor verify [--key HEX] DRAFT.json\n\n"+
			"Checks a draft exported from GET /api/v1/drafts/{id}/export: the hash of its evidence\n"+
			"bundle and the monitor's signature. Exit status 0 when it is intact, 1 otherwise.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return flagErr(err)
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return usageErr("want one argument, DRAFT.json; got %d", fs.NArg())
	}
	b, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	var s drafts.Sealed
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("%s: não é um auto exportado: %w", fs.Arg(0), err)
	}
	var trusted []byte
	if *key != "" {
		if trusted, err = hex.DecodeString(*key); err != nil || len(trusted) != 32 {
			return fmt.Errorf("--key: esperada a chave pública ed25519 em hexadecimal (64 dígitos)")
		}
	}
	bundle, err := drafts.Verify(&s, trusted)
	if err != nil {
		fmt.Fprintf(out, "Auto %s: VIOLADO — %v\n", s.ID, err)
		return errIntegrity
	}
	verified, unsigned, berr := drafts.VerifyBatches(bundle, nil)
	fmt.Fprintf(out, "Auto %s: íntegro.\n", s.ID)
	fmt.Fprintf(out, "  Hash SHA-256 do pacote de evidências: %s\n", s.Hash)
	fmt.Fprintf(out, "  Hash do auto anterior na cadeia:      %s\n", orNone(s.PrevHash))
	fmt.Fprintf(out, "  Assinado pela chave do monitor:       %s\n", s.PublicKey)
	if trusted == nil {
		fmt.Fprintln(out, "  (confira a chave com a publicada pela Prefeitura, ou use --key)")
	}
	fmt.Fprintf(out, "  Veículo %s; fatos: %d; lotes brutos de telemetria: %d (%d sem assinatura do veículo)\n",
		bundle.Draft.Vehicle, len(bundle.Draft.Facts), len(bundle.Batches), unsigned)
	if berr != nil && verified == 0 {
		fmt.Fprintf(out, "  Assinaturas dos lotes do veículo não verificadas aqui: %v\n", berr)
	}
	return nil
}

var errIntegrity = fmt.Errorf("integrity")

func orNone(s string) string {
	if s == "" {
		return "(nenhum: primeiro auto)"
	}
	return s
}
