// Package hostile holds tests of the in-repo broker under hostile
// clients, through its real request handlers; it has no code of its own.
package hostile
