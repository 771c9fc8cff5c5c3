//go:build race

package hostile_test

// raceBuild: the race detector makes each request several times dearer.
const raceBuild = true
