package images

import (
	"bufio"
	"context"
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// repoRoot is two levels up from this package (e2e/images).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestDockerfileContextBuilds builds ./cmd/confighash from exactly the files
// the Dockerfile's build stage copies out of the build context that
// .dockerignore leaves. It is what `docker build` would compile, without a
// Docker engine: a package the image needs but the context drops fails here.
func TestDockerfileContextBuilds(t *testing.T) {
	root := repoRoot(t)
	ignore := readIgnore(t, filepath.Join(root, ".dockerignore"))
	stages := readDockerfile(t, filepath.Join(root, "Dockerfile"))
	sources := stages[0].copySources
	if len(sources) == 0 {
		t.Fatal("the build stage copies nothing from the context")
	}
	out, err := exec.Command("git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("listing the repository's files: %v", err)
	}
	ctxDir := t.TempDir()
	copied := 0
	for _, f := range strings.Fields(string(out)) {
		if ignore.matches(f) || !copiedBy(sources, f) {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, f)); os.IsNotExist(err) {
			continue // deleted in the work tree, not yet in git
		}
		copyFile(t, filepath.Join(root, f), filepath.Join(ctxDir, f))
		copied++
	}
	t.Logf("build context: %d files", copied)
	// For each platform the image is built for, as `docker buildx build
	// --platform` cross-compiles it.
	for _, p := range Platforms() {
		// The Dockerfile's flags, which are also the image builder's: the
		// packages compiled for one are in the build cache for the other.
		build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(t.TempDir(), "confighash"), "./cmd/confighash")
		build.Dir = ctxDir
		build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Architecture, "GOWORK=off", "GOFLAGS=-mod=readonly")
		if b, err := build.CombinedOutput(); err != nil {
			t.Fatalf("the Dockerfile's build for %s would fail: %v\n%s", p, err, b)
		}
	}
}

// TestDockerfileCrossBuilds checks that the Dockerfile builds for any target
// platform as BuildKit passes it: the build stage runs on the builder's own
// platform and compiles for TARGETOS/TARGETARCH, so one builder makes the
// image of every platform in Platforms without emulation.
func TestDockerfileCrossBuilds(t *testing.T) {
	stages := readDockerfile(t, filepath.Join(repoRoot(t), "Dockerfile"))
	build := stages[0]
	if build.platform != "$BUILDPLATFORM" {
		t.Errorf("the build stage's FROM --platform is %q, want $BUILDPLATFORM", build.platform)
	}
	for _, arg := range []string{"TARGETOS", "TARGETARCH"} {
		if !slices.Contains(build.args, arg) {
			t.Errorf("the build stage does not declare ARG %s", arg)
		}
	}
	var goBuild string
	for _, run := range build.runs {
		if strings.Contains(run, "go build") {
			goBuild = run
		}
	}
	for _, want := range []string{"CGO_ENABLED=0", "GOOS=$TARGETOS", "GOARCH=$TARGETARCH"} {
		if !slices.Contains(strings.Fields(goBuild), want) {
			t.Errorf("the build stage's go build %q does not set %s", goBuild, want)
		}
	}
}

// TestImageMatchesDockerfile checks that the image the e2e harness builds in
// Go agrees with the Dockerfile's final stage: same entrypoint, same user, and
// a static binary at the entrypoint.
func TestImageMatchesDockerfile(t *testing.T) {
	root := repoRoot(t)
	stages := readDockerfile(t, filepath.Join(root, "Dockerfile"))
	final := stages[len(stages)-1]
	spec := Confighash()
	if want := []string{spec.Binary}; strings.Join(final.entrypoint, " ") != strings.Join(want, " ") {
		t.Errorf("Dockerfile ENTRYPOINT %q, harness image entrypoint %q", final.entrypoint, want)
	}
	if final.user != NonrootUser {
		t.Errorf("Dockerfile USER %q, harness image user %q", final.user, NonrootUser)
	}
	if testing.Short() {
		t.Skip("building the image takes a while")
	}
	tarPath, err := Build(context.Background(), root, t.TempDir(), spec)
	if err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(tarPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Config.Entrypoint; len(got) != 1 || got[0] != final.entrypoint[0] {
		t.Errorf("built image entrypoint %q, Dockerfile %q", got, final.entrypoint)
	}
	if cfg.Config.User != final.user {
		t.Errorf("built image user %q, Dockerfile %q", cfg.Config.User, final.user)
	}
	// The binary the harness put in the image: static means no ELF
	// interpreter, which an empty (or distroless static) base could not run.
	bin := filepath.Join(filepath.Dir(tarPath), "bin-confighash")
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s is dynamically linked", bin)
		}
	}
}

