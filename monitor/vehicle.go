package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/trenzinho/trenzinho/config"
	"github.com/trenzinho/trenzinho/configbundle"
	"github.com/trenzinho/trenzinho/internal/atomicfile"
	"github.com/trenzinho/trenzinho/internal/mosquittoauth"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/registry"
	"github.com/trenzinho/trenzinho/wire"
)

const vehicleUsage = `Usage: monitor vehicle add [flags] VEHICLE_ID

Enrols a vehicle's bridge: creates its MQTT password and its ed25519 signing key, adds the
password to the broker's password file (Mosquitto's PBKDF2-SHA512 format), makes sure the ACL
lets the vehicle publish its own telemetry and status, registers the public key and its kid in
the registry, and writes the bridge's settings (bridge.env) and private key (bridge.key) into
the output directory, for the Pi. The password and the private key are written only there,
never printed.

A vehicle that already has a key, a password or files in the output directory is refused
unless --rotate is given: then its key and password are replaced (batches still in the bridge's
spool, signed with the old key, are quarantined as unknown_key).

Flags:
`

// bridgeKeyPath is where docs/bridge.md installs the key on the Pi.
const bridgeKeyPath = "/etc/trenzinho/bridge.key"

func cmdVehicle(args []string, out io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(os.Stderr, "Usage: monitor vehicle add [flags] VEHICLE_ID\n\nRun \"monitor vehicle add --help\" for the flags.\n")
		if len(args) == 0 {
			return errUsage
		}
		return nil
	}
	switch args[0] {
	case "add":
		return cmdVehicleAdd(args[1:], out)
	}
	fmt.Fprintf(os.Stderr, "monitor vehicle: unknown command %q (want add)\n", args[0])
	return errUsage
}

type vehicleAddConfig struct {
	registry, passwd, acl, out, broker string
	db                                 string // the monitor's database, for the audit log; "" none
	signingKey                         string // the monitor's key, whose public half the bridge pins
	kid, plate, licensee               string
	rotate                             bool
	vehicle                            string
	now                                time.Time
}

