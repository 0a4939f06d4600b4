package deploy

import (
	"bufio"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
)

func readFile(t testing.TB, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// envFile is a parsed .env file: NAME=value lines, in order.
type envFile struct {
	Names  []string
	Values map[string]string
}

func parseEnvFile(b []byte) (envFile, error) {
	e := envFile{Values: map[string]string{}}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, value, ok := strings.Cut(line, "=")
		if !ok || !regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`).MatchString(name) {
			return e, fmt.Errorf("line %d: not NAME=value: %q", n, line)
		}
		if _, dup := e.Values[name]; dup {
			return e, fmt.Errorf("line %d: %s set twice", n, name)
		}
		e.Names = append(e.Names, name)
		e.Values[name] = value
	}
	return e, sc.Err()
}

func loadEnvExample(t testing.TB) envFile {
	t.Helper()
	e, err := parseEnvFile(readFile(t, ".env.example"))
	if err != nil {
		t.Fatalf(".env.example: %v", err)
	}
	return e
}

// varRef is one ${…} or $NAME reference of a compose file.
type varRef struct {
	Name     string
	Op       string // "", ":-", "-", ":?", "?", ":+", "+"
	Arg      string
	Required bool // ${NAME:?…} or ${NAME?…}
}

var varRefRE = regexp.MustCompile(`\$(\$|\{([A-Za-z_][A-Za-z0-9_]*)((:?[-?+])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))`)

// interpolate substitutes the variables of s as docker compose does ($$ is a literal $) with
// the values of env, and returns the references it found. A reference compose cannot parse (a
// "$" not followed by a name, "{" or "$") is an error.
func interpolate(s string, env map[string]string) (string, []varRef, error) {
	return interp(s, env, true)
}

// references returns the variable references of s, whatever their values.
func references(s string) ([]varRef, error) {
	_, refs, err := interp(s, nil, false)
	return refs, err
}

func interp(s string, env map[string]string, strict bool) (string, []varRef, error) {
	var refs []varRef
	var out strings.Builder
	rest := s
	for {
		i := strings.IndexByte(rest, '$')
		if i < 0 {
			out.WriteString(rest)
			return out.String(), refs, nil
		}
		out.WriteString(rest[:i])
		m := varRefRE.FindStringSubmatchIndex(rest[i:])
		if m == nil || m[0] != 0 {
			return "", nil, fmt.Errorf("%q: invalid interpolation at %q (write $$ for a literal $)", s, rest[i:])
		}
		whole := rest[i : i+m[1]]
		sub := func(k int) string {
			if m[2*k] < 0 {
				return ""
			}
			return rest[i+m[2*k] : i+m[2*k+1]]
		}
		switch {
		case whole == "$$":
			out.WriteByte('$')
		default:
			r := varRef{Name: sub(2), Op: sub(4), Arg: sub(5)}
			if r.Name == "" {
				r.Name = sub(6)
			}
			r.Required = strings.HasSuffix(r.Op, "?")
			refs = append(refs, r)
			v, set := env[r.Name]
			switch r.Op {
			case ":-":
				if v == "" {
					v = r.Arg
				}
			case "-":
				if !set {
					v = r.Arg
				}
			case ":?":
				if v == "" && strict {
					return "", nil, fmt.Errorf("%s: %s", r.Name, r.Arg)
				}
			case "?":
				if !set && strict {
					return "", nil, fmt.Errorf("%s: %s", r.Name, r.Arg)
				}
			case ":+":
				if v != "" {
					v = r.Arg
				}
			case "+":
				if set {
					v = r.Arg
				}
			}
			out.WriteString(v)
		}
		rest = rest[i+m[1]:]
	}
}

// compose is the parsed docker-compose.yml, kept generic (the compose schema is large); the
// helpers below read what the tests need.
type compose struct {
	Raw      map[string]any
	Services map[string]map[string]any
	Volumes  map[string]any
}

func loadCompose(t testing.TB) compose {
	t.Helper()
	return parseCompose(t, readFile(t, "docker-compose.yml"))
}

func parseCompose(t testing.TB, b []byte) compose {
	t.Helper()
	var c compose
	if err := yaml.Unmarshal(b, &c.Raw); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	c.Services = map[string]map[string]any{}
	svcs, _ := c.Raw["services"].(map[string]any)
	if len(svcs) == 0 {
		t.Fatal("docker-compose.yml: no services")
	}
	for name, s := range svcs {
		m, ok := s.(map[string]any)
		if !ok {
			t.Fatalf("service %s: not a mapping", name)
		}
		c.Services[name] = m
	}
	c.Volumes, _ = c.Raw["volumes"].(map[string]any)
	return c
}

// strings walks v and calls fn for every string scalar with its path (keys and indexes).
func walkStrings(v any, at string, fn func(at, s string)) {
	switch x := v.(type) {
	case string:
		fn(at, x)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			walkStrings(x[k], at+"."+k, fn)
		}
	case []any:
		for i, e := range x {
			walkStrings(e, fmt.Sprintf("%s[%d]", at, i), fn)
		}
	}
}

// environment returns a service's environment as a map (both the mapping and the list form).
func (c compose) environment(t testing.TB, svc string) map[string]string {
	t.Helper()
	out := map[string]string{}
	switch e := c.Services[svc]["environment"].(type) {
	case nil:
	case map[string]any:
		for k, v := range e {
			out[k] = fmt.Sprint(v)
			if v == nil {
				out[k] = ""
			}
		}
	case []any:
		for _, item := range e {
			k, v, _ := strings.Cut(fmt.Sprint(item), "=")
			out[k] = v
		}
	default:
		t.Fatalf("service %s: environment of type %T", svc, e)
	}
	return out
}

// mount is one entry of a service's volumes.
type mount struct {
	Source   string // a named volume, or a host path as written (before interpolation)
	Target   string
	ReadOnly bool
	Bind     bool
}

func (c compose) mounts(t testing.TB, svc string) []mount {
	t.Helper()
	var out []mount
	list, _ := c.Services[svc]["volumes"].([]any)
	for _, v := range list {
		var m mount
		switch x := v.(type) {
		case string:
			parts := splitVolume(x)
			if len(parts) < 2 || len(parts) > 3 {
				t.Fatalf("service %s: volume %q: want SOURCE:TARGET[:MODE]", svc, x)
			}
			m.Source, m.Target = parts[0], parts[1]
			m.ReadOnly = len(parts) == 3 && slices.Contains(strings.Split(parts[2], ","), "ro")
		case map[string]any:
			m.Source, _ = x["source"].(string)
			m.Target, _ = x["target"].(string)
			m.ReadOnly, _ = x["read_only"].(bool)
		default:
			t.Fatalf("service %s: volume of type %T", svc, v)
		}
		m.Bind = strings.HasPrefix(m.Source, ".") || strings.HasPrefix(m.Source, "/") || strings.HasPrefix(m.Source, "$") || strings.HasPrefix(m.Source, "~")
		out = append(out, m)
	}
	return out
}

// resolved is where a container path of a service comes from.
type resolved struct {
	Volume  string // a named volume, or
	HostRel string // a path relative to the repository (cleaned, slash-separated)
	Mount   mount
}

// resolve maps a container path of svc to its source through the service's mounts (the longest
// target that contains it wins, as in the container). env interpolates host paths.
func (c compose) resolve(t testing.TB, svc, containerPath string, env map[string]string) (resolved, bool) {
	t.Helper()
	var best *mount
	for _, m := range c.mounts(t, svc) {
		if containerPath == m.Target || strings.HasPrefix(containerPath, strings.TrimSuffix(m.Target, "/")+"/") {
			if best == nil || len(m.Target) > len(best.Target) {
				m := m
				best = &m
			}
		}
	}
	if best == nil {
		return resolved{}, false
	}
	rest := strings.TrimPrefix(strings.TrimPrefix(containerPath, best.Target), "/")
	if !best.Bind {
		return resolved{Volume: best.Source, Mount: *best}, true
	}
	src, _, err := interpolate(best.Source, env)
	if err != nil {
		t.Fatalf("service %s: volume %s: %v", svc, best.Source, err)
	}
	return resolved{HostRel: path.Clean(path.Join(src, rest)), Mount: *best}, true
}

// stringList reads a compose value that is a string or a list of strings.
func stringList(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		out := make([]string, len(x))
		for i, e := range x {
			out[i] = fmt.Sprint(e)
		}
		return out
	}
	return nil
}

func exists(t testing.TB, rel string) bool {
	t.Helper()
	_, err := os.Stat(filepath.Join(testenv.RepoRoot(t), filepath.FromSlash(rel)))
	return err == nil
}

// splitVolume splits SOURCE:TARGET[:MODE] at the colons outside ${…}.
func splitVolume(v string) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(v); i++ {
		switch {
		case v[i] == '{' && i > 0 && v[i-1] == '$':
			depth++
		case v[i] == '}' && depth > 0:
			depth--
		case v[i] == ':' && depth == 0:
			parts = append(parts, v[start:i])
			start = i + 1
		}
	}
	return append(parts, v[start:])
}

// holdsMounts reports whether some mount of svc lies inside the container directory dir.
func (c compose) holdsMounts(t testing.TB, svc, dir string) bool {
	t.Helper()
	for _, m := range c.mounts(t, svc) {
		if strings.HasPrefix(m.Target, strings.TrimSuffix(dir, "/")+"/") {
			return true
		}
	}
	return false
}
