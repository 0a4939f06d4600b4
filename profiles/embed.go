// Package profiles holds the legal profiles shipped with the monitor, as YAML files a
// municipality can copy and edit; the Piúma profile is compiled into the binary from here.
package profiles

import "embed"

// Files are the shipped profiles (piuma.yaml, guarapari-2003.yaml, …).
//
//go:embed *.yaml
var Files embed.FS
