package mosquittoauth

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
)

// ACL is a Mosquitto acl_file, parsed as the broker reads it: "user NAME" starts the entries of
// that user, "topic [read|write|readwrite|deny] TOPIC" grants (or denies) a topic to the current
// user (before any "user" line: to anonymous clients), and "pattern [access] TOPIC" applies to
// every client, with %u replaced by its user name and %c by its client id.
type ACL struct {
	Patterns []Entry
	Users    map[string][]Entry
}

// Entry is one topic or pattern line.
type Entry struct {
	Access string // read, write, readwrite or deny
	Topic  string
}

// ParseACL parses an ACL file's text.
func ParseACL(b []byte) (*ACL, error) {
	a := &ACL{Users: map[string][]Entry{}}
	user := "" // "" : anonymous
	sc := bufio.NewScanner(bytes.NewReader(b))
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		kw, rest, _ := strings.Cut(line, " ")
		rest = strings.TrimSpace(rest)
		switch kw {
		case "user":
			if rest == "" {
				return nil, fmt.Errorf("acl line %d: user without a name", n)
			}
			user = rest
		case "topic", "pattern":
			e := Entry{Access: "readwrite", Topic: rest}
			if acc, topic, ok := strings.Cut(rest, " "); ok {
				switch acc {
				case "read", "write", "readwrite", "deny":
					e = Entry{Access: acc, Topic: strings.TrimSpace(topic)}
				}
			}
			if e.Topic == "" {
				return nil, fmt.Errorf("acl line %d: %s without a topic", n, kw)
			}
			if kw == "pattern" {
				a.Patterns = append(a.Patterns, e)
			} else {
				a.Users[user] = append(a.Users[user], e)
			}
		default:
			return nil, fmt.Errorf("acl line %d: unknown keyword %q", n, kw)
		}
	}
	return a, sc.Err()
}

// CanWrite reports whether user, connected with clientID, may publish to topic: a pattern or one
// of the user's topic lines grants write (write or readwrite) and none denies it.
func (a *ACL) CanWrite(user, clientID, topic string) bool {
	return a.can(user, clientID, topic, "write")
}

// can reports whether user, connected with clientID, has access ("read" or "write") to topic:
// a pattern or one of the user's topic lines grants it (that access or readwrite) and none
// denies it.
func (a *ACL) can(user, clientID, topic, access string) bool {
	granted := false
	check := func(e Entry, filter string) bool {
		if !Match(filter, topic) {
			return true
		}
		switch e.Access {
		case "deny":
			return false
		case access, "readwrite":
			granted = true
		}
		return true
	}
	for _, e := range a.Users[user] {
		if !check(e, e.Topic) {
			return false
		}
	}
	pattern := strings.NewReplacer("%u", user, "%c", clientID)
	for _, e := range a.Patterns {
		if !check(e, pattern.Replace(e.Topic)) {
			return false
		}
	}
	return granted
}

// Match reports whether an MQTT topic filter (with + and # wildcards) matches topic.
func Match(filter, topic string) bool {
	f, t := strings.Split(filter, "/"), strings.Split(topic, "/")
	for i, level := range f {
		if level == "#" {
			return i == len(f)-1
		}
		if i >= len(t) {
			return false
		}
		if level != "+" && level != t[i] {
			return false
		}
	}
	return len(f) == len(t)
}

// GrantWrite makes sure user may publish to topics: when the ACL at path grants them already
// (through patterns or the user's entries) it changes nothing and returns added = false;
// otherwise it appends a "user" section with one "topic write" line per topic. A missing file is
// created (mode 0644).
func GrantWrite(path, user string, topics []string) (added bool, err error) {
	return Grant(path, user, topics, nil)
}
