package mosquittoauth

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/trenzinho/trenzinho/internal/atomicfile"
)

// CanRead reports whether user, connected with clientID, may receive messages of topic: a
// pattern or one of the user's topic lines grants read (read or readwrite) and none denies it.
func (a *ACL) CanRead(user, clientID, topic string) bool {
	return a.can(user, clientID, topic, "read")
}

// Grant makes sure user may publish to write and read read: when the ACL at path grants them
// already it changes nothing and returns added = false; otherwise it appends a "user" section
// with one "topic write" line per write topic and one "topic read" line per read topic. A
// missing file is created (mode 0644).
func Grant(path, user string, write, read []string) (added bool, err error) {
	if !ValidUser(user) {
		return false, fmt.Errorf("mosquitto acl: invalid user name %q", user)
	}
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	a, err := ParseACL(old)
	if err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	missing := false
	for _, t := range write {
		missing = missing || !a.CanWrite(user, user, t)
	}
	for _, t := range read {
		missing = missing || !a.CanRead(user, user, t)
	}
	if !missing {
		return false, nil
	}
	var b bytes.Buffer
	b.Write(old)
	if len(old) > 0 && !bytes.HasSuffix(old, []byte("\n")) {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "\nuser %s\n", user)
	for _, t := range write {
		fmt.Fprintf(&b, "topic write %s\n", t)
	}
	for _, t := range read {
		fmt.Fprintf(&b, "topic read %s\n", t)
	}
	return true, atomicfile.Write(path, b.Bytes(), 0o644)
}