// stage is what the tests need of one Dockerfile stage.
type stage struct {
	platform    string   // FROM --platform
	args        []string // names declared with ARG
	runs        []string // RUN commands, as written
	copySources []string // sources of COPY from the build context
	user        string
	entrypoint  []string
}

// readDockerfile reads the few instructions the tests care about. Line
// continuations are not supported, and a COPY option other than --from fails
// the test rather than being misread.
func readDockerfile(t *testing.T, file string) []stage {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var stages []stage
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		if strings.HasSuffix(sc.Text(), "\\") {
			t.Fatalf("Dockerfile line continuations are not understood by this test: %q", sc.Text())
		}
		instr, args := strings.ToUpper(fields[0]), fields[1:]
		if instr == "FROM" {
			var st stage
			if p, ok := strings.CutPrefix(args[0], "--platform="); ok {
				st.platform = p
			}
			stages = append(stages, st)
			continue
		}
		if len(stages) == 0 {
			continue
		}
		cur := &stages[len(stages)-1]
		switch instr {
		case "ARG":
			arg, _, _ := strings.Cut(args[0], "=")
			cur.args = append(cur.args, arg)
		case "RUN":
			cur.runs = append(cur.runs, strings.TrimSpace(strings.TrimPrefix(sc.Text(), fields[0])))
		case "COPY":
			if strings.HasPrefix(args[0], "--from") {
				continue
			}
			if strings.HasPrefix(args[0], "--") {
				t.Fatalf("COPY option %s is not understood by this test", args[0])
			}
			cur.copySources = append(cur.copySources, args[:len(args)-1]...)
		case "USER":
			cur.user = args[0]
		case "ENTRYPOINT":
			raw := strings.TrimSpace(strings.TrimPrefix(sc.Text(), fields[0]))
			if err := json.Unmarshal([]byte(raw), &cur.entrypoint); err != nil {
				t.Fatalf("ENTRYPOINT must be in exec form: %v", err)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(stages) < 2 {
		t.Fatalf("want a build stage and a final stage, got %d stages", len(stages))
	}
	return stages
}

// copiedBy reports whether a context file is under one of the COPY sources.
func copiedBy(sources []string, file string) bool {
	for _, s := range sources {
		s = strings.TrimSuffix(strings.TrimPrefix(s, "./"), "/")
		if s == "." || s == "" || file == s || strings.HasPrefix(file, s+"/") {
			return true
		}
	}
	return false
}

// ignoreRules is a .dockerignore limited to the forms this repository uses:
// "dir/" (a top-level directory) and "**/glob" or "**/dir/" (any path
// element). Any other form fails the test, so the rules and this reading of
// them cannot silently disagree.
type ignoreRules struct {
	dirs    []string
	anyDir  []string
	anyGlob []string
}

func readIgnore(t *testing.T, file string) ignoreRules {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var r ignoreRules
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "**/") && strings.HasSuffix(line, "/"):
			r.anyDir = append(r.anyDir, strings.TrimSuffix(strings.TrimPrefix(line, "**/"), "/"))
		case strings.HasPrefix(line, "**/") && !strings.Contains(line[3:], "/"):
			r.anyGlob = append(r.anyGlob, line[3:])
		case strings.HasSuffix(line, "/") && !strings.ContainsAny(line, "*?[!"):
			r.dirs = append(r.dirs, strings.TrimSuffix(line, "/"))
		default:
			t.Fatalf(".dockerignore line %q is not a form this test understands", line)
		}
	}
	return r
}

func (r ignoreRules) matches(file string) bool {
	for _, d := range r.dirs {
		if strings.HasPrefix(file, d+"/") {
			return true
		}
	}
	parts := strings.Split(file, "/")
	for _, p := range parts[:len(parts)-1] {
		for _, d := range r.anyDir {
			if p == d {
				return true
			}
		}
	}
	for _, g := range r.anyGlob {
		if ok, _ := path.Match(g, parts[len(parts)-1]); ok {
			return true
		}
	}
	return false
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
