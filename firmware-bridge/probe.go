package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/trenzinho/trenzinho/config"
	"github.com/trenzinho/trenzinho/firmware-bridge/gps"
	"github.com/trenzinho/trenzinho/firmware-bridge/serialport"
	"github.com/trenzinho/trenzinho/firmware-bridge/slm"
	"github.com/trenzinho/trenzinho/firmware-bridge/tacho"
)

// cmdProbe is for the mechanic installing the Pi: it lists the serial ports it finds and reads
// each configured device for a few seconds, printing what it decoded and what it could not. Its
// last line is the verdict: "OK" when every configured device opened and sent something that
// decodes, else "FALHA: …" naming each device that did not, and a non-zero exit (errFailed).
func cmdProbe(ctx context.Context, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("probe", flag.ContinueOnError)
	b := config.NewBinder(fs)
	var dev deviceFlags
	dev.bind(b)
	seconds := fs.Duration("for", 5*time.Second, "how long to read each device")
	if err := b.Parse(args); err != nil {
		return flagErr(err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q (probe takes flags only)", errUsage, fs.Arg(0))
	}
	fmt.Fprintln(w, "Portas seriais encontradas:")
	ports := listPorts()
	if len(ports) == 0 {
		fmt.Fprintln(w, "  (nenhuma) — confira o cabo USB e `dmesg | tail`")
	}
	for _, p := range ports {
		fmt.Fprintf(w, "  %s\n", p)
	}
	g, t, s, err := dev.devices()
	if err != nil {
		return err
	}
	var failures []string
	verdict := func() error {
		if len(failures) > 0 {
			fmt.Fprintf(w, "\nFALHA: %s\n", strings.Join(failures, "; "))
			return errFailed
		}
		fmt.Fprintln(w, "\nOK")
		return nil
	}
	if g == nil && t == nil && s == nil {
		// Nothing was tested: not a pass.
		fmt.Fprintln(w, "\nNenhum dispositivo configurado (--gps-port, --tacho-port, --slm-port).")
		failures = append(failures, "nenhum dispositivo configurado para testar")
		return verdict()
	}
	check := func(name string, cfg serialport.Config, read func(io.Reader) (string, bool)) {
		if problem := probeDevice(ctx, w, name, cfg, *seconds, read); problem != "" {
			failures = append(failures, problem)
		}
	}
	if g != nil {
		check("GPS", g.Port, func(r io.Reader) (string, bool) {
			dec := &gps.Decoder{}
			sc := bufio.NewScanner(r)
			sc.Split(gps.ScanLines)
			n := 0
			for sc.Scan() {
				n += len(dec.Line(sc.Bytes()))
			}
			n += len(dec.Flush())
			st := dec.Stats()
			// Sentences that decode prove the wiring and the baud rate; a receiver without a fix
			// (indoors, just powered) still passes, and says so.
			return fmt.Sprintf("%d linhas, %d posições válidas, %d checksums errados, %d fixes inválidos", st.Lines, n, st.BadChecksums, st.InvalidFixes), st.Sentences > 0
		})
	}
	if t != nil {
		check("Tacógrafo", t.Port, func(r io.Reader) (string, bool) {
			dec, _ := tacho.NewDecoder(tacho.Layout(t.Protocol))
			var last string
			buf := make([]byte, 1024)
			for {
				n, err := r.Read(buf)
				for _, rd := range dec.Feed(buf[:n]) {
					if rd.Tacho.SpeedKmh != nil {
						last = fmt.Sprintf(", última velocidade %.2f km/h", *rd.Tacho.SpeedKmh)
					}
				}
				if err != nil || n == 0 {
					break
				}
			}
			st := dec.Stats()
			return fmt.Sprintf("%d quadros bons, %d com checksum errado, %d truncados%s", st.FramesOK, st.BadChecksum, st.Truncated, last), st.FramesOK > 0
		})
	}
	if s != nil && s.Protocol != "modbus-rtu" {
		check("Decibelímetro", s.Port, func(r io.Reader) (string, bool) {
			if wr, ok := r.(io.Writer); ok {
				_ = slm.StartPCE(wr)
			}
			dec := slm.NewPCEDecoder(time.UTC)
			frames := 0
			buf := make([]byte, 512)
			for {
				n, err := r.Read(buf)
				frames += len(dec.Feed(buf[:n]))
				if err != nil || n == 0 {
					break
				}
			}
			return fmt.Sprintf("%d quadros", frames), frames > 0
		})
	} else if s != nil {
		p, err := slm.OpenPoller(slm.ModbusConfig{Device: s.Port.Path, Baud: s.Port.Baud, Address: uint8(s.ModbusAddress), Register: uint16(s.ModbusRegister), Divisor: s.ModbusDivisor})
		if err != nil {
			fmt.Fprintf(w, "\nDecibelímetro (Modbus) em %s: não abriu: %v\n", s.Port.Path, err)
			failures = append(failures, fmt.Sprintf("Decibelímetro em %s não abriu", s.Port.Path))
		} else {
			db, err := p.Read()
			p.Close()
			if err != nil {
				fmt.Fprintf(w, "\nDecibelímetro (Modbus) em %s: sem resposta: %v\n", s.Port.Path, err)
				failures = append(failures, fmt.Sprintf("Decibelímetro em %s sem resposta", s.Port.Path))
			} else {
				fmt.Fprintf(w, "\nDecibelímetro (Modbus) em %s: %.1f dB\n", s.Port.Path, db)
			}
		}
	}
	return verdict()
}

// timedReader makes reads return EOF after a deadline.
type timedReader struct {
	r        io.ReadWriter
	deadline time.Time
}

func (t *timedReader) Read(p []byte) (int, error) {
	if time.Now().After(t.deadline) {
		return 0, io.EOF
	}
	return t.r.Read(p)
}

func (t *timedReader) Write(p []byte) (int, error) { return t.r.Write(p) }

// probeDevice opens a device's port, reads it for d and prints what read made of it. It returns
// the problem, for the verdict, or "" when the port opened and something decoded.
func probeDevice(ctx context.Context, w io.Writer, name string, cfg serialport.Config, d time.Duration, read func(io.Reader) (string, bool)) string {
	cfg.ReadTimeout = 500 * time.Millisecond
	p, err := serialport.Open(cfg)
	if err != nil {
		fmt.Fprintf(w, "\n%s em %s (%d baud): não abriu: %v\n", name, cfg.Path, cfg.Baud, err)
		return fmt.Sprintf("%s em %s não abriu", name, cfg.Path)
	}
	defer p.Close()
	stop := context.AfterFunc(ctx, func() { p.Close() })
	defer stop()
	summary, ok := read(&timedReader{p, time.Now().Add(d)})
	fmt.Fprintf(w, "\n%s em %s (%d baud), lendo por %s…\n  %s\n", name, cfg.Path, cfg.Baud, d, summary)
	if !ok {
		return fmt.Sprintf("%s em %s: nada decodificado em %s (cabo, baud ou protocolo?)", name, cfg.Path, d)
	}
	return ""
}

// listPorts returns the serial devices a Pi usually has.
func listPorts() []string {
	var out []string
	for _, pat := range []string{"/dev/serial/by-id/*", "/dev/ttyUSB*", "/dev/ttyACM*", "/dev/ttyAMA*", "/dev/ttyS0", "/dev/serial0"} {
		m, _ := filepath.Glob(pat)
		for _, p := range m {
			if _, err := os.Stat(p); err == nil {
				out = append(out, p)
			}
		}
	}
	sort.Strings(out)
	return out
}
