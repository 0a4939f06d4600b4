// Package web holds the control-room dashboard's assets, embedded in the monitor binary so that
// nothing is fetched from a CDN at run time.
package web

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed static
var files embed.FS

// Handler serves the dashboard.
func Handler() http.Handler {
	sub, err := fs.Sub(files, "static")
	if err != nil {
		panic(err)
	}
	return http.FileServerFS(sub)
}
