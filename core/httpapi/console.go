package httpapi

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

// consoleFiles is the built web console (web/console, built with
// `make console` into core/httpapi/console). It is checked in so that a
// plain `go build` serves it; it loads nothing from other hosts.
//
//go:embed all:console
var consoleFiles embed.FS

// consoleRoutes serves the console at /console/ and sends / there. A path
// that is no file is a page of the console's own router, answered with
// index.html.
func consoleRoutes(mux *http.ServeMux) {
	root, err := fs.Sub(consoleFiles, "console")
	if err != nil {
		panic(err) // the embed pattern guarantees the directory
	}
	files := http.FileServerFS(root)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/console/", http.StatusFound)
	})
	mux.Handle("GET /console/", http.StripPrefix("/console", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(path.Clean(r.URL.Path), "/")
		if name != "" {
			if st, err := fs.Stat(root, name); err != nil || st.IsDir() {
				name = ""
			}
		}
		if name == "" {
			serveIndex(w, root)
			return
		}
		if strings.HasPrefix(name, "assets/") {
			// Built asset names carry a content hash.
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		}
		setSecurityHeaders(w)
		files.ServeHTTP(w, r)
	})))
}

func serveIndex(w http.ResponseWriter, root fs.FS) {
	b, err := fs.ReadFile(root, "index.html")
	if err != nil {
		writeJSONError(w, http.StatusNotFound, "the console was not built into this binary: run `make console` and rebuild")
		return
	}
	setSecurityHeaders(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(b)
}

// setSecurityHeaders keeps the console to its own origin.
func setSecurityHeaders(w http.ResponseWriter) {
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
}
