package deploy

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"
)

// binaryFlag is one flag of `confighash serve`, as its help lists it.
type binaryFlag struct {
	Name string
	Type string // "string", "int", "duration", "float", "level", ...; "" for booleans
}

var (
	binaryOnce  sync.Once
	binaryPath  string
	binaryFlags map[string]binaryFlag
	binaryErr   error
)

// helpLine matches a line of pflag's usage: "      --cert-dir string   ...".
var helpLine = regexp.MustCompile(`^\s+(?:-\w, )?--([a-z0-9-]+)(?: ([A-Za-z0-9-]+))?\s{2,}`)

// confighashBinary builds cmd/confighash from the repository (its own
// module, so with its own go.mod) and reads its flags from `serve --help`.
// The binary is what the image runs, so these are the flags the Deployment
// can pass.
func confighashBinary(t *testing.T) (string, map[string]binaryFlag) {
	t.Helper()
	binaryOnce.Do(func() {
		_, p := allRenders(t)
		dir, err := os.MkdirTemp("", "confighash-deploy-test-")
		if err != nil {
			binaryErr = err
			return
		}
		// Left for the OS to clean: tests of several packages may share it.
		binaryPath = filepath.Join(dir, "confighash")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		build := exec.CommandContext(ctx, "go", "build", "-o", binaryPath, "./cmd/confighash")
		build.Dir = p.Root
		build.Env = append(os.Environ(), "GOWORK=off")
		if out, err := build.CombinedOutput(); err != nil {
			binaryErr = fmt.Errorf("building cmd/confighash: %w\n%s", err, out)
			return
		}
		var stderr bytes.Buffer
		help := exec.CommandContext(ctx, binaryPath, "serve", "--help")
		help.Stdout, help.Stderr = &stderr, &stderr
		_ = help.Run() // --help exits 2, like any usage error
		binaryFlags = map[string]binaryFlag{}
		for _, line := range bytes.Split(stderr.Bytes(), []byte("\n")) {
			if m := helpLine.FindSubmatch(line); m != nil {
				binaryFlags[string(m[1])] = binaryFlag{Name: string(m[1]), Type: string(m[2])}
			}
		}
		if len(binaryFlags) == 0 {
			binaryErr = fmt.Errorf("no flags found in `confighash serve --help`:\n%s", stderr.Bytes())
		}
	})
	if binaryErr != nil {
		t.Fatal(binaryErr)
	}
	return binaryPath, binaryFlags
}
