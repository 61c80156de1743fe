package certs

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestWriteFileIfChanged(t *testing.T) {
	tests := map[string]struct {
		existing     []byte // nil: file absent
		existingMode os.FileMode
		data         []byte
		mode         os.FileMode
		wantWrite    bool
	}{
		"absent":                   {data: []byte("new"), mode: 0o600, wantWrite: true},
		"unchanged":                {existing: []byte("same"), existingMode: 0o600, data: []byte("same"), mode: 0o600},
		"changed":                  {existing: []byte("old"), existingMode: 0o600, data: []byte("new"), mode: 0o600, wantWrite: true},
		"unchanged, mode too open": {existing: []byte("same"), existingMode: 0o644, data: []byte("same"), mode: 0o600},
		"public certificate mode":  {data: []byte("cert"), mode: 0o644, wantWrite: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "f")
			var before os.FileInfo
			if tc.existing != nil {
				if err := os.WriteFile(path, tc.existing, tc.existingMode); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(path, tc.existingMode); err != nil { // umask-proof
					t.Fatal(err)
				}
				var err error
				if before, err = os.Stat(path); err != nil {
					t.Fatal(err)
				}
			}

			wrote, err := writeFileIfChanged(path, tc.data, tc.mode)
			if err != nil {
				t.Fatal(err)
			}
			if wrote != tc.wantWrite {
				t.Errorf("wrote = %v, want %v", wrote, tc.wantWrite)
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != string(tc.data) {
				t.Errorf("content %q (err %v), want %q", got, err, tc.data)
			}
			after, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if after.Mode().Perm() != tc.mode {
				t.Errorf("mode %v, want %v", after.Mode().Perm(), tc.mode)
			}
			// An unchanged file must be the very same file (no rename over it),
			// so certwatcher sees no write and does not reload.
			if before != nil && !tc.wantWrite && !os.SameFile(before, after) {
				t.Error("unchanged file was replaced")
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				t.Errorf("dir holds %d entries, want only the target (temporary file left behind?)", len(entries))
			}
		})
	}
}

func TestWriteServingFiles(t *testing.T) {
	ca := mustCA(t, 24*time.Hour, testNow)
	a := mustServing(t, ca, []string{"webhook"}, nil, time.Hour, testNow)
	b := mustServing(t, ca, []string{"webhook"}, nil, time.Hour, testNow)
	dir := filepath.Join(t.TempDir(), "nested", "certs") // created on demand

	steps := []struct {
		name      string
		pair      *keyPair
		wantWrite bool
	}{
		{"first write", a, true},
		{"same pair again", a, false},
		{"renewed pair", b, true},
		{"renewed pair again", b, false},
	}
	for _, s := range steps {
		wrote, err := writeServingFiles(dir, s.pair.certPEM, s.pair.keyPEM)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if wrote != s.wantWrite {
			t.Errorf("%s: wrote = %v, want %v", s.name, wrote, s.wantWrite)
		}
		if !servingFilesUsable(dir, testNow) {
			t.Errorf("%s: files not usable", s.name)
		}
	}
	if info, err := os.Stat(filepath.Join(dir, KeyFileName)); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v (err %v), want 0600", info.Mode().Perm(), err)
	}
}

func TestServingFilesUsable(t *testing.T) {
	ca := mustCA(t, 24*time.Hour, testNow)
	a := mustServing(t, ca, []string{"webhook"}, nil, time.Hour, testNow)
	b := mustServing(t, ca, []string{"webhook"}, nil, time.Hour, testNow)

	tests := map[string]struct {
		cert, key []byte // nil: file absent
		now       time.Time
		want      bool
	}{
		"valid pair":       {cert: a.certPEM, key: a.keyPEM, now: testNow, want: true},
		"expired":          {cert: a.certPEM, key: a.keyPEM, now: testNow.Add(2 * time.Hour)},
		"mismatched pair":  {cert: a.certPEM, key: b.keyPEM, now: testNow},
		"missing key file": {cert: a.certPEM, now: testNow},
		"no files":         {now: testNow},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for file, data := range map[string][]byte{CertFileName: tc.cert, KeyFileName: tc.key} {
				if data != nil {
					if err := os.WriteFile(filepath.Join(dir, file), data, 0o600); err != nil {
						t.Fatal(err)
					}
				}
			}
			if got := servingFilesUsable(dir, tc.now); got != tc.want {
				t.Errorf("servingFilesUsable = %v, want %v", got, tc.want)
			}
		})
	}
}