func cmdVehicleAdd(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("vehicle add", flag.ContinueOnError)
	b := config.NewBinder(fs)
	var c vehicleAddConfig
	b.String(&c.registry, "TRENZINHO_REGISTRY", "", "registry YAML the vehicle's public key is registered in (required)")
	fs.StringVar(&c.passwd, "passwd", "", "Mosquitto password file the vehicle's account is added to (required; created if missing)")
	fs.StringVar(&c.acl, "acl", "", "Mosquitto ACL file: left alone when its patterns cover the vehicle, else the vehicle's entries are appended (required)")
	fs.StringVar(&c.out, "out", "", "directory for the Pi's bridge.env and bridge.key (required; created if missing)")
	fs.StringVar(&c.broker, "broker", "", "broker URL the bridge connects to, e.g. ssl://mqtt.example.org:8883 (written to bridge.env)")
	fs.StringVar(&c.kid, "kid", "", "name of the new key (default VEHICLE-YYYYMMDD)")
	fs.StringVar(&c.plate, "plate", "", "plate, to register a vehicle that is not in the registry yet (with --licensee)")
	fs.StringVar(&c.licensee, "licensee", "", "licensee id, to register a vehicle that is not in the registry yet (with --plate)")
	fs.BoolVar(&c.rotate, "rotate", false, "replace the key and the password of a vehicle that has them")
	b.String(&c.db, "TRENZINHO_DB", "", "the monitor's database (a SQLite file or a PostgreSQL URL): when it exists, the enrolment is written to its audit log")
	b.String(&c.signingKey, "TRENZINHO_SIGNING_KEY", "", "the monitor's ed25519 signing key, whose public key the bridge pins to verify its configuration bundles (default: monitor-signing.key beside --db, when it exists; created when named here and missing)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), vehicleUsage)
		fs.PrintDefaults()
	}
	// Flags may come after the vehicle id too.
	var pos []string
	for {
		if err := b.Parse(args); err != nil {
			return flagErr(err)
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	var missing []string
	for _, f := range []struct{ name, value string }{
		{"--registry (TRENZINHO_REGISTRY)", c.registry}, {"--passwd", c.passwd}, {"--acl", c.acl}, {"--out", c.out},
	} {
		if f.value == "" {
			missing = append(missing, f.name)
		}
	}
	switch {
	case len(missing) > 0:
		fs.Usage()
		return usageErr("missing required flag %s", strings.Join(missing, ", "))
	case len(pos) != 1:
		fs.Usage()
		return usageErr("want one VEHICLE_ID, got %d: %q", len(pos), pos)
	}
	c.vehicle = pos[0]
	c.now = time.Now().UTC()
	return vehicleAdd(c, out)
}

// vehicleAdd does the work of `monitor vehicle add`. Everything is checked before anything is
// written; then the Pi's files, the password file, the ACL and last the registry are written,
// each atomically. If a later step fails, running the command again with --rotate completes it.
func vehicleAdd(c vehicleAddConfig, out io.Writer) error {
	id := c.vehicle
	if !wire.ValidVehicle(id) || strings.HasPrefix(id, "_") {
		return fmt.Errorf("identificação de veículo %q inválida: use [A-Za-z0-9_-], até 32 caracteres, sem começar por _", id)
	}
	reg, err := registry.Open(c.registry)
	if err != nil {
		return err
	}
	v, known := reg.Vehicle(id)
	switch {
	case !known && (c.plate == "" || c.licensee == ""):
		return fmt.Errorf("veículo %s não está no cadastro %s: cadastre-o antes, ou informe --plate e --licensee", id, c.registry)
	case !known:
		v = registry.Vehicle{ID: id, Plate: c.plate, Licensee: c.licensee}
	case v.KeyID != "" && !c.rotate:
		return fmt.Errorf("veículo %s já tem a chave %s no cadastro: use --rotate para substituí-la", id, v.KeyID)
	}
	users, err := mosquittoauth.Users(c.passwd)
	if err != nil {
		return err
	}
	if slices.Contains(users, id) && !c.rotate {
		return fmt.Errorf("o usuário MQTT %s já existe em %s: use --rotate para trocar a senha", id, c.passwd)
	}
	envPath, keyPath := filepath.Join(c.out, "bridge.env"), filepath.Join(c.out, "bridge.key")
	for _, p := range []string{envPath, keyPath} {
		if _, err := os.Stat(p); err == nil && !c.rotate {
			return fmt.Errorf("%s já existe: use --rotate para substituí-lo, ou outro --out", p)
		}
	}
	kid := c.kid
	if kid == "" {
		kid = defaultKid(id, c.now, v.KeyID)
	}
	if kid == v.KeyID {
		return fmt.Errorf("a nova chave precisa de outro nome que não %s (--kid)", kid)
	}

	configKey, err := monitorPublicKey(c)
	if err != nil {
		return err
	}

	// The secrets.
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	secret := make([]byte, 24)
	if _, err := rand.Read(secret); err != nil {
		return err
	}
	password := base64.RawURLEncoding.EncodeToString(secret) // 32 characters, safe unquoted in an env file
	hash, err := mosquittoauth.Hash(password, nil)
	if err != nil {
		return err
	}
	v.KeyID, v.PublicKey = kid, base64.StdEncoding.EncodeToString(pub)
	// Validate the registry edit before writing anything.
	trial := reg.Snapshot()
	if i := slices.IndexFunc(trial.Vehicles, func(x registry.Vehicle) bool { return x.ID == id }); i >= 0 {
		trial.Vehicles[i] = v
	} else {
		trial.Vehicles = append(trial.Vehicles, v)
	}
	if err := trial.Validate(); err != nil {
		return fmt.Errorf("cadastro: %w", err)
	}

	// The Pi's files.
	if err := os.MkdirAll(c.out, 0o700); err != nil {
		return err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return err
	}
	if err := writeSecret(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), c.rotate); err != nil {
		return err
	}
	if err := writeSecret(envPath, []byte(bridgeEnv(c, kid, password, configKey)), c.rotate); err != nil {
		return err
	}

	// The broker.
	if err := mosquittoauth.SetPassword(c.passwd, id, hash, c.rotate); err != nil {
		return err
	}
	topics := []string{wire.TelemetryTopic(id), wire.StatusTopic(id)}
	added, err := mosquittoauth.Grant(c.acl, id, topics, []string{configbundle.Topic(id)})
	if err != nil {
		return err
	}

	// The registry, last: the key is trusted only once the vehicle can use it.
	if _, err := reg.PutVehicle(v); err != nil {
		return err
	}
	auditEnrolment(c, id, kid, v.PublicKey, out)

	fmt.Fprintf(out, "Veículo %s habilitado.\n", id)
	fmt.Fprintf(out, "  Chave de assinatura %s registrada no cadastro %s\n", kid, c.registry)
	fmt.Fprintf(out, "    chave pública: %s\n", v.PublicKey)
	fmt.Fprintf(out, "  Senha MQTT do usuário %s gravada em %s (recarregue o broker: SIGHUP ou reinício)\n", id, c.passwd)
	if added {
		fmt.Fprintf(out, "  ACL: permissões do veículo acrescentadas em %s\n", c.acl)
	} else {
		fmt.Fprintf(out, "  ACL: %s já permite ao veículo publicar %s e %s e ler %s\n", c.acl, topics[0], topics[1], configbundle.Topic(id))
	}
	if configKey != "" {
		fmt.Fprintf(out, "  Chave pública do monitor fixada no bridge (TRENZINHO_CONFIG_KEY): %s\n", configKey)
	} else {
		fmt.Fprintf(out, "  AVISO: chave do monitor não encontrada (--signing-key): o bridge não aceitará configuração assinada até que TRENZINHO_CONFIG_KEY seja definida\n")
	}
	fmt.Fprintf(out, "  Arquivos para o Raspberry Pi (contêm a senha e a chave privada: transporte-os com segurança):\n")
	fmt.Fprintf(out, "    %s\n    %s\n", envPath, keyPath)
	return nil
}

// defaultKid names a new key after the vehicle and the day: PIU-001-20261129, with a suffix when
// that is the current key's name, and the vehicle id cut so that the kid fits the registry's
// 32 characters.
func defaultKid(vehicle string, now time.Time, current string) string {
	day := now.Format("20060102")
	for n := 1; ; n++ {
		suffix := "-" + day
		if n > 1 {
			suffix += fmt.Sprintf("-%d", n)
		}
		prefix := vehicle
		if len(prefix)+len(suffix) > 32 {
			prefix = prefix[:32-len(suffix)]
		}
		if kid := prefix + suffix; kid != current {
			return kid
		}
	}
}

// bridgeEnv is the bridge.env fragment of the vehicle: the settings that are its own.
func bridgeEnv(c vehicleAddConfig, kid, password, configKey string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `# Settings of the trenzinho bridge of vehicle %s, made by "monitor vehicle add" at %s.
# Configuração do bridge do veículo %s. CONTÉM A SENHA MQTT: mantenha em segredo.
#
# Install on the Pi (later lines of bridge.env override the empty ones of the packaged file):
#   sudo sh -c 'cat bridge.env >> /etc/trenzinho/bridge.env'
#   sudo install -o root -g trenzinho -m 0640 bridge.key %s
#   sudo systemctl restart trenzinho-bridge
TRENZINHO_VEHICLE=%s
`, c.vehicle, c.now.Format(time.RFC3339), c.vehicle, bridgeKeyPath, c.vehicle)
	if c.broker != "" {
		fmt.Fprintf(&b, "TRENZINHO_MQTT_URL=%s\n", c.broker)
	}
	fmt.Fprintf(&b, "TRENZINHO_MQTT_USER=%s\nTRENZINHO_MQTT_PASSWORD=%s\nTRENZINHO_KEY_FILE=%s\nTRENZINHO_KID=%s\n",
		c.vehicle, password, bridgeKeyPath, kid)
	if configKey != "" {
		// The monitor's public key, pinned: the bridge applies only configuration bundles it
		// signed (docs/bridge.md).
		fmt.Fprintf(&b, "TRENZINHO_CONFIG_KEY=%s\n", configKey)
	}
	return b.String()
}

