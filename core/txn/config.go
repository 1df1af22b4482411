package txn

import (
	"time"

	"github.com/gregorbroker/gregor/core/config"
)

// ConfigFrom is the coordinator's configuration from the broker's.
func ConfigFrom(c config.Config) Config {
	return Config{
		MaxTimeout:         millis(c.Transactions.MaxTimeoutMs),
		AbortCheckInterval: millis(c.Transactions.AbortTimedOutCheckIntervalMs),
		Sync:               c.Log.Durability == config.DurabilityFsync,
		IDExpiration:       millis(c.Transactions.TransactionalIDExpirationMs),
	}
}

func millis(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
