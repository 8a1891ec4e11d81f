package store

import "context"

// MigrateTo brings the schema up to version only (for tests of a migration over older data).
func (db *DB) MigrateTo(ctx context.Context, version int64) error {
	p, err := db.migrations(ctx)
	if err != nil {
		return err
	}
	_, err = p.UpTo(ctx, version)
	return err
}
