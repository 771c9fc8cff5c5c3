package main

import (
	"context"
	"errors"
)

// errOursUnavailable is returned until our producer and consumer packages
// exist; the driver then goes here, behind the same interface.
var errOursUnavailable = errors.New("-client ours: our producer/consumer are not available yet")

func newOursDriver(ctx context.Context, cfg driverConfig) (driver, error) {
	return nil, errOursUnavailable
}
