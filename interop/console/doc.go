// Package console holds the web console's real-browser test: headless
// Chromium, driven over the DevTools protocol, uses the console's pages
// against a cluster the way a person would and checks what they show.
// With CONSOLE_SCREENSHOTS=dir set it also writes a screenshot of each
// page into dir (docs/console/ holds the ones docs/console.md shows).
package console
