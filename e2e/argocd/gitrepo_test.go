package argocd

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitRepo is a local Git repository that a spec commits its application to,
// the way a user pushes: Argo CD's repo-server clones it with the git
// command through its file:// URL.
type gitRepo struct {
	dir string
}

func newGitRepo(t *testing.T) *gitRepo {
	t.Helper()
	r := &gitRepo{dir: t.TempDir()}
	r.git(t, "init", "--quiet", "--initial-branch=main")
	return r
}

// URL is what an Application's source.repoURL names.
func (r *gitRepo) URL() string { return "file://" + r.dir }

// commit writes files (path relative to the repository: content) and
// commits them, returning the new commit's SHA.
func (r *gitRepo) commit(t *testing.T, message string, files map[string]string) string {
	t.Helper()
	for path, content := range files {
		full := filepath.Join(r.dir, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r.git(t, "add", "--all")
	r.git(t, "commit", "--quiet", "--allow-empty", "-m", message)
	return r.git(t, "rev-parse", "HEAD")
}

func (r *gitRepo) git(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=e2e", "-c", "user.email=e2e@confighash.invalid", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = r.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}
