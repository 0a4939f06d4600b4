package slm

import (
	"bytes"
	"errors"
)

var errFail = errors.New("fail")

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
