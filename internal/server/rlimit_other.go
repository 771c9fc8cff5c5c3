//go:build !unix

package server

func openReserve() int { return -1 }
func closeReserve(int) {}
func fdLimit() int     { return 0 }
