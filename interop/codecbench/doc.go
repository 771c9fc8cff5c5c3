// Package codecbench holds side-by-side benchmarks of this module's wire
// codec and the official Go client's (see ../README.md). It has no API;
// everything is in its _test.go files.
package codecbench
