package deploy

import (
	"os"
	"os/exec"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
)

// dockerfile is the parsed Dockerfile: its instructions, continuation lines joined.
type dockerInstr struct {
	Cmd  string // upper case
	Args string
}

func parseDockerfile(b []byte) []dockerInstr {
	var out []dockerInstr
	var cur strings.Builder
	for _, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimSpace(line)
		if cur.Len() == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if strings.HasSuffix(trimmed, "\\") {
			cur.WriteString(strings.TrimSuffix(trimmed, "\\"))
			cur.WriteByte(' ')
			continue
		}
		cur.WriteString(trimmed)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, dockerInstr{Cmd: strings.ToUpper(cmd), Args: strings.TrimSpace(args)})
		cur.Reset()
	}
	return out
}

func TestDockerfile(t *testing.T) {
	instrs := parseDockerfile(readFile(t, "Dockerfile"))
	var stages [][]dockerInstr
	for _, in := range instrs {
		if in.Cmd == "FROM" {
			stages = append(stages, nil)
		}
		if len(stages) == 0 {
			if in.Cmd != "ARG" {
				t.Fatalf("Dockerfile: %s before the first FROM", in.Cmd)
			}
			continue
		}
		stages[len(stages)-1] = append(stages[len(stages)-1], in)
	}
	if len(stages) < 2 {
		t.Fatalf("Dockerfile: %d stages, want a multi-stage build", len(stages))
	}

	// The build stage: a static build of the programs.
	var built []string
	copied := map[string]bool{}
	for _, in := range stages[0] {
		if in.Cmd == "COPY" && !strings.Contains(in.Args, "--from") {
			f := strings.Fields(in.Args)
			for _, src := range f[:len(f)-1] {
				copied[strings.TrimSuffix(path.Clean(src), "/")] = true
				if !exists(t, src) {
					t.Errorf("Dockerfile: COPY %s: no such file in the checkout", src)
				}
			}
			if slices.Contains(f, ".") {
				t.Error("Dockerfile: COPY . copies .env, certs/ and secrets/ into a layer: copy the source directories")
			}
		}
		if in.Cmd == "RUN" && strings.Contains(in.Args, "go build") {
			if !strings.Contains(in.Args, "CGO_ENABLED=0") {
				t.Error("Dockerfile: go build without CGO_ENABLED=0 (the final image has no C library)")
			}
			for _, f := range strings.Fields(in.Args) {
				if strings.HasPrefix(f, "./") {
					built = append(built, strings.TrimPrefix(path.Clean(f), "./"))
				}
			}
		}
	}
	for _, want := range []string{"ingest", "monitor", "deploy/healthcheck"} {
		if !slices.Contains(built, want) {
			t.Errorf("Dockerfile: go build does not build ./%s (built: %q)", want, built)
		}
	}
	binaries := map[string]bool{}
	for _, b := range built {
		binaries[path.Base(b)] = true
	}

	// Every package of the module the programs import is copied into the build stage.
	goBin, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("go not in PATH: cannot list the programs' packages")
		}
		t.Skip("go not in PATH: cannot list the programs' packages")
	}
	args := append([]string{"list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}"}, prefixed("./", built)...)
	cmd := exec.Command(goBin, args...)
	cmd.Dir = testenv.RepoRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const module = "github.com/trenzinho/trenzinho/"
	for _, p := range strings.Fields(string(out)) {
		rel, ok := strings.CutPrefix(p, module)
		if !ok {
			continue
		}
		covered := false
		for dir := rel; dir != "." && dir != ""; dir = path.Dir(dir) {
			if copied[dir] {
				covered = true
				break
			}
		}
		if !covered {
			t.Errorf("Dockerfile: package %s is imported by the programs but its directory is not copied", rel)
		}
	}

	// The final stage: small, non-root, the binaries where the compose file runs them.
	final := stages[len(stages)-1]
	from := final[0].Args
	user := ""
	for _, in := range final {
		if in.Cmd == "USER" {
			user = in.Args
		}
		if in.Cmd == "COPY" && strings.Contains(in.Args, "--from=build /out/") && !strings.HasSuffix(in.Args, " /usr/local/bin/") {
			t.Errorf("Dockerfile: binaries copied to %q, want /usr/local/bin/", in.Args)
		}
	}
	switch {
	case strings.Contains(from, "distroless/static") && strings.Contains(from, ":nonroot"):
	case strings.Contains(from, "alpine"):
	default:
		t.Errorf("Dockerfile: final image %q, want distroless static (nonroot) or alpine", from)
	}
	if user == "" || regexp.MustCompile(`^(0|root)(:|$)`).MatchString(user) {
		t.Errorf("Dockerfile: final stage runs as %q, want a non-root USER", user)
	}

	// The compose file runs binaries the image has.
	c := loadCompose(t)
	for _, svc := range sortedKeys(c.Services) {
		if c.Services[svc]["build"] == nil {
			continue
		}
		hc, _ := c.Services[svc]["healthcheck"].(map[string]any)
		for _, argv := range [][]string{stringList(c.Services[svc]["command"]), stringList(hc["test"])[1:]} {
			if len(argv) == 0 {
				continue
			}
			bin, ok := strings.CutPrefix(argv[0], "/usr/local/bin/")
			if !ok || !binaries[bin] {
				t.Errorf("service %s runs %s, which the Dockerfile does not build into /usr/local/bin", svc, argv[0])
			}
		}
	}
}

func prefixed(prefix string, list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = prefix + s
	}
	return out
}
