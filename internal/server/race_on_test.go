//go:build race

package server

// raceBuild: the race detector multiplies the cost of every connection
// the hostile tests open, on the attacker's side and the server's alike.
const raceBuild = true
