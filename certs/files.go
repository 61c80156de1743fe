package certs

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// File modes: the key is secret; the certificate is public.
const (
	certFileMode fs.FileMode = 0o644
	keyFileMode  fs.FileMode = 0o600
)

// writeServingFiles writes tls.crt and tls.key into dir, each only if its
// content changed, and reports whether anything was written.
//
// controller-runtime's certwatcher reloads on every write event, so skipping
// unchanged files avoids reloading the same certificate every check. The key
// is written first; certwatcher briefly sees a mismatched pair, fails to load
// it, keeps serving the old certificate, and loads the new pair on the
// certificate's write event that follows.
func writeServingFiles(dir string, certPEM, keyPEM []byte) (bool, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, fmt.Errorf("creating cert dir %s: %w", dir, err)
	}
	keyChanged, err := writeFileIfChanged(filepath.Join(dir, KeyFileName), keyPEM, keyFileMode)
	if err != nil {
		return false, err
	}
	certChanged, err := writeFileIfChanged(filepath.Join(dir, CertFileName), certPEM, certFileMode)
	if err != nil {
		return false, err
	}
	return keyChanged || certChanged, nil
}

// writeFileIfChanged replaces path with data unless it already holds exactly
// data, and reports whether it wrote. The write goes to a temporary file in
// the same directory which is then renamed over path, so a reader never sees
// a truncated file. An unchanged file only gets its mode corrected.
func writeFileIfChanged(path string, data []byte, mode fs.FileMode) (bool, error) {
	existing, err := os.ReadFile(path) //nolint:gosec // path is --cert-dir joined with a fixed file name, the operator's own setting
	switch {
	case err == nil && bytes.Equal(existing, data):
		if info, err := os.Stat(path); err == nil && info.Mode().Perm() != mode {
			if err := os.Chmod(path, mode); err != nil {
				return false, fmt.Errorf("setting mode of %s: %w", path, err)
			}
		}
		return false, nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return false, fmt.Errorf("reading %s: %w", path, err)
	}

	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return false, fmt.Errorf("creating temporary file for %s: %w", path, err)
	}
	tmpName := tmp.Name()
	committed := false
	defer func() {
		if !committed {
			_ = os.Remove(tmpName)
		}
	}()
	// Set the mode before any secret byte is written.
	if err := tmp.Chmod(mode); err != nil {
		_ = tmp.Close()
		return false, fmt.Errorf("setting mode of %s: %w", tmpName, err)
	}
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return false, fmt.Errorf("writing %s: %w", tmpName, err)
	}
	// Sync so that after a crash the renamed file is complete, not empty.
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return false, fmt.Errorf("syncing %s: %w", tmpName, err)
	}
	if err := tmp.Close(); err != nil {
		return false, fmt.Errorf("closing %s: %w", tmpName, err)
	}
	if err := os.Rename(tmpName, path); err != nil {
		return false, fmt.Errorf("renaming %s to %s: %w", tmpName, path, err)
	}
	committed = true
	return true, nil
}

// servingFilesUsable reports whether dir holds a matching, unexpired
// certificate and key, i.e. whether the webhook server has something it can
// keep serving if we decide not to replace it.
func servingFilesUsable(dir string, now time.Time) bool {
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, CertFileName), filepath.Join(dir, KeyFileName))
	if err != nil || len(pair.Certificate) == 0 {
		return false
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	return err == nil && now.Before(leaf.NotAfter)
}