// writeSecret writes a file only its owner may read: a new file unless replace, then replaced
// atomically.
func writeSecret(path string, b []byte, replace bool) error {
	if replace {
		if err := atomicfile.Write(path, b, 0o600); err != nil {
			return err
		}
		return os.Chmod(path, 0o600) // an older file may have had another mode
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%s já existe: use --rotate para substituí-lo", path)
		}
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// auditEnrolment writes the enrolment to the monitor's audit log when its database exists, as
// the system user who ran the command: a vehicle's key decides which telemetry is trusted, so
// who registered it, and when, must be on record. A failure is reported, not fatal: the
// enrolment is done by then.
func auditEnrolment(c vehicleAddConfig, vehicle, kid, pub string, out io.Writer) {
	if c.db == "" {
		return
	}
	if _, err := os.Stat(c.db); err != nil && !store.IsURL(c.db) {
		fmt.Fprintf(out, "  Auditoria: banco %s não encontrado; habilitação não registrada no log de auditoria\n", c.db)
		return
	}
	ctx := context.Background()
	db, err := store.Open(ctx, c.db)
	if err == nil {
		defer db.Close()
		action := "vehicle.key.add"
		if c.rotate {
			action = "vehicle.key.rotate"
		}
		who := "sistema"
		if u, uerr := user.Current(); uerr == nil {
			who = u.Username
		}
		after, _ := json.Marshal(map[string]string{"key_id": kid, "public_key": pub, "passwd": c.passwd, "acl": c.acl})
		err = db.Audit(ctx, store.AuditEntry{Time: c.now, User: "cli:" + who, Action: action, Object: "vehicle:" + vehicle, After: after})
	}
	if err != nil {
		fmt.Fprintf(out, "  Auditoria: não foi possível registrar a habilitação no banco %s: %v\n", c.db, err)
		return
	}
	fmt.Fprintf(out, "  Auditoria: registrada no banco %s\n", c.db)
}

// monitorPublicKey returns the monitor's public key (base64) for the bridge to pin: from
// --signing-key (created when missing, as the monitor would at its first start), else from
// monitor-signing.key beside --db when it exists; "" when there is none.
func monitorPublicKey(c vehicleAddConfig) (string, error) {
	path := c.signingKey
	if path == "" {
		if c.db == "" || store.IsURL(c.db) {
			return "", nil // beside a PostgreSQL database there is no file: give --signing-key
		}
		path = filepath.Join(filepath.Dir(c.db), "monitor-signing.key")
		if _, err := os.Stat(path); err != nil {
			return "", nil
		}
	}
	key, _, err := loadOrCreateKey(path)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(key.Public().(ed25519.PublicKey)), nil
}
