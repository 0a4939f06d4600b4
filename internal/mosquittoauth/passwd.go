// Package mosquittoauth writes Mosquitto 2's password and ACL files: password hashes in the
// PBKDF2-SHA512 format of mosquitto_passwd ("$7$"), per-user ACL entries, and the check that a
// pattern ACL already grants a vehicle its own topics. Files are replaced atomically and keep
// their permissions and owner, so that the broker (which reads them at start and on SIGHUP)
// never sees a torn file.
package mosquittoauth

import (
	"bufio"
	"bytes"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/trenzinho/trenzinho/internal/atomicfile"
)

// Parameters of mosquitto_passwd (Mosquitto 2.0): PBKDF2 with HMAC-SHA512, a 12-byte salt, a
// 64-byte hash, 101 iterations. The broker reads the iteration count from each line, so more
// would work too; the passwords this package is used for are random (192 bits), which no
// iteration count makes stronger.
const (
	Iterations = 101
	saltLen    = 12
	hashLen    = 64
)

// Hash returns the password file hash of password: "$7$101$<salt>$<hash>", salt and hash in
// standard base64, as mosquitto_passwd writes it.
func Hash(password string, random io.Reader) (string, error) {
	if random == nil {
		random = rand.Reader
	}
	salt := make([]byte, saltLen)
	if _, err := io.ReadFull(random, salt); err != nil {
		return "", err
	}
	return hashWith(password, salt, Iterations)
}

func hashWith(password string, salt []byte, iterations int) (string, error) {
	h, err := pbkdf2.Key(sha512.New, password, salt, iterations, hashLen)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("$7$%d$%s$%s", iterations, base64.StdEncoding.EncodeToString(salt), base64.StdEncoding.EncodeToString(h)), nil
}

// Check reports whether password matches a "$7$" hash (as written by Hash or mosquitto_passwd).
func Check(hash, password string) bool {
	parts := strings.Split(hash, "$")
	// "", "7", iterations, salt, hash
	if len(parts) != 5 || parts[0] != "" || parts[1] != "7" {
		return false
	}
	iter, err := strconv.Atoi(parts[2])
	if err != nil || iter < 1 {
		return false
	}
	salt, err := base64.StdEncoding.DecodeString(parts[3])
	if err != nil {
		return false
	}
	want, err := hashWith(password, salt, iter)
	return err == nil && subtle.ConstantTimeCompare([]byte(want), []byte(hash)) == 1
}

// ValidUser reports whether name can be a user of a password file: not empty, no ':' (the
// separator), no control characters or spaces, and not an MQTT wildcard or level separator
// (a user name is substituted for %u in ACL patterns).
func ValidUser(name string) bool {
	return name != "" && len(name) <= 65535 && !strings.ContainsAny(name, ":+#/ \t\r\n\x00")
}

// ErrUserExists is returned by SetPassword when the user is in the file and replace is false.
var ErrUserExists = errors.New("user already in the password file")

// Users returns the user names of a password file, in order; a missing file has none.
func Users(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if user, _, ok := strings.Cut(strings.TrimRight(line, "\r"), ":"); ok && !strings.HasPrefix(user, "#") {
			out = append(out, user)
		}
	}
	return out, nil
}

// SetPassword sets user's password hash in the password file at path, creating it (mode 0600)
// when missing: a new user is appended, an existing one's line replaced when replace is true
// (else ErrUserExists). Other lines are kept byte for byte.
func SetPassword(path, user, hash string, replace bool) error {
	if !ValidUser(user) {
		return fmt.Errorf("mosquitto password file: invalid user name %q", user)
	}
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	var out bytes.Buffer
	found := false
	sc := bufio.NewScanner(bytes.NewReader(old))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if u, _, ok := strings.Cut(line, ":"); ok && u == user {
			if !replace {
				return fmt.Errorf("%w: %s", ErrUserExists, user)
			}
			if !found {
				fmt.Fprintf(&out, "%s:%s\n", user, hash)
			}
			found = true
			continue
		}
		out.WriteString(line)
		out.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if !found {
		fmt.Fprintf(&out, "%s:%s\n", user, hash)
	}
	return atomicfile.Write(path, out.Bytes(), 0o600)
}
