package console

import (
	"context"
	"net/http"
)

type userKey struct{}

// userOf returns the signed-in user of a request, "" without login.
func userOf(r *http.Request) string {
	u, _ := r.Context().Value(userKey{}).(string)
	return u
}

var _ = context.Background
